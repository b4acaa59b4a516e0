// The stat cache: (size, mtime ns, inode, ctime ns) → sha256, so that deciding a no-op reads no
// unchanged file. ctime is in the key because an edit can restore size and mtime (touch -r, an
// editor keeping the mtime) but cannot set the ctime back. Safe against same-tick modification
// ("racy" entries, as in git's index): an entry whose
// mtime is within RACY_WINDOW of the moment it was hashed is stored but not trusted; the next
// lookup re-hashes it, by which time any later write would carry a later mtime.
// Across a power cut: the cache carries a durability mark (state/durability.ts); one written when
// the builds' outputs were not all durable is dropped in a later boot, and every file is hashed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashFileWithStatSync } from './hash-file.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import { type DurabilityMark, markNow, trusted } from '../state/durability.ts';
import { deepFreeze, readParsed } from '../state/parsed-state.ts';

export const STAT_CACHE_FORMAT = 2;
/** Filesystems with nanosecond mtimes stamp with a coarse clock (one kernel tick, ≤ 10 ms). */
const RACY_WINDOW_NS = 100_000_000n;
/** Filesystems with whole-second (or 2 s) mtimes. */
const RACY_WINDOW_COARSE_NS = 2_000_000_000n;

/** [size, mtimeNs, ino, sha256, racy, ctimeNs − mtimeNs (short: usually 0 or a small delta)] */
type Entry = [number, string, string, string, 0 | 1, string];

/** The four stat fields the cache compares, as carried across threads. */
export interface StatLike {
  size: bigint;
  mtimeNs: bigint;
  ino: bigint;
  ctimeNs: bigint;
}

export interface FileHash {
  sha256: string;
  size: number;
}

export interface StatCacheCounters {
  statHits: number;
  hashed: number;
  hashedPaths: string[];
}

export class StatCache {
  private entries: Map<string, Entry>;
  private dirty = false;
  /** The root and a '/' when it is normalised (path.resolve gives it back unchanged), else null. */
  private readonly base: string | null;
  readonly counters: StatCacheCounters = { statHits: 0, hashed: 0, hashedPaths: [] };
  /** Every path hash() was asked for in this process (what the up-to-date stamp lists). */
  private readonly asked = new Set<string>();
  /**
   * Whether everything the builds wrote is known to be on disk (state/durability.ts): as the
   * loaded cache says in its boot; false with no cache (nothing known), true after a drop for a
   * new boot (what survived it is on disk). A build sets it at its end; every stat-keyed record
   * is written with it.
   */
  private isDurable = false;
  /** The loaded cache was dropped: written in another boot, before its outputs were durable. */
  readonly droppedForReboot: boolean = false;

  constructor(
    private readonly root: string,
    private readonly file: string,
  ) {
    this.entries = new Map();
    const r = path.resolve(root);
    this.base = path.sep === '/' && r === root && !root.endsWith('/') ? `${root}/` : null;
    try {
      const doc = readParsed(
        file,
        (text) => JSON.parse(text) as { format: number; entries: Record<string, Entry> } & DurabilityMark,
        deepFreeze,
      );
      if (doc?.format === STAT_CACHE_FORMAT) {
        if (trusted(doc)) {
          this.entries = new Map(Object.entries(doc.entries));
          this.isDurable = doc.durable !== false;
        } else {
          this.droppedForReboot = true;
          this.isDurable = true;
          this.dirty = true; // written again, with this boot's mark
        }
      }
    } catch {
      // No cache or an unreadable one: every file is hashed once, nothing else changes.
    }
  }

  /** sha256 and size of a workspace file, or null when it does not exist (or is not a file). */
  hash(rel: string): FileHash | null {
    this.asked.add(rel);
    const abs = this.abs(rel);
    const st = fs.statSync(abs, { bigint: true, throwIfNoEntry: false });
    if (!st?.isFile()) {
      if (this.entries.delete(rel)) this.dirty = true;
      return null;
    }
    const e = this.entries.get(rel);
    if (
      e &&
      e[4] === 0 &&
      e[0] === Number(st.size) &&
      e[1] === String(st.mtimeNs) &&
      e[2] === String(st.ino) &&
      e[5] === String(st.ctimeNs - st.mtimeNs)
    ) {
      this.counters.statHits++;
      return { sha256: e[3], size: e[0] };
    }
    const before = BigInt(Date.now()) * 1_000_000n;
    const h = hashFileWithStatSync(abs);
    this.counters.hashed++;
    if (this.counters.hashedPaths.length < 1000) this.counters.hashedPaths.push(rel);
    this.store(rel, h.sha256, h.stat, before);
    return { sha256: h.sha256, size: h.size };
  }

  /**
   * path.resolve(root, rel), by string for a plain relative path (no '.' or '..' segment, no empty
   * one, not absolute): what every declared path is. A no-op asks ~1 100 times.
   */
  private abs(rel: string): string {
    const c = rel.charCodeAt(0);
    if (
      this.base !== null &&
      rel.length > 0 &&
      c !== 47 && // '/'
      c !== 46 && // '.'
      !rel.includes('/.') &&
      !rel.includes('//') &&
      !rel.endsWith('/')
    )
      return this.base + rel;
    return path.resolve(this.root, rel);
  }

  /**
   * Record a hash the engine already knows (an output it just wrote, hashed from the same bytes).
   * `statTimeNs` is a wall-clock time no later than the moment `st` was taken.
   */
  store(rel: string, sha256: string, st: fs.BigIntStats | StatLike, statTimeNs: bigint): void {
    const now = statTimeNs;
    const window = st.mtimeNs % 1_000_000_000n === 0n ? RACY_WINDOW_COARSE_NS : RACY_WINDOW_NS;
    // Racy is about mtime alone: every write sets mtime and ctime to the same tick, so once mtime
    // is older than the hash by the granularity, a later write moves it. A recent ctime alone (a
    // rename at commit) is safe; it is in the key so that an mtime-restoring edit is seen.
    const racy = st.mtimeNs + window > now ? 1 : 0;
    this.entries.set(rel, [
      Number(st.size),
      String(st.mtimeNs),
      String(st.ino),
      sha256,
      racy,
      String(st.ctimeNs - st.mtimeNs),
    ]);
    this.dirty = true;
  }

  /**
   * Each path hash() was asked for in this process → the stat its answer rested on, as
   * uptodate-stamp.ts's fileLine() writes it ('-': not a file); null when one of them was racy
   * (its answer may not hold for a later write in the same tick).
   */
  statLines(): Map<string, string> | null {
    const out = new Map<string, string>();
    for (const rel of this.asked) {
      const e = this.entries.get(rel);
      if (!e) out.set(rel, '-');
      else if (e[4] === 1) return null;
      else out.set(rel, `${e[0]} ${e[1]} ${e[2]} ${BigInt(e[1]) + BigInt(e[5])}`);
    }
    return out;
  }

  forget(rel: string): void {
    if (this.entries.delete(rel)) this.dirty = true;
  }

  /** Whether everything the builds wrote is known to be on disk (see isDurable). */
  get durable(): boolean {
    return this.isDurable;
  }

  /** A build's end: what it wrote is durable now (it synced), or not (it left that to the kernel). */
  setDurable(durable: boolean): void {
    if (durable !== this.isDurable) this.dirty = true;
    this.isDurable = durable;
  }

  save(): void {
    if (!this.dirty) return;
    const body = JSON.stringify({
      format: STAT_CACHE_FORMAT,
      ...markNow(this.isDurable),
      entries: Object.fromEntries(this.entries),
    });
    engineWrite('the stat cache', this.file, () => writeFileAtomic(this.file, body), this.root);
    this.dirty = false;
  }
}
