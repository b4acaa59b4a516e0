// Builds shared by slow tests (e.g. one trained dev policy: trainedPpoRig in
// test/integration/ppo-eval-rig.ts): a cache entry is a directory built once, under a lock, and
// named by a digest of everything its build reads, so any edit builds a new one. A lock directory
// (holding the builder's pid) makes parallel test files wait for one build instead of each
// building; a lock whose process is gone is taken over. The cache lives in $RC1_TEST_CACHE, else
// <tmpdir>/rc1-test-cache; entries of the same kind not used for a day are removed when a new one
// is built.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const POLL_MS = 500;
const BUILD_TIMEOUT_MS = 20 * 60_000;
const STALE_MS = 24 * 3600_000;

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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
  fs.mkdirSync(root, { recursive: true });
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  for (;;) {
    if (fs.existsSync(entry)) {
      const now = new Date();
      fs.utimesSync(entry, now, now); // in use
      return entry;
    }
    try {
      fs.mkdirSync(lock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let pid = 0;
      try {
        pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8')) || 0;
      } catch {
        // the lock is being created or was just released
      }
      // A lock without a pid is being created; one whose builder has gone is taken over.
      if (pid > 0 && !alive(pid)) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline)
        throw new Error(
          `shared test build ${name}: still locked by pid ${pid} after ${BUILD_TIMEOUT_MS / 60_000} min (${lock})`,
        );
      else await sleep(POLL_MS);
      continue;
    }
    try {
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      if (fs.existsSync(entry)) return entry;
      const tmp = `${entry}.tmp-${process.pid}`;
      fs.rmSync(tmp, { recursive: true, force: true });
      try {
        await build(tmp);
        fs.renameSync(tmp, entry);
      } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        throw e;
      }
      // Entries of the same kind (older code) unused for a day go; locks and builds in progress stay.
      const kind = `${name.split('-')[0]!}-`;
      for (const e of fs.readdirSync(root)) {
        const abs = path.join(root, e);
        if (e === name || !e.startsWith(kind) || e.includes('.lock') || e.includes('.tmp-')) continue;
        if (Date.now() - fs.statSync(abs).mtimeMs > STALE_MS) fs.rmSync(abs, { recursive: true, force: true });
      }
      return entry;
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}
