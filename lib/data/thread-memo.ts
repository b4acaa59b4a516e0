// One read of some files kept for the next caller in the same thread. The compiled rules share
// their library code (esbuild's shared chunks), so the rules one worker thread runs share these
// module-level memos: shadow_set then seed_pool load the same raw data, balanced_pool then
// difficulty_report read the same metrics. A memo holds its last read only, deeply frozen (a rule
// that changed it would change what the next rule sees), and answers only while every file has
// the stat it had before it was read (device, inode, size, mtime and ctime in ns).
import { statSync } from 'node:fs';

/** Each file's identity and stat; null when one cannot be stat'ed (then nothing is kept). */
export function filesStamp(paths: readonly string[]): string | null {
  const parts: string[] = [];
  for (const p of paths) {
    const st = statSync(p, { bigint: true, throwIfNoEntry: false });
    if (!st) return null;
    parts.push(`${p}\0${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
  }
  return parts.join('\n');
}

/** Makes a value and everything it holds read-only. */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export class LastRead<T> {
  private last: { key: string; stamp: string; value: T } | null = null;

  /**
   * What `read` gives for `files` (and whatever else `key` names), frozen: the kept value when the
   * key is the last one's and every file is as it was; else a new read, kept (a failed read keeps
   * nothing). The stat is taken before reading, so a file changed during the read reads again.
   */
  async get(key: string, files: readonly string[], read: () => Promise<T>): Promise<T> {
    const stamp = filesStamp(files);
    const last = this.last;
    if (stamp !== null && last !== null && last.key === key && last.stamp === stamp) return last.value;
    this.last = null;
    const value = deepFreeze(await read());
    if (stamp !== null) this.last = { key, stamp, value };
    return value;
  }
}
