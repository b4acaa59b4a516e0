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
// the timestamp granularity of the record are "racy" (as in the stat cache): a later in-place
// write in the same tick would leave their stat as recorded. A racy manifest or sidecar is listed
// with the sha256 of its content, which the next check reads back and compares (a changing build
// rewrites the manifest and a few sidecars: those few are read, not all); a racy sidecar
// directory records no state at all, and the next build verifies every sidecar by content.
// The state key's trace stat can also be the one a build started with (manifestUnchangedSince):
// the sidecars on disk are then those of the records it started with, and the build re-derives
// only the sidecars of the targets it changed (manifest.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../hash/hash-file.ts';
import { type DurabilityMark, markNow, trusted } from '../state/durability.ts';
import { readJsonOrNull, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

const FORMAT = 3;
interface State extends DurabilityMark {
  format: number;
  key: string;
  dirs: string[];
  digest: string;
  /** Files written within their timestamp tick of the record: path → sha256 of their content. */
  verify: Record<string, string>;
}

export interface StateWorkspace {
  root: string;
  stateDir: string;
  profile: string;
  pipeline: { targets: ReadonlyMap<string, unknown>; manifestDir: string };
  trace: { file: string };
  /** Whether everything the builds wrote is on disk (the state's mark: state/durability.ts); absent: not known. */
  stat?: { readonly durable: boolean };
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

/** The trace log's stat as the state key holds it: taken before a build writes, for manifestUnchangedSince(). */
export function traceStatLine(ws: StateWorkspace): string {
  return statLine(ws, path.relative(ws.root, ws.trace.file)).line;
}

function stateKey(ws: StateWorkspace, traceLine = traceStatLine(ws)): string {
  return sha256Hex(
    `${traceLine}${ws.profile}\0${ws.pipeline.manifestDir}\0${[...ws.pipeline.targets.keys()].join('\0')}`,
  );
}

function manifestRel(ws: StateWorkspace): string {
  return path.posix.join(ws.pipeline.manifestDir, 'manifest.json');
}

/** True when the manifest and the sidecar directories are exactly as after the last full check. */
export function manifestUnchanged(ws: StateWorkspace): boolean {
  return manifestUnchangedSince(ws, traceStatLine(ws));
}

/**
 * True when the last full check was recorded for the trace log as `traceLine` shows it (its stat
 * when this build started, before it wrote) and the manifest and sidecar directories are still as
 * that check left them: the sidecars on disk are then exactly those of the records the build
 * started with.
 */
export function manifestUnchangedSince(ws: StateWorkspace, traceLine: string): boolean {
  const s = readJsonOrNull<State>(stateFile(ws));
  if (!s || s.format !== FORMAT || !trusted(s) || s.key !== stateKey(ws, traceLine) || !Array.isArray(s.dirs))
    return false;
  let text = '';
  for (const rel of [manifestRel(ws), ...s.dirs]) text += statLine(ws, rel).line;
  if (sha256Hex(text) !== s.digest || typeof s.verify !== 'object' || s.verify === null) return false;
  for (const [rel, sha] of Object.entries(s.verify)) {
    let body: Buffer;
    try {
      body = fs.readFileSync(path.join(ws.root, rel));
    } catch {
      return false;
    }
    if (sha256Hex(body) !== sha) return false;
  }
  // Verified, and now past their timestamp tick (a later write would change their stat): the
  // next checks need not read them again.
  const now = BigInt(Date.now()) * 1_000_000n;
  const rels = Object.keys(s.verify);
  if (rels.length && rels.every((rel) => !racyAt(statLine(ws, rel), now))) {
    try {
      writeFileAtomic(stateFile(ws), JSON.stringify({ ...s, verify: {} } satisfies State));
    } catch {
      /* only a saving: the next check verifies them again */
    }
  }
  return true;
}

/**
 * The manifest and the sidecar folders the last full check recorded, when that record is of this
 * format, for the trace as it is now, and holds no file still to verify (the next build would
 * then read nothing of them); else null. What the up-to-date stamp lists of the manifest.
 */
export function checkedManifestPaths(ws: StateWorkspace): string[] | null {
  const s = readJsonOrNull<State>(stateFile(ws));
  if (!s || s.format !== FORMAT || !trusted(s) || s.key !== stateKey(ws) || !Array.isArray(s.dirs)) return null;
  if (typeof s.verify !== 'object' || s.verify === null || Object.keys(s.verify).length > 0) return null;
  return [manifestRel(ws), ...s.dirs];
}

/** Written within the timestamp granularity before `now`: a same-tick write would not show. */
function racyAt(s: { lastNs: bigint; coarse: boolean }, now: bigint): boolean {
  return s.lastNs + (s.coarse ? 2_000_000_000n : 100_000_000n) > now;
}

/** Forget the recorded state, so the next build checks the manifest and every sidecar by content. */
export function forgetManifestState(ws: Pick<StateWorkspace, 'stateDir'>): void {
  fs.rmSync(path.join(ws.stateDir, 'manifest-state.json'), { force: true });
}

/**
 * Record the state after a check. `written`: the manifest and sidecar paths this check wrote,
 * with their content when the caller has it (else it is read back if needed).
 */
export function recordManifestState(ws: StateWorkspace, written: ReadonlyMap<string, string | null>): void {
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
  const isRacy = (s: { lastNs: bigint; coarse: boolean }): boolean => racyAt(s, now);
  let text = '';
  let racyDir = false;
  const verify: Record<string, string> = {};
  const mrel = manifestRel(ws);
  const racyFile = (rel: string): void => {
    let body = written.get(rel) ?? null;
    if (body === null) {
      try {
        body = fs.readFileSync(path.join(ws.root, rel), 'utf8');
      } catch {
        return; // absent: its stat line says so ('-')
      }
    }
    verify[rel] = sha256Hex(body);
  };
  for (const rel of [mrel, ...dirs]) {
    const s = statLine(ws, rel);
    if (isRacy(s)) {
      if (rel === mrel) racyFile(rel);
      else racyDir = true;
    }
    text += s.line;
  }
  // A sidecar written just now could still be rewritten in place within its timestamp tick.
  if (!racyDir) for (const rel of written.keys()) if (rel !== mrel && isRacy(statLine(ws, rel))) racyFile(rel);
  engineWrite(
    'the manifest state',
    file,
    () => {
      if (racyDir) fs.rmSync(file, { force: true });
      else
        writeFileAtomic(
          file,
          JSON.stringify({
            format: FORMAT,
            ...markNow(ws.stat?.durable ?? false),
            key: stateKey(ws),
            dirs,
            digest: sha256Hex(text),
            verify,
          } satisfies State),
        );
    },
    ws.root,
  );
}
