// Keeps the output cache (.rc1/cache) under a size cap, least recently used entries first.
// Works through the cache's documented contract (output-cache.ts: objectPath(), entryPath(), the
// objects/ and entries/ folders under its dir; an entry is usable only while every object it
// lists exists, so deleting objects is always safe) and never on its internals.
//
// Last use: an entry's file mtime. After a build, the entries of targets whose outputs changed
// are touched — the new one (just used) and the old one (in use until now) — so an entry's
// mtime is the last time it was current. Never evicted: entries that are current for some
// profile (profiles.json: profile → target → key, updated after each build), so switching
// between dev and prod always restores the other profile's latest outputs instead of rerunning.
// Runs only under the workspace lock (after a build, or `rc1-build gc`): no writer is adding
// objects meanwhile, so an object no entry lists is garbage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonOrNull, writeFileAtomic } from '../util/fs.ts';

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
  index[profile] = Object.fromEntries([...current].sort(([a], [b]) => a.localeCompare(b)));
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

function safeReaddir(d: string): string[] {
  try {
    return fs.readdirSync(d);
  } catch {
    return [];
  }
}

interface EntryInfo {
  key: string;
  target: string;
  mtime: Date;
  shas: Set<string>;
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
      }>(file);
      const st = fs.statSync(file, { throwIfNoEntry: false });
      if (!e?.key || !st) continue;
      const shas = new Set<string>();
      for (const o of e.outputs ?? []) {
        if (o.dir) for (const s of Object.values(o.files ?? {})) shas.add(s);
        else if (o.sha256) shas.add(o.sha256);
      }
      out.push({ key: e.key, target: e.target ?? '?', mtime: st.mtime, shas });
    }
  }
  return out;
}

/** Total bytes of the cache's objects. */
export function cacheSize(dir: string): number {
  let n = 0;
  for (const s of listObjects(dir).values()) n += s;
  return n;
}

/**
 * Evict least recently used entries (never those current for a profile, nor `keep`) until the
 * objects fit in `maxBytes`; objects no remaining entry lists are deleted. `full` also removes
 * orphaned objects when the cache is under its cap (the `gc` command).
 */
export function gcCache(
  cache: CacheLayout,
  o: { maxBytes: number; keep?: ReadonlySet<string>; full?: boolean },
): GcResult {
  const dir = cache.dir;
  const objects = listObjects(dir);
  let total = 0;
  for (const s of objects.values()) total += s;
  const result: GcResult = {
    removed: [],
    orphanBytes: 0,
    freedBytes: 0,
    before: total,
    after: total,
    maxBytes: o.maxBytes,
  };
  if (total <= o.maxBytes && !o.full) return result;
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
    let bytes = 0;
    for (const s of e.shas) {
      const left = (refs.get(s) ?? 1) - 1;
      refs.set(s, left);
      if (left === 0 && objects.has(s)) bytes += dropObject(s);
    }
    result.removed.push({ key: e.key, target: e.target, lastUse: e.mtime, bytes });
  }
  result.after = total;
  result.freedBytes = result.before - total;
  return result;
}
