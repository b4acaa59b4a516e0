// The up-to-date stamp (.rc1/uptodate.json): lets a repeated no-op build answer without loading
// the engine, the pipeline or the trace.
//
// A build run in-process, that ended with every planned target up to date and nothing failed,
// writes down what its decisions rested on. A later command line that is the same (same
// arguments, working directory, Node.js, engine files and environment) checks the stamp in
// bin/rc1-build.js before dist/cli.js is loaded (cli/fast-noop.ts). If every file and directory
// it lists is still as recorded, the build it would run is the same no-op. It then records the
// run in the history and prints the same line; anything else falls through to the full build.
//
// What the decisions rested on, and how each is listed:
// - every file the stat cache was asked for (sources, outputs, rule code closures, config files,
//   the engine's own code): its (size, mtime ns, inode, ctime ns) as the decision saw it, or its
//   absence. A stat cache entry that was racy (hashed within its timestamp tick) means no stamp.
// - every directory a glob's cached result depends on (its mtime and inode, as the glob cache keeps them);
// - every directory inside a directory output (an entry added or removed changes its mtime); one
//   written within its timestamp tick means no stamp;
// - every directory above those paths (device, inode and kind: a folder swapped for a symlink);
// - the engine state a build reads before it decides: the trace log, the salt, the journal of an
//   interrupted commit, the temp folder, the compiled-module folder, the manifest's state file, the
//   manifest and its sidecar folders (any write to them renames a new file into place or happens
//   under the workspace lock, and both change what is listed);
// - the environment variables the engine and the planned targets read (RC1_*, RUN_MODE,
//   NODE_OPTIONS, each target's env): salted sha256 hashes, never values.
// Every command that takes the workspace lock removes the stamp first (workspace.ts), so a build
// that changes anything never leaves the stamp of the state before it. Like the stat cache it is
// marked with its boot and whether the builds' outputs were durable (state/durability.ts): one
// written before they were is not trusted in a later boot.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listTree, writeFileAtomic } from '../util/fs.ts';
import { type DurabilityMark, markNow, trusted } from './durability.ts';

export const STAMP_FILE = 'uptodate.json';
const STAMP_FORMAT = 1;
/** Filesystems with nanosecond mtimes stamp with a coarse clock (as the stat cache). */
const RACY_NS = 100_000_000n;
const RACY_COARSE_NS = 2_000_000_000n;

/** What the fast path appends to the run history, and the line it prints. */
export interface StampRun {
  command: string;
  asked?: string[];
  profile: string;
  pipeline?: string;
  keep: number;
  paramsHash: string;
  upToDate: number;
}

export interface Stamp extends DurabilityMark {
  format: number;
  root: string;
  cwd: string;
  argv: string[];
  node: string;
  /** Engine file (absolute) → its stat line. */
  engine: [string, string][];
  /** Variable → salted sha256 of its value (null: unset). Every RC1_* variable set then is listed. */
  env: Record<string, string | null>;
  /** Workspace files (relative, or absolute outside it) → stat line, '-' when absent. */
  files: [string, string][];
  /** Directories → `mtime ino`, '-' when absent. */
  dirs: [string, string][];
  /** Directories above every listed path → `dev ino kind`. */
  above: [string, string][];
  /** Engine state files and folders (relative to the root) → lstat line, '-' when absent. */
  state: [string, string][];
  run: StampRun;
}

/** `size mtimeNs ino ctimeNs` of a regular file (stat follows symlinks), '-' otherwise. */
export function fileLine(abs: string): string {
  const st = fs.statSync(abs, { bigint: true, throwIfNoEntry: false });
  return st?.isFile() ? `${st.size} ${st.mtimeNs} ${st.ino} ${st.ctimeNs}` : '-';
}

function dirLine(abs: string): string {
  const st = fs.statSync(abs, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.mtimeNs} ${st.ino}` : '-';
}

function kindOf(st: fs.BigIntStats): string {
  return st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : st.isFile() ? 'f' : 'o';
}

function aboveLine(abs: string): string {
  const st = fs.lstatSync(abs, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.dev} ${st.ino} ${kindOf(st)}` : '-';
}

export function stateLine(abs: string): string {
  const st = fs.lstatSync(abs, { bigint: true, throwIfNoEntry: false });
  return st ? `${kindOf(st)} ${st.size} ${st.mtimeNs} ${st.ino} ${st.ctimeNs}` : '-';
}

function racy(mtimeNs: bigint, nowNs: bigint): boolean {
  return mtimeNs + (mtimeNs % 1_000_000_000n === 0n ? RACY_COARSE_NS : RACY_NS) > nowNs;
}

/** RC1_* variables that change what is printed about a build, not what it decides (bin/rc1-build.js reads them). */
const DIAGNOSTIC_ENV = new Set(['RC1_DEBUG', 'RC1_NO_FAST_NOOP', 'RC1_NO_SERVER']);

/**
 * sha256 of the salt, the name and the value (null: unset). node:crypto is loaded only for a value
 * that is set (the fast path's require of it costs ~3 ms), through process.getBuiltinModule
 * (Node.js ≥ 20.16; before it, throws: a stamp is written and read only where no listed variable
 * is set).
 */
export function envHash(salt: string, name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  const crypto = process.getBuiltinModule?.('node:crypto');
  if (!crypto) throw new Error('process.getBuiltinModule is missing (Node.js < 20.16)');
  return crypto.createHash('sha256').update(`${salt}\0${name}\0${value}`).digest('hex');
}

/** The variables a stamp lists: every RC1_* one set, the profile's, NODE_OPTIONS and the targets' own. */
export function stampEnv(salt: string, env: NodeJS.ProcessEnv, targetEnv: Iterable<string>): Stamp['env'] {
  const names = new Set<string>(['RUN_MODE', 'NODE_OPTIONS', ...targetEnv]);
  for (const k of Object.keys(env)) if (k.startsWith('RC1_') && !DIAGNOSTIC_ENV.has(k)) names.add(k);
  const out: Stamp['env'] = {};
  for (const n of [...names].sort()) out[n] = envHash(salt, n, env[n]);
  return out;
}

/**
 * The engine's state files and folders a build reads before deciding (relative to the root), with
 * the manifest's paths; null when the manifest has no clean record of its last check.
 */
function stateEntries(stateDir: string, root: string, manifest: string[] | null): string[] | null {
  if (!manifest) return null; // the next build checks the manifest (no stamp)
  const rel = (f: string): string => path.relative(root, path.join(stateDir, f));
  return [...['trace.log', 'salt', 'journal', 'tmp', 'compiled', 'manifest-state.json'].map(rel), ...manifest];
}

/** Every directory under (and including) a directory output, relative to the root; null when absent or unreadable. */
function treeDirs(root: string, rel: string): string[] | null {
  const out: string[] = [];
  const walk = (d: string): void => {
    out.push(d);
    for (const e of fs.readdirSync(path.join(root, d), { withFileTypes: true }))
      if (e.isDirectory()) walk(`${d}/${e.name}`);
  };
  try {
    walk(rel);
  } catch {
    return null;
  }
  return out;
}

export interface StampWorkspace {
  root: string;
  stateDir: string;
  salt: string;
  /** The files the stat cache was asked for in this process: path → the stat line it used ('-': absent); null when one was racy. */
  statLines(): Map<string, string> | null;
  /** The directories the cached globs of this process rest on; null when one glob's result was not cached. */
  globDirs(): Map<string, string> | null;
  /** The manifest and its sidecar folders as its last full check recorded them (manifest-state.ts), or null. */
  manifestPaths(): string[] | null;
  /** Directory outputs of the planned targets, with the files and links their records list. */
  dirOutputs: { path: string; files: string[]; links: string[] }[];
  /** Paths of the planned targets' file outputs (checked after the other files: rarely the ones edited). */
  fileOutputs: ReadonlySet<string>;
  /** Whether everything the builds wrote is on disk (the stamp's mark: state/durability.ts). */
  durable: boolean;
}

/**
 * Writes the stamp after an up-to-date build; returns false (and leaves no stamp) when what the
 * build decided on cannot be listed so that a later check is sound: a racy file, a glob not cached,
 * a directory written within its tick, a file changed since the decision, a manifest to verify.
 */
export function writeStamp(
  ws: StampWorkspace,
  o: {
    argv: string[];
    cwd: string;
    env: NodeJS.ProcessEnv;
    targetEnv: Iterable<string>;
    engine: string[];
    run: StampRun;
  },
): boolean {
  const file = path.join(ws.stateDir, STAMP_FILE);
  fs.rmSync(file, { force: true });
  const lines = ws.statLines();
  const globs = ws.globDirs();
  const state = stateEntries(ws.stateDir, ws.root, ws.manifestPaths());
  if (!lines || !globs || !state) return false;
  const now = BigInt(Date.now()) * 1_000_000n;
  // The lines are the stats the decisions saw (the stat cache's entries), not taken now: a file
  // edited since then no longer matches its line, and the next build decides in full. The files
  // most likely to be edited are compared first, so that a check that fails fails early: inputs
  // and code, the most recently modified first; then the outputs.
  const keyed = [...lines].map(([rel, line]) => ({
    rel,
    line,
    output: ws.fileOutputs.has(rel),
    mtime: line === '-' ? 0 : Number(line.split(' ')[1]), // an order, not a comparison: a double will do
  }));
  keyed.sort((a, b) =>
    a.output !== b.output
      ? a.output
        ? 1
        : -1
      : a.mtime > b.mtime
        ? -1
        : a.mtime < b.mtime
          ? 1
          : a.rel < b.rel
            ? -1
            : a.rel > b.rel
              ? 1
              : 0,
  );
  const files = keyed.map((k): [string, string] => [k.rel, k.line]);
  const dirs = new Map(globs);
  for (const out of ws.dirOutputs) {
    // The tree as the decision saw it: the record's files and links (each file's stat is among
    // the lines). Its directories' stats stand for that listing: taken before the listing is
    // compared with the record, and compared again after it (below), so no entry came between.
    const tree = treeDirs(ws.root, out.path);
    if (!tree) return false;
    for (const d of tree) {
      const st = fs.statSync(path.resolve(ws.root, d), { bigint: true });
      if (racy(st.mtimeNs, now)) return false;
      dirs.set(d, `${st.mtimeNs} ${st.ino}`);
    }
    let listing: { files: string[]; links: [string, string][] };
    try {
      listing = listTree(path.resolve(ws.root, out.path));
    } catch {
      return false;
    }
    if (
      listing.files.join('\0') !== [...out.files].sort().join('\0') ||
      listing.links.map(([l]) => l).join('\0') !== [...out.links].sort().join('\0')
    )
      return false;
  }
  for (const [d, line] of dirs) if (dirLine(path.resolve(ws.root, d)) !== line) return false;
  const above = new Map<string, string>();
  const climb = (abs: string): void => {
    for (let d = abs; !above.has(d); d = path.dirname(d)) {
      above.set(d, aboveLine(d));
      if (path.dirname(d) === d) break;
    }
  };
  // Each folder once: ~1 000 files lie in a handful of them.
  const parents = new Set<string>();
  for (const [rel] of files) parents.add(path.dirname(rel));
  for (const [d] of dirs) parents.add(path.dirname(d));
  for (const rel of state) parents.add(path.dirname(rel));
  for (const p of parents) climb(path.resolve(ws.root, p));
  const stamp: Stamp = {
    format: STAMP_FORMAT,
    ...markNow(ws.durable),
    root: ws.root,
    cwd: o.cwd,
    argv: o.argv,
    node: `${process.version} ${process.execPath}`,
    engine: o.engine.map((f) => [f, stateLine(f)]),
    env: stampEnv(ws.salt, o.env, o.targetEnv),
    files,
    dirs: [...dirs],
    above: [...above],
    state: state.map((rel) => [rel, stateLine(path.resolve(ws.root, rel))]),
    run: o.run,
  };
  writeFileAtomic(file, JSON.stringify(stamp));
  return true;
}

/** Removes the stamp: called whenever a command takes the workspace lock. */
export function forgetStamp(stateDir: string): void {
  fs.rmSync(path.join(stateDir, STAMP_FILE), { force: true });
}

/** The stamp and its text (to compare with a later read), or null when there is none or it is not this format. */
export function readStamp(stateDir: string): { stamp: Stamp; text: string } | null {
  try {
    const text = fs.readFileSync(path.join(stateDir, STAMP_FILE), 'utf8');
    const stamp = JSON.parse(text) as Stamp;
    return stamp && stamp.format === STAMP_FORMAT ? { stamp, text } : null;
  } catch {
    return null;
  }
}

/** The stamp's text as it is now ('' when none). */
export function stampText(stateDir: string): string {
  try {
    return fs.readFileSync(path.join(stateDir, STAMP_FILE), 'utf8');
  } catch {
    return '';
  }
}

/** Why the stamp does not answer for this command line (null: it matches): what a change looks like. */
export function stampMismatch(
  s: Stamp,
  o: {
    root: string;
    cwd: string;
    argv: readonly string[];
    env: NodeJS.ProcessEnv;
    salt: string;
    /** A file of the engine that is checking (its dist/noop.cjs): the stamp must be this engine's. */
    engineFile?: string;
  },
): string | null {
  if (s.root !== o.root || s.cwd !== o.cwd) return 'another workspace or working directory';
  if (!trusted(s)) return 'written in another boot, before the outputs it lists were durable';
  if (o.engineFile !== undefined && !s.engine.some(([f]) => f === o.engineFile)) return 'another engine';
  if (s.argv.length !== o.argv.length || s.argv.some((a, i) => a !== o.argv[i])) return 'another command line';
  if (s.node !== `${process.version} ${process.execPath}`) return 'another Node.js';
  for (const [f, line] of s.engine) if (stateLine(f) !== line) return `engine file ${f}`;
  for (const k of Object.keys(o.env))
    if (k.startsWith('RC1_') && !DIAGNOSTIC_ENV.has(k) && !Object.hasOwn(s.env, k)) return `variable ${k}`;
  for (const [n, h] of Object.entries(s.env)) if (envHash(o.salt, n, o.env[n]) !== h) return `variable ${n}`;
  return null;
}

/**
 * The first listed path that is no longer as recorded, or null when all are. `firstFiles`: only
 * the state and the first that many files (the inputs edited last come first): a quick look that
 * spares a changed workspace the rest.
 */
export function changedOnDisk(s: Stamp, firstFiles?: number): string | null {
  const abs = (rel: string): string => path.resolve(s.root, rel);
  for (const [rel, line] of s.state) if (stateLine(abs(rel)) !== line) return rel;
  const n = Math.min(firstFiles ?? s.files.length, s.files.length);
  for (let i = 0; i < n; i++) if (fileLine(abs(s.files[i]![0])) !== s.files[i]![1]) return s.files[i]![0];
  if (firstFiles !== undefined) return null;
  for (const [rel, line] of s.dirs) if (dirLine(abs(rel)) !== line) return rel;
  for (const [d, line] of s.above) if (aboveLine(d) !== line) return d;
  return null;
}
