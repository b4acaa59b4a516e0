// Glob expansion with a cache keyed on directory stats: a glob's result can only change when an
// entry is added, removed or renamed in a directory it walks, and that changes the directory's
// mtime. A no-op build therefore stats a few directories instead of walking the tree, and loads
// fast-glob only when a directory changed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type DurabilityMark, markNow, trusted } from '../state/durability.ts';
import { writeFileAtomic } from '../util/fs.ts';

const GLOB_CACHE_FORMAT = 1;
const RACY_WINDOW_NS = 100_000_000n;

/** [relDir, mtimeNs or '' when absent, ino] */
type DirStamp = [string, string, string];
interface Entry {
  dirs: DirStamp[];
  files: string[];
}

/** Never part of a glob's result: dependencies and the engine's own state. */
const IGNORE = ['**/node_modules/**', '.rc1/**', '.git/**'];

const GLOB_CHARS = /[*?[\]{}()!]/;

export function isGlob(p: string): boolean {
  return GLOB_CHARS.test(p);
}

/** The static directory a glob starts from, and how deep it can go (Infinity with **). */
export function globBase(pattern: string): { base: string; depth: number } {
  const segs = pattern.split('/');
  let i = 0;
  while (i < segs.length - 1 && !GLOB_CHARS.test(segs[i]!)) i++;
  const base = segs.slice(0, i).join('/') || '.';
  const rest = segs.slice(i);
  const depth = rest.some((s) => s.includes('**')) ? Infinity : rest.length;
  return { base, depth };
}

/** A file matched by a glob whose real location (after symlinks) is outside the allowed roots. */
export class GlobEscape extends Error {
  constructor(
    readonly pattern: string,
    readonly file: string,
    readonly real: string,
  ) {
    super(`${file} (matched by ${pattern}) resolves outside the workspace, to ${real}`);
  }
}

export class GlobCache {
  private entries = new Map<string, Entry>();
  private dirty = false;
  misses = 0;
  /** The patterns expand() was asked for in this process (what the up-to-date stamp lists). */
  private readonly used = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly file: string,
  ) {
    try {
      const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as {
        format: number;
        entries: Record<string, Entry>;
      } & DurabilityMark;
      // Written in another boot while outputs were not durable: a power cut may have undone what
      // its folder stamps describe (state/durability.ts), so every glob is walked once.
      if (doc.format === GLOB_CACHE_FORMAT && trusted(doc)) this.entries = new Map(Object.entries(doc.entries));
    } catch {
      // first run or unreadable: every glob is walked once
    }
  }

  private stamp(rel: string, now: bigint): DirStamp | null {
    const st = fs.statSync(path.resolve(this.root, rel), { bigint: true, throwIfNoEntry: false });
    if (!st) return [rel, '', ''];
    if (st.mtimeNs + RACY_WINDOW_NS > now) return null; // racy: do not trust this stamp later
    return [rel, String(st.mtimeNs), String(st.ino)];
  }

  private valid(e: Entry): boolean {
    for (const [rel, mtime, ino] of e.dirs) {
      const st = fs.statSync(path.resolve(this.root, rel), { bigint: true, throwIfNoEntry: false });
      if (!st) {
        if (mtime !== '') return false;
      } else if (String(st.mtimeNs) !== mtime || String(st.ino) !== ino) return false;
    }
    return true;
  }

  /**
   * Workspace-relative files matching the pattern, sorted. When the glob is (re)walked, `escapes`
   * (if given) checks the matched files' real locations; a file that leads out is thrown as a
   * GlobEscape and the result is not cached, so it is checked again on every build until fixed.
   */
  async expand(
    pattern: string,
    escapes?: (files: readonly string[]) => { file: string; real: string } | null,
  ): Promise<string[]> {
    this.used.add(pattern);
    const cached = this.entries.get(pattern);
    if (cached && this.valid(cached)) return cached.files;
    this.misses++;
    const { default: fg } = await import('fast-glob');
    const now = BigInt(Date.now()) * 1_000_000n;
    const files = (
      await fg(pattern, { cwd: this.root, onlyFiles: true, dot: false, followSymbolicLinks: true, ignore: IGNORE })
    ).sort();
    const out = escapes?.(files);
    if (out) {
      if (this.entries.delete(pattern)) this.dirty = true;
      throw new GlobEscape(pattern, out.file, out.real);
    }
    const { base, depth } = globBase(pattern);
    const dirs = [base];
    if (depth > 1 && fs.existsSync(path.resolve(this.root, base))) {
      const sub = await fg(base === '.' ? '**' : `${fg.escapePath(base)}/**`, {
        cwd: this.root,
        onlyDirectories: true,
        dot: false,
        followSymbolicLinks: true,
        ignore: IGNORE,
        ...(Number.isFinite(depth) ? { deep: depth - 1 } : {}),
      });
      dirs.push(...sub);
    }
    const stamps: DirStamp[] = [];
    let trusted = true;
    for (const d of dirs.sort()) {
      const s = this.stamp(d, now);
      if (!s) {
        trusted = false;
        break;
      }
      stamps.push(s);
    }
    if (trusted) {
      this.entries.set(pattern, { dirs: stamps, files });
      this.dirty = true;
    } else if (this.entries.delete(pattern)) this.dirty = true;
    return files;
  }

  /**
   * The directories the results of this process's globs rest on → `mtime ino` ('-': absent), as
   * valid() compares them; null when one glob's result is not cached (a racy directory).
   */
  dirLines(): Map<string, string> | null {
    const out = new Map<string, string>();
    for (const pattern of this.used) {
      const e = this.entries.get(pattern);
      if (!e) return null;
      for (const [rel, mtime, ino] of e.dirs) out.set(rel, mtime === '' ? '-' : `${mtime} ${ino}`);
    }
    return out;
  }

  /** `durable`: whether everything the builds wrote is on disk now (its mark, state/durability.ts). */
  save(durable: boolean): void {
    if (!this.dirty) return;
    writeFileAtomic(
      this.file,
      JSON.stringify({ format: GLOB_CACHE_FORMAT, ...markNow(durable), entries: Object.fromEntries(this.entries) }),
    );
    this.dirty = false;
  }
}
