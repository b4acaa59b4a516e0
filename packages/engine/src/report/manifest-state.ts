// Keeps the every-build manifest check off the no-op's critical path. After the manifest and
// sidecars were written or verified, .rc1/manifest-state.json records a digest of the (size,
// mtime, inode, ctime) of the manifest and of every sidecar directory (a directory's stat changes
// when an entry is added, removed or replaced by rename), under a key made of the trace log's own
// stat, the profile, the manifest directory and the pipeline's target names. A later build whose
// key and digest match would derive the very same files, so it skips rebuilding and re-reading
// them: a handful of stat calls instead of ~100 ms of JSON and 1 000 reads for 1 000 targets.
// A new trace line, a deleted, added or renamed-over sidecar, or a touched manifest takes the
// full path. A sidecar rewritten in place (same inode) is not seen here: `audit` reports it and
// drops this state (forgetManifestState), so the next build rewrites it. Files written within
// the timestamp granularity of the record are "racy" (as in the stat cache): then no state is
// recorded and the next build verifies by content.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../hash/hash-file.ts';
import { readJsonOrNull, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

const FORMAT = 2;
interface State {
  format: number;
  key: string;
  dirs: string[];
  digest: string;
}

export interface StateWorkspace {
  root: string;
  stateDir: string;
  profile: string;
  pipeline: { targets: ReadonlyMap<string, unknown>; manifestDir: string };
  trace: { file: string };
}

function stateFile(ws: StateWorkspace): string {
  return path.join(ws.stateDir, 'manifest-state.json');
}

function statLine(ws: StateWorkspace, rel: string): { line: string; lastNs: bigint; coarse: boolean } {
  const st = fs.lstatSync(path.join(ws.root, rel), { bigint: true, throwIfNoEntry: false });
  if (!st) return { line: `-\n`, lastNs: 0n, coarse: false };
  return {
    line: `${st.size} ${st.mtimeNs} ${st.ino} ${st.ctimeNs}\n`,
    lastNs: st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs,
    coarse: st.mtimeNs % 1_000_000_000n === 0n,
  };
}

function stateKey(ws: StateWorkspace): string {
  return sha256Hex(
    `${statLine(ws, path.relative(ws.root, ws.trace.file)).line}${ws.profile}\0${ws.pipeline.manifestDir}\0${[...ws.pipeline.targets.keys()].join('\0')}`,
  );
}

function manifestRel(ws: StateWorkspace): string {
  return path.posix.join(ws.pipeline.manifestDir, 'manifest.json');
}

/** True when the manifest and the sidecar directories are exactly as after the last full check. */
export function manifestUnchanged(ws: StateWorkspace): boolean {
  const s = readJsonOrNull<State>(stateFile(ws));
  if (!s || s.format !== FORMAT || s.key !== stateKey(ws) || !Array.isArray(s.dirs)) return false;
  let text = '';
  for (const rel of [manifestRel(ws), ...s.dirs]) text += statLine(ws, rel).line;
  return sha256Hex(text) === s.digest;
}

/** Forget the recorded state, so the next build checks the manifest and every sidecar by content. */
export function forgetManifestState(ws: Pick<StateWorkspace, 'stateDir'>): void {
  fs.rmSync(path.join(ws.stateDir, 'manifest-state.json'), { force: true });
}

/** Record the state after a full check. */
export function recordManifestState(ws: StateWorkspace, sidecars: readonly string[]): void {
  const file = stateFile(ws);
  const dirs: string[] = [];
  const walk = (rel: string): void => {
    dirs.push(rel);
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(path.join(ws.root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(path.posix.join(rel, e.name));
  };
  walk(path.posix.join(ws.pipeline.manifestDir, 'sha256'));
  const now = BigInt(Date.now()) * 1_000_000n;
  let text = '';
  let racy = false;
  for (const rel of [manifestRel(ws), ...dirs]) {
    const s = statLine(ws, rel);
    if (s.lastNs + (s.coarse ? 2_000_000_000n : 100_000_000n) > now) racy = true;
    text += s.line;
  }
  // A sidecar written just now could still be rewritten in place within its timestamp tick.
  for (const rel of sidecars) {
    if (racy) break;
    const s = statLine(ws, rel);
    if (s.lastNs + (s.coarse ? 2_000_000_000n : 100_000_000n) > now) racy = true;
  }
  engineWrite(
    'the manifest state',
    file,
    () => {
      if (racy) fs.rmSync(file, { force: true });
      else
        writeFileAtomic(
          file,
          JSON.stringify({ format: FORMAT, key: stateKey(ws), dirs, digest: sha256Hex(text) } satisfies State),
        );
    },
    ws.root,
  );
}
