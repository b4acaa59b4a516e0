// The compiled code's copy outside the state dir: a transpile cache, as babel, Jest and Gradle keep
// compiled build scripts apart from build state. Everything in .rc1/compiled is a function of
// source files (rc1.build.ts, the rules, the config files, the engine's own code) and is checked
// against them before use: each module's closure record lists its files' sha256s, and the
// resolved pipeline, profiles, params and config caches carry the key they were made for. So a
// copy of the folder is as good as the folder, and a state dir made from nothing (`rm -rf .rc1`,
// a fresh clone with node_modules installed) starts from that copy instead of bundling
// rc1.build.ts, evaluating its 1 000 declarations and compiling every rule again (~100 ms of the
// 1 000-target bench graph's build from clean, ~400 ms of RC1's; bench/results/speed.md,
// sixteenth pass).
// Nothing in it is build state: no record, output, cache entry or stamp; deleting .rc1 still
// forgets every build, and an edit to any source is seen exactly as in a state dir kept.
//
// Where: node_modules/.cache/rc1-build/compiled-<sha of the root's real path> in the nearest
// node_modules at or above the workspace root (the folder find-cache-dir names, and the one the
// compiled modules import npm packages from by absolute path: a reinstall that empties
// node_modules drops both together). None when there is no node_modules, or with
// RC1_COMPILE_SEED=off. `rc1-build clean --cache` removes it with the other caches; `<seed>.root`
// beside it names the workspace, so the seed of a workspace since deleted is removed the next
// time another workspace's seed is replaced.
//
// Files are shared by hard link (a copy where links fail): the engine never writes a compiled
// file in place (every write is a temp file and a rename, and a new name for new code), so neither
// side can change the other's bytes. The seed is replaced whole: a new folder of links renamed in
// place, so a reader sees one command's folder or another's, never a mix of two half-written.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The seed folder of a workspace, or null (no node_modules at or above the root, or RC1_COMPILE_SEED=off). */
export function compiledSeedDir(root: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.RC1_COMPILE_SEED === 'off') return null;
  let real: string;
  try {
    real = fs.realpathSync(root);
  } catch {
    return null;
  }
  for (let d = real; ; d = path.dirname(d)) {
    const nm = path.join(d, 'node_modules');
    let isDir = false;
    try {
      isDir = fs.statSync(nm).isDirectory();
    } catch {
      /* none here */
    }
    if (isDir) {
      const id = crypto.createHash('sha256').update(real).digest('hex').slice(0, 16);
      return path.join(nm, '.cache', 'rc1-build', `compiled-${id}`);
    }
    if (path.dirname(d) === d) return null;
  }
}

/** Temp and old folders younger than this are another process's work in progress. */
const LEFTOVER_AGE_MS = 10 * 60_000;

/** Each plain file of a folder by name, with its inode (none when the folder is missing). */
function listing(dir: string): Map<string, bigint> {
  const out = new Map<string, bigint>();
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (/\.tmp-[\w-]+$/.test(n)) continue; // a write in progress (or left by a kill)
    const st = fs.lstatSync(path.join(dir, n), { bigint: true, throwIfNoEntry: false });
    if (st?.isFile()) out.set(n, st.ino);
  }
  return out;
}

/** A hard link of `from` at `to`, or a copy where the filesystem refuses the link. */
function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return; // removed meanwhile (a sweep): the copy is only missing it
    fs.copyFileSync(from, to);
  }
}

/** A folder of links to every plain file of `from`, made at a temp name and renamed to `to`; false if `to` exists. */
function linkFolder(from: string, names: Iterable<string>, to: string): boolean {
  const tmp = `${to}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.mkdirSync(tmp, { recursive: true });
  try {
    for (const n of names) linkOrCopy(path.join(from, n), path.join(tmp, n));
    fs.renameSync(tmp, to);
    return true;
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false; // another process made it first
    throw e;
  }
}

/**
 * A state dir with no compiled folder gets one from the seed (when there is one): a folder of
 * links, renamed into place. Returns whether it did. Never throws: without the seed the engine
 * compiles, as it would with none.
 */
export function seedCompiled(compiledDir: string, seedDir: string | null): boolean {
  if (!seedDir || fs.existsSync(compiledDir)) return false;
  try {
    // A folder of links a killed command left (it never got its name): gone once old enough.
    const prefix = `${path.basename(compiledDir)}.tmp-`;
    for (const n of fs.readdirSync(path.dirname(compiledDir)))
      if (n.startsWith(prefix)) {
        const p = path.join(path.dirname(compiledDir), n);
        if (Date.now() - fs.statSync(p).mtimeMs > LEFTOVER_AGE_MS) fs.rmSync(p, { recursive: true, force: true });
      }
    const names = listing(seedDir);
    if (names.size === 0) return false;
    return linkFolder(seedDir, names.keys(), compiledDir);
  } catch {
    return false;
  }
}

/**
 * Makes the seed the same files as the compiled folder, when they differ (a name or an inode):
 * a new folder of links renamed in place of the old. Called at the end of a command that holds
 * the workspace lock, after the compiled indexes are saved. Beside the seed, `<seed>.root` names
 * the workspace it is for; each time a seed is replaced, the seeds of workspaces that no longer
 * hold an rc1.build.ts and the temp and old folders a killed command left are removed. Never
 * throws (the seed only saves time): a read-only node_modules leaves it as it is.
 */
export function updateSeed(compiledDir: string, seedDir: string | null, root?: string): void {
  if (!seedDir) return;
  try {
    const now = listing(compiledDir);
    if (now.size === 0) return;
    const seed = listing(seedDir);
    if (seed.size === now.size && [...now].every(([n, ino]) => seed.get(n) === ino)) return;
    fs.mkdirSync(path.dirname(seedDir), { recursive: true });
    const old = `${seedDir}.old-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    try {
      fs.renameSync(seedDir, old);
    } catch {
      /* none yet, or another process moved it first */
    }
    linkFolder(compiledDir, now.keys(), seedDir);
    fs.rmSync(old, { recursive: true, force: true });
    if (root !== undefined) fs.writeFileSync(`${seedDir}.root`, fs.realpathSync(root));
    sweepSeeds(path.dirname(seedDir));
  } catch {
    /* the seed stays as it was */
  }
}

/** Removes the seeds of workspaces gone (no rc1.build.ts where `.root` says) and old leftovers. */
function sweepSeeds(dir: string, now = Date.now()): void {
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    try {
      if (/^compiled-[0-9a-f]{16}\.(tmp|old)-/.test(name)) {
        if (now - fs.statSync(p).mtimeMs > LEFTOVER_AGE_MS) fs.rmSync(p, { recursive: true, force: true });
      } else if (/^compiled-[0-9a-f]{16}\.root$/.test(name)) {
        const root = fs.readFileSync(p, 'utf8');
        if (!fs.existsSync(path.join(root, 'rc1.build.ts'))) {
          fs.rmSync(p.slice(0, -'.root'.length), { recursive: true, force: true });
          fs.rmSync(p, { force: true });
        }
      }
    } catch {
      /* removed meanwhile, or not ours to remove */
    }
  }
}

/** Removes a workspace's seed (`rc1-build clean --cache`); whether there was one. */
export function removeSeed(seedDir: string | null): boolean {
  if (!seedDir || !fs.existsSync(seedDir)) return false;
  fs.rmSync(seedDir, { recursive: true, force: true });
  fs.rmSync(`${seedDir}.root`, { force: true });
  return true;
}
