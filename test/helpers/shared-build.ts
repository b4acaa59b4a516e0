// Builds shared by slow tests (e.g. one trained dev policy: trainedPpoRig in
// test/integration/ppo-eval-rig.ts): a cache entry is a directory built once, under a lock, and
// named by a digest of everything its build reads, so any edit builds a new one. A lock file
// <entry>.lock makes parallel test files wait for one build instead of each building. It appears
// with its owner inside (pid, the process's start time, a random token: written to a file of the
// builder's own, then link()ed into place, which fails when a lock is there), so no lock is ever
// without an owner; one whose process is gone (or a pid-less one left by an older version, after a
// few seconds) is taken over by renaming it to a name of the taker's own and checking that what it
// moved is still the stale lock it judged; a builder removes the lock only while it holds its own
// token. A builder's directory <entry>.tmp-<pid> left by a process that is gone is removed by the
// next builder; a builder that finds the entry made by another (when two built) uses that one.
// The cache lives in $RC1_TEST_CACHE, else <tmpdir>/rc1-test-cache; entries of the same kind not
// used for a day are removed when a new one is built.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const POLL_MS = 500;
const BUILD_TIMEOUT_MS = 20 * 60_000;
const STALE_MS = 24 * 3600_000;
/** A lock without an owner in it (left by an older version of this file) is stale after this. */
const OWNERLESS_STALE_MS = 5_000;

/** The cache directory of shared test builds. */
export function testCacheDir(): string {
  return process.env.RC1_TEST_CACHE ?? path.join(os.tmpdir(), 'rc1-test-cache');
}

/** Directories no build source lives in: installed packages, Python's byte code, the engine's state. */
const NOT_SOURCES = new Set(['node_modules', '__pycache__', '.rc1']);

/**
 * sha256 over the files under `paths` (relative to root): each file's path, size and bytes, in path
 * order; node_modules/, __pycache__/ and .rc1/ below a path are left out.
 */
export function treeDigest(root: string, paths: readonly string[], extra: string): string {
  const h = createHash('sha256').update(extra);
  const files: string[] = [];
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(abs).sort()) if (!NOT_SOURCES.has(e)) walk(path.posix.join(rel, e));
    } else files.push(rel);
  };
  for (const p of paths) walk(p);
  for (const f of files.sort()) {
    const bytes = fs.readFileSync(path.join(root, f));
    h.update(`\0${f}\0${bytes.length}\0`).update(bytes);
  }
  return h.digest('hex');
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** When process `pid` started (clock ticks since boot, /proc/<pid>/stat), '-' where unknown: tells a reused pid apart. */
function startOf(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '-';
  } catch {
    return '-';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Owner {
  pid: number;
  start: string;
  token: string;
}

/** The owner written in a lock (a file; a directory holding `pid` from an older version), null when none or no lock. */
function readOwner(lock: string): { owner: Owner | null; mtimeMs: number } | null {
  const st = fs.statSync(lock, { throwIfNoEntry: false });
  if (!st) return null;
  let text: string;
  try {
    text = fs.readFileSync(st.isDirectory() ? path.join(lock, 'pid') : lock, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    if (!st.isDirectory()) return null; // released meanwhile
    text = ''; // an older version's lock directory without its pid (yet, or ever)
  }
  const [pid, start = '-', token = ''] = text.trim().split(' ');
  const n = Number(pid);
  return { owner: Number.isInteger(n) && n > 0 ? { pid: n, start, token } : null, mtimeMs: st.mtimeMs };
}

function stale(found: { owner: Owner | null; mtimeMs: number }): boolean {
  const { owner } = found;
  if (!owner) return Date.now() - found.mtimeMs > OWNERLESS_STALE_MS;
  if (!alive(owner.pid)) return true;
  const start = startOf(owner.pid);
  return owner.start !== '-' && start !== '-' && start !== owner.start;
}

const sameOwner = (a: Owner | null, b: Owner | null): boolean =>
  a === null ? b === null : b !== null && a.pid === b.pid && a.start === b.start && a.token === b.token;

const unique = (): string => `${process.pid}-${randomBytes(6).toString('hex')}`;

/** Takes the lock (true) or finds it taken (false): link() of a file holding `me` fails when a lock is there. */
function tryLock(lock: string, me: Owner): boolean {
  const mine = `${lock}.new-${unique()}`;
  fs.writeFileSync(mine, `${me.pid} ${me.start} ${me.token}\n`);
  try {
    fs.linkSync(mine, lock);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return false;
  } finally {
    fs.rmSync(mine, { force: true });
  }
}

/**
 * Takes a stale lock away: renames it to a name of our own (atomic; only one taker gets it), then
 * checks that what moved is the lock judged stale. When it is not (it was released and taken anew
 * in between), it is put back if the place is still free; if another took the place meanwhile, two
 * builders may run, which the entry's rename tolerates.
 */
function takeOver(lock: string, judged: { owner: Owner | null }): void {
  const moved = `${lock}.stale-${unique()}`;
  try {
    fs.renameSync(lock, moved);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // another taker or the owner was first
    throw e;
  }
  const now = readOwner(moved);
  if (now && !sameOwner(now.owner, judged.owner) && !stale(now)) {
    try {
      fs.linkSync(moved, lock);
    } catch {
      // the place was taken again meanwhile
    }
  }
  fs.rmSync(moved, { recursive: true, force: true });
}

/** Releases the lock only while it holds our token (never another builder's). */
function unlock(lock: string, me: Owner): void {
  const now = readOwner(lock);
  if (now && sameOwner(now.owner, me)) fs.rmSync(lock, { force: true });
}

/** Removes the builders' directories (`*.tmp-<pid>`) and takers' leftovers whose processes are gone. */
function reclaim(root: string): void {
  for (const e of fs.readdirSync(root)) {
    const m = /\.(?:tmp|new|stale)-(\d+)(?:-[0-9a-f]+)?$/.exec(e);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1])))
      fs.rmSync(path.join(root, e), { recursive: true, force: true });
  }
}

/**
 * The cache entry `name` (a directory), built by `build(dir)` under a lock if it is not there yet.
 * `build` fills `dir`; the entry appears (by rename) only once it is complete.
 */
export async function sharedEntry(
  name: string,
  build: (dir: string) => Promise<void>,
  root: string = testCacheDir(),
): Promise<string> {
  const entry = path.join(root, name);
  const lock = `${entry}.lock`;
  const me: Owner = { pid: process.pid, start: startOf(process.pid), token: randomBytes(8).toString('hex') };
  fs.mkdirSync(root, { recursive: true });
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  const used = (): string => {
    const now = new Date();
    fs.utimesSync(entry, now, now); // in use
    return entry;
  };
  for (;;) {
    if (fs.existsSync(entry)) return used();
    if (!tryLock(lock, me)) {
      const found = readOwner(lock);
      if (found === null) continue; // released meanwhile
      if (stale(found)) takeOver(lock, found);
      else if (Date.now() > deadline)
        throw new Error(
          `shared test build ${name}: still locked by pid ${found.owner?.pid ?? '(none)'} after ${BUILD_TIMEOUT_MS / 60_000} min (${lock})`,
        );
      else await sleep(POLL_MS);
      continue;
    }
    try {
      if (fs.existsSync(entry)) return used();
      reclaim(root);
      const tmp = `${entry}.tmp-${process.pid}`;
      fs.rmSync(tmp, { recursive: true, force: true });
      try {
        await build(tmp);
        fs.renameSync(tmp, entry);
      } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        // Another builder (one that took this lock over by mistake) made the entry first: use it.
        if (fs.existsSync(entry) && ['ENOTEMPTY', 'EEXIST'].includes((e as NodeJS.ErrnoException).code ?? ''))
          return used();
        throw e;
      }
      // Entries of the same kind (older code) unused for a day go; locks and builds in progress stay.
      const kind = `${name.split('-')[0]!}-`;
      for (const e of fs.readdirSync(root)) {
        const abs = path.join(root, e);
        if (e === name || !e.startsWith(kind) || /\.(lock|tmp-|new-|stale-)/.test(e)) continue;
        if (Date.now() - fs.statSync(abs).mtimeMs > STALE_MS) fs.rmSync(abs, { recursive: true, force: true });
      }
      return entry;
    } finally {
      unlock(lock, me);
    }
  }
}
