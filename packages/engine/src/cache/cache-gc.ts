// Keeps the output cache (.rc1/cache) under a size cap, least recently used entries first.
// Works through the cache's documented contract (output-cache.ts: objectPath(), entryPath(),
// entryObjects(), the objects/ and entries/ folders under its dir; an entry is usable only while
// every object it lists exists, so deleting objects is always safe) and never on its internals.
// The cache's size is its objects' bytes plus its entries' (an entry carries small outputs
// inline), and evicting an entry frees its own bytes too.
//
// Last use: an entry's file mtime. After a build, the entries of targets whose outputs changed
// are touched — the new one (just used) and the old one (in use until now) — so an entry's
// mtime is the last time it was current. Never evicted: entries that are current for some
// profile (profiles.json: profile → target → key, updated after each build), so switching
// between dev and prod always restores the other profile's latest outputs instead of rerunning.
// Runs only under the workspace lock (after a build, or `rc1-build gc`): no writer is adding
// objects meanwhile, so an object no entry lists is garbage.
//
// The cap after a build needs no walk of every object while the cache is surely under it: the
// total at the last walk (size.json) plus the size of every object and entry written since
// (added.log, appended by OutputCache.storeObject and putEntry before each) bounds it from above. Only
// when that bound exceeds the cap, when either file is missing or unreadable, when added.log has
// grown past ADDED_LOG_MAX, or when the caller cannot vouch that every object came through
// storeObject (a remote tier downloaded objects in this build) does gc walk; each walk records
// the exact total and empties added.log.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonOrNull, writeFileAtomic } from '../util/fs.ts';
import { ADDED_LOG, entryObjects } from './output-cache.ts';

export { formatSize, parseSize } from '../util/size.ts';

export const DEFAULT_CACHE_MAX = 10 * 1024 ** 3;

export interface GcRemoval {
  key: string;
  target: string;
  lastUse: Date;
  bytes: number;
}

export interface GcResult {
  removed: GcRemoval[];
  /** Objects no entry listed (left by a build killed between its objects and its entry). */
  orphanBytes: number;
  freedBytes: number;
  before: number;
  after: number;
  maxBytes: number;
}

/** What gc needs of the output cache (OutputCache satisfies it). */
export interface CacheLayout {
  readonly dir: string;
  objectPath(sha: string): string;
  entryPath(key: string): string;
  /** Keys whose entries this process wrote: their mtime is already this build's. */
  readonly written?: ReadonlySet<string>;
  /** Close this process's handle on added.log (before gc reads and empties it). */
  closeLog?(): void;
}

const SIZE_FILE = 'size.json';
/** Past this many bytes of added.log, gc walks (and empties it) even under the cap. */
export const ADDED_LOG_MAX = 64 * 1024;

/**
 * An upper bound of the cache's total size (objects and entries) without listing them: the last
 * walk's total plus every object and entry written since; null when it cannot be vouched for.
 */
export function sizeBound(dir: string): number | null {
  const rec = readJsonOrNull<{ bytes?: unknown }>(path.join(dir, SIZE_FILE));
  if (!rec || typeof rec.bytes !== 'number' || !Number.isFinite(rec.bytes) || rec.bytes < 0) return null;
  let text: string;
  try {
    const file = path.join(dir, ADDED_LOG);
    if (fs.statSync(file).size > ADDED_LOG_MAX) return null;
    text = fs.readFileSync(file, 'latin1');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return null;
    text = '';
  }
  let total = rec.bytes;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const n = Number(line);
    if (!Number.isSafeInteger(n) || n < 0) return null; // a torn or foreign line: walk
    total += n;
  }
  return total;
}

/**
 * The bound no longer holds (a remote tier is about to download objects past storeObject): the
 * next cap check walks. Called before the first download, so a kill cannot skip it.
 */
export function forgetSize(dir: string): void {
  fs.rmSync(path.join(dir, SIZE_FILE), { force: true });
}

/**
 * Before a build, under the lock, with no remote tier: a cache that does not exist yet is created
 * with a recorded total of 0. Every file a new cache gets then comes through storeObject or
 * putEntry (each counted in added.log first), so the bound holds from its first file and the cap
 * check after a build from clean needs no walk. True when it created the cache (it is empty).
 */
export function startSize(dir: string): boolean {
  if (fs.existsSync(dir)) return false;
  fs.mkdirSync(dir, { recursive: true });
  writeFileAtomic(path.join(dir, SIZE_FILE), JSON.stringify({ bytes: 0 }));
  return true;
}

/** After a walk (lock held, no store running): the exact total, then an empty added.log. */
function recordSize(dir: string, bytes: number): void {
  // No cache yet: nothing to record.
  if (!fs.existsSync(path.join(dir, 'objects')) && !fs.existsSync(path.join(dir, 'entries'))) return;
  writeFileAtomic(path.join(dir, SIZE_FILE), JSON.stringify({ bytes }));
  try {
    fs.truncateSync(path.join(dir, ADDED_LOG), 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * Mark entries as used now (their mtime is their last use). Missing entries are skipped, and so
 * are entries written by this build (a full build of 1 000 targets would touch each once more).
 */
export function markUsed(cache: CacheLayout, keys: Iterable<string>, now = new Date()): void {
  for (const k of keys) {
    if (cache.written?.has(k)) continue;
    try {
      fs.utimesSync(cache.entryPath(k), now, now);
    } catch {
      /* not cached */
    }
  }
}

type ProfileIndex = Record<string, Record<string, string>>;

/** Record the current key of each target for a profile (these entries are never evicted). */
export function recordCurrent(dir: string, profile: string, current: ReadonlyMap<string, string>): void {
  const file = path.join(dir, 'profiles.json');
  const index = readJsonOrNull<ProfileIndex>(file) ?? {};
  // Code-point order (deterministic; localeCompare costs ~10 ms for 1 000 names).
  index[profile] = Object.fromEntries([...current].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  fs.mkdirSync(dir, { recursive: true });
  writeFileAtomic(file, JSON.stringify(index));
}

function protectedKeys(dir: string): Set<string> {
  const index = readJsonOrNull<ProfileIndex>(path.join(dir, 'profiles.json')) ?? {};
  return new Set(Object.values(index).flatMap((m) => Object.values(m)));
}

function listObjects(dir: string): Map<string, number> {
  const sizes = new Map<string, number>();
  const root = path.join(dir, 'objects');
  for (const sub of safeReaddir(root)) {
    for (const name of safeReaddir(path.join(root, sub))) {
      if (!/^[0-9a-f]{64}$/.test(name)) continue; // temp files of a store in progress
      const st = fs.lstatSync(path.join(root, sub, name), { throwIfNoEntry: false });
      if (st) sizes.set(name, st.size);
    }
  }
  return sizes;
}

/**
 * Removes the temporary files of stores and entry writes that never finished (a build killed
 * mid-copy: `<object>.tmp-…`, the copies under objects/tmp/ that OutputCache.beginCopy starts,
 * `<entry>.json.tmp-…`). gc runs under the workspace lock, when no store is in progress, so each
 * is garbage; no walk counts them in the cache's size.
 */
function removeTemps(dir: string): void {
  for (const top of ['objects', 'entries']) {
    const root = path.join(dir, top);
    for (const sub of safeReaddir(root)) {
      const d = path.join(root, sub);
      for (const name of safeReaddir(d))
        if ((top === 'objects' && sub === 'tmp') || name.includes('.tmp-'))
          fs.rmSync(path.join(d, name), { force: true });
    }
  }
}

function safeReaddir(d: string): string[] {
  try {
    return fs.readdirSync(d);
  } catch {
    return [];
  }
}

/** Size of each entry file (path → bytes). */
function listEntryFiles(dir: string): Map<string, number> {
  const sizes = new Map<string, number>();
  const root = path.join(dir, 'entries');
  for (const sub of safeReaddir(root)) {
    for (const name of safeReaddir(path.join(root, sub))) {
      if (!name.endsWith('.json')) continue; // temp files of a write in progress (as objects')
      const file = path.join(root, sub, name);
      const st = fs.lstatSync(file, { throwIfNoEntry: false });
      if (st?.isFile()) sizes.set(file, st.size);
    }
  }
  return sizes;
}

interface EntryInfo {
  key: string;
  target: string;
  mtime: Date;
  /** The objects it needs (not its inline outputs). */
  shas: Set<string>;
  /** Its own file's bytes. */
  bytes: number;
}

function listEntries(dir: string): EntryInfo[] {
  const out: EntryInfo[] = [];
  const root = path.join(dir, 'entries');
  for (const sub of safeReaddir(root)) {
    for (const name of safeReaddir(path.join(root, sub))) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(root, sub, name);
      const e = readJsonOrNull<{
        key?: string;
        target?: string;
        outputs?: { dir?: boolean; sha256?: string; files?: Record<string, string> }[];
        inline?: unknown;
      }>(file);
      const st = fs.statSync(file, { throwIfNoEntry: false });
      if (!e?.key || !st) continue;
      out.push({ key: e.key, target: e.target ?? '?', mtime: st.mtime, shas: entryObjects(e), bytes: st.size });
    }
  }
  return out;
}

/** Total bytes of the cache's objects and entries. */
export function cacheSize(dir: string): number {
  let n = 0;
  for (const s of listObjects(dir).values()) n += s;
  for (const s of listEntryFiles(dir).values()) n += s;
  return n;
}

/**
 * Evict least recently used entries (never those current for a profile, nor `keep`) until the
 * objects and entries fit in `maxBytes`; objects no remaining entry lists are deleted. `full` also removes
 * orphaned objects when the cache is under its cap (the `gc` command). `bounded`: every object
 * created since the last walk came through OutputCache.storeObject, so the size bound may spare
 * the walk (after a build).
 */
export function gcCache(
  cache: CacheLayout,
  o: { maxBytes: number; keep?: ReadonlySet<string>; full?: boolean; bounded?: boolean },
): GcResult {
  const dir = cache.dir;
  cache.closeLog?.();
  if (o.bounded && !o.full) {
    const bound = sizeBound(dir);
    if (bound !== null && bound <= o.maxBytes)
      return { removed: [], orphanBytes: 0, freedBytes: 0, before: bound, after: bound, maxBytes: o.maxBytes };
  }
  removeTemps(dir);
  const objects = listObjects(dir);
  let total = 0;
  for (const s of objects.values()) total += s;
  for (const s of listEntryFiles(dir).values()) total += s;
  const result: GcResult = {
    removed: [],
    orphanBytes: 0,
    freedBytes: 0,
    before: total,
    after: total,
    maxBytes: o.maxBytes,
  };
  if (total <= o.maxBytes && !o.full) {
    recordSize(dir, total);
    return result;
  }
  const entries = listEntries(dir);
  const refs = new Map<string, number>();
  for (const e of entries) for (const s of e.shas) refs.set(s, (refs.get(s) ?? 0) + 1);
  const dropObject = (sha: string): number => {
    const size = objects.get(sha) ?? 0;
    fs.rmSync(cache.objectPath(sha), { force: true });
    objects.delete(sha);
    total -= size;
    return size;
  };
  for (const sha of [...objects.keys()]) if (!refs.has(sha)) result.orphanBytes += dropObject(sha);
  const keep = new Set([...protectedKeys(dir), ...(o.keep ?? [])]);
  const candidates = entries
    .filter((e) => !keep.has(e.key))
    .sort((a, b) => a.mtime.getTime() - b.mtime.getTime() || a.key.localeCompare(b.key));
  for (const e of candidates) {
    if (total <= o.maxBytes) break;
    fs.rmSync(cache.entryPath(e.key), { force: true });
    total -= e.bytes;
    let bytes = e.bytes;
    for (const s of e.shas) {
      const left = (refs.get(s) ?? 1) - 1;
      refs.set(s, left);
      if (left === 0 && objects.has(s)) bytes += dropObject(s);
    }
    result.removed.push({ key: e.key, target: e.target, lastUse: e.mtime, bytes });
  }
  result.after = total;
  result.freedBytes = result.before - total;
  recordSize(dir, total);
  return result;
}
