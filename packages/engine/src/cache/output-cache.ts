// The local content-addressed cache of outputs (a constructive trace): objects stored by sha256
// under .rc1/cache/objects, and one entry per fingerprint key listing the outputs it produced.
// When a target's fingerprint matches an earlier build (edit, build, revert), its outputs are
// restored from here after their hashes are verified, instead of running the rule.
//
// Small outputs inline (format 2): a file output of at most INLINE_MAX bytes is not stored as an
// object but carried in its entry (`inline`: sha256 → base64 of the bytes), as a remote-execution
// ActionResult carries small outputs: a build from clean then creates one cache file per such
// target instead of two (on ext4 a new inode right after many deletions is the expensive part).
// Directory outputs' files and larger files are objects, as before. The inline bytes are verified
// like an object's: a restore hashes them and treats a mismatch as a miss (the entry is dropped).
// An entry of format 1 (objects only) is read as before; a reader of format 1 ignores format 2.
//
// Objects are immutable and never share an inode with the workspace: each is a private copy
// (a reflink where the filesystem can, else a byte copy), written under a temp name and renamed
// into place, read-only (0444). An object left as a hard link by an older version (link count
// > 1) is replaced by a copy when next stored. So no write to an output — by a rule, a person or
// the engine — can reach a cached object; restores copy objects out (verifying their hash). An
// entry is a file of its own too (temp + rename), so inline bytes are private copies as well.
//
// Layout, for tools that manage the cache's size (gc): objects/<sha[0:2]>/<sha> and
// entries/<key[0:2]>/<key>.json; an entry is usable only while every object it lists (its
// outputs' digests, less those it carries inline: entryObjects()) exists.
// objectPath(), entryPath(), entryObjects() and the CacheEntry shape are the contract;
// materialize() drops an entry whose objects are gone, so deleting objects (oldest first) is
// always safe.
//
// Size accounting, so the size cap needs no walk of every object after each build (cache-gc.ts):
// the cache's size is its objects' and its entries' bytes. Before it creates an object,
// storeObject() appends the object's size to added.log (O_APPEND, one line per object, from
// whichever thread stores it); before it writes an entry, putEntry() appends the entry's size
// (inline bytes included). A kill after the line and before the file leaves an over-count, never
// an under-count. gc's walk records the exact total in size.json and empties added.log.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Check } from '../api/index.ts';
import { hashFileSync, sha256Hex } from '../hash/hash-file.ts';
import { ensureDir, readJsonOrNull, tempName, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import type { OutputRecord, TargetResult } from '../state/trace-log.ts';

/** Entries written now; get() also reads FORMAT_OBJECTS_ONLY (no `inline`: every output an object). */
export const CACHE_FORMAT = 2;
const FORMAT_OBJECTS_ONLY = 1;

/**
 * File outputs up to this size are carried inline in their entry (base64), not as objects.
 * Measured on the 1 000-target bench graph (bench/results/speed.md, "Small outputs inline").
 */
export const INLINE_MAX = 64 * 1024;

/** Sizes of the objects created since the last walk, one decimal per line (cache-gc.ts reads it). */
export const ADDED_LOG = 'added.log';

export interface CacheEntry {
  format: number;
  target: string;
  key: string;
  outputs: OutputRecord[];
  result: Exclude<TargetResult, 'failed'>;
  checks?: Check[];
  summary?: string;
  rule?: { name: string; version: number };
  /** Small file outputs' bytes (sha256 → base64), instead of objects; absent in format 1. */
  inline?: Record<string, string>;
}

/**
 * The objects an entry needs (sha256s): every file of its outputs, less those it carries inline.
 * A field of the wrong type counts as no inline bytes (each digest then needs its object).
 */
export function entryObjects(e: {
  outputs?: readonly { dir?: boolean; sha256?: string; files?: Record<string, string> }[];
  inline?: unknown;
}): Set<string> {
  const inline = e.inline && typeof e.inline === 'object' ? (e.inline as Record<string, unknown>) : {};
  const shas = new Set<string>();
  for (const o of e.outputs ?? []) {
    if (o.dir) for (const s of Object.values(o.files ?? {})) shas.add(s);
    else if (o.sha256 && typeof inline[o.sha256] !== 'string') shas.add(o.sha256);
  }
  return shas;
}

/**
 * JSON.stringify(entry), the same bytes, without JSON.stringify scanning and copying the inline
 * bytes' base64 (up to 87 KB an output): when `inline` is the entry's last member, its keys and
 * values are written between quotes as they are, which is what JSON.stringify writes for base64
 * and hex strings. Precondition: those values are base64 (putEntry's callers make them with
 * toString('base64')). Any other shape is JSON.stringify's. On the 1 000-target bench graph's
 * 800 inline entries: 28–33 ms of worker CPU → 8–10 ms.
 */
export function entryText(entry: CacheEntry): string {
  const inline = entry.inline;
  if (inline === undefined || inline === null || typeof inline !== 'object' || Array.isArray(inline))
    return JSON.stringify(entry);
  const keys = Object.keys(entry);
  if (keys[keys.length - 1] !== 'inline' || typeof (entry as { toJSON?: unknown }).toJSON === 'function')
    return JSON.stringify(entry);
  const pairs: string[] = [];
  for (const k of Object.keys(inline)) {
    const v = inline[k];
    if (typeof v !== 'string' || !/^[0-9a-f]*$/.test(k)) return JSON.stringify(entry);
    pairs.push(`"${k}":"${v}"`);
  }
  const rest: Record<string, unknown> = Object.create(null) as Record<string, unknown>; // an own "__proto__" stays a member
  for (const k of keys) if (k !== 'inline') rest[k] = entry[k as keyof CacheEntry];
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head === '{}' ? '' : ','}"inline":{${pairs.join(',')}}}`;
}

/** Where each output of an entry is now (a temp path before commit, or its place in the workspace). */
export type SourceOf = (output: OutputRecord) => string;

export class OutputCache {
  /**
   * Told of every entry put() stored (after its objects and the entry are written): the remote
   * tier (remote/remote-cache.ts) uploads it from here.
   */
  onPut: ((entry: CacheEntry, whole: boolean) => void) | undefined = undefined;

  /** Keys of the entries this process wrote (put(), or a rule worker: stored()). */
  readonly written = new Set<string>();

  /**
   * Set for a build that created the cache (cache-gc.ts startSize; no remote tier), cleared when
   * it ends: the cache then holds only what this process wrote, so get() of any other key is a
   * miss without a look at the disk (a build from clean asks once per target). Another process
   * writing to a shared cache meanwhile can only cost a hit, never serve a wrong entry.
   */
  emptyAtStart = false;

  private addedFd: number | null = null;

  /**
   * `logPerObject`: open, append to and close added.log for each object instead of keeping it
   * open (a rule worker: a worker terminated mid-job never runs its closeLog(), and a descriptor
   * belongs to the process, not the thread).
   */
  constructor(
    readonly dir: string,
    private readonly opts: { logPerObject?: boolean } = {},
  ) {}

  /** Count `bytes` about to be stored as a new object or entry (added.log). */
  private account(bytes: number): void {
    if (this.opts.logPerObject) {
      fs.appendFileSync(path.join(this.dir, ADDED_LOG), `${bytes}\n`); // one write, O_APPEND
      return;
    }
    if (this.addedFd === null) this.addedFd = fs.openSync(path.join(this.dir, ADDED_LOG), 'a');
    fs.writeSync(this.addedFd, `${bytes}\n`);
  }

  /** Close added.log (a rule worker, after each job). */
  closeLog(): void {
    if (this.addedFd !== null) {
      fs.closeSync(this.addedFd);
      this.addedFd = null;
    }
  }

  objectPath(sha: string): string {
    return path.join(this.dir, 'objects', sha.slice(0, 2), sha);
  }

  entryPath(key: string): string {
    return path.join(this.dir, 'entries', key.slice(0, 2), `${key}.json`);
  }

  has(key: string): boolean {
    return fs.existsSync(this.entryPath(key));
  }

  get(key: string): CacheEntry | null {
    if (this.emptyAtStart && !this.written.has(key)) return null;
    const file = this.entryPath(key);
    // A miss (every target of a first build) costs one stat, not a thrown ENOENT (~10 µs more).
    if (!fs.statSync(file, { throwIfNoEntry: false })) return null;
    const e = readJsonOrNull<CacheEntry>(file);
    if (!e || (e.format !== CACHE_FORMAT && e.format !== FORMAT_OBJECTS_ONLY)) return null;
    if (e.format === FORMAT_OBJECTS_ONLY) delete e.inline; // objects only, whatever it says
    return e;
  }

  /**
   * Store one object: a private read-only copy, unless an unshared one is already there. Rule
   * workers call it for their outputs before the commit (in parallel, off the main thread), so
   * put() usually finds every object present. `bytes`: the object's content, when the caller holds
   * it (the worker keeps small outputs' bytes from hashing them); else it is copied from `from`.
   */
  storeObject(from: string, sha: string, bytes?: Uint8Array): void {
    const obj = this.objectPath(sha);
    const st = fs.statSync(obj, { throwIfNoEntry: false });
    if (st && st.nlink === 1) return;
    ensureDir(path.dirname(obj));
    this.account(bytes ? bytes.length : fs.statSync(from).size);
    const tmp = tempName(obj);
    try {
      if (bytes) {
        // The bytes the worker just hashed: a new read-only file, no second read of the output and
        // no chmod (a copy of a file costs ~10 system calls, this 3).
        const fd = fs.openSync(tmp, 'wx', 0o444);
        try {
          let off = 0;
          while (off < bytes.length) off += fs.writeSync(fd, bytes, off);
        } finally {
          fs.closeSync(fd);
        }
      } else {
        fs.copyFileSync(from, tmp, fs.constants.COPYFILE_FICLONE);
        fs.chmodSync(tmp, 0o444);
      }
      fs.renameSync(tmp, obj); // replaces an old hard-linked object atomically
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
  }

  /**
   * Starts copying a file into the cache before its sha256 is known, on libuv's threads (resolves
   * false where the copy failed): the rule worker starts the copies of its large outputs, then
   * hashes them while they run. adoptCopy() makes the copy the object once the hash is known, and
   * dropCopy() removes it. The temporary name is under objects/tmp/, which gc's walk skips, as it
   * skips a storeObject() temp.
   */
  beginCopy(from: string): { tmp: string; done: Promise<boolean> } {
    const tmp = tempName(path.join(this.dir, 'objects', 'tmp', 'copy'));
    ensureDir(path.dirname(tmp));
    const done = fs.promises.copyFile(from, tmp, fs.constants.COPYFILE_FICLONE).then(
      () => true,
      () => false,
    );
    return { tmp, done };
  }

  /** The finished copy of beginCopy(), of `size` bytes, as the object of `sha`: as storeObject() stores it. */
  adoptCopy(tmp: string, sha: string, size: number): void {
    const obj = this.objectPath(sha);
    try {
      const st = fs.statSync(obj, { throwIfNoEntry: false });
      if (st && st.nlink === 1) {
        fs.rmSync(tmp, { force: true });
        return;
      }
      ensureDir(path.dirname(obj));
      this.account(size);
      fs.chmodSync(tmp, 0o444);
      fs.renameSync(tmp, obj);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
  }

  /** Removes a copy of beginCopy() that is not to become an object. */
  dropCopy(tmp: string): void {
    fs.rmSync(tmp, { force: true });
  }

  /**
   * Store an entry's outputs, read from `sourceOf(output)` (a file, or a directory holding the
   * output's files): a file of at most INLINE_MAX bytes inline in the entry, others as objects.
   * Objects first, then the entry (atomically): a kill in between leaves only unreferenced
   * objects. A refused write is an EngineWriteError naming the cache path. A small file whose
   * bytes no longer hash to its record (changed since it was hashed) stores nothing.
   */
  put(entry: Omit<CacheEntry, 'format'>, sourceOf: SourceOf): void {
    let inline: Record<string, string> | undefined;
    for (const o of entry.outputs) {
      const src = sourceOf(o);
      if (o.dir)
        for (const [rel, sha] of Object.entries(o.files ?? {}))
          engineWrite('the output cache', this.objectPath(sha), () => this.storeObject(path.join(src, rel), sha));
      else if (o.size <= INLINE_MAX) {
        // Read as storeObject would copy it (a refusal names the cache entry, as a copy's would the object).
        const bytes = engineWrite('the output cache', this.entryPath(entry.key), () => fs.readFileSync(src));
        if (bytes.length > INLINE_MAX || sha256Hex(bytes) !== o.sha256) return;
        (inline ??= {})[o.sha256] = bytes.toString('base64');
      } else engineWrite('the output cache', this.objectPath(o.sha256), () => this.storeObject(src, o.sha256));
    }
    // Not `this.onPut?.(this.putEntry(entry))`: without a remote tier that would skip the write too
    // (an optional call does not evaluate its arguments).
    const stored = this.putEntry(inline ? { ...entry, inline } : entry);
    this.onPut?.(stored, true); // as written: its inline bytes, if any, are in it
  }

  /**
   * Write an entry whose objects are all stored (atomically: a kill leaves the old state or the
   * new), its size counted first (added.log). A rule worker writes its target's entry with it;
   * the engine then calls stored(). Its `inline` values are base64 (entryText).
   */
  putEntry(entry: Omit<CacheEntry, 'format'>): CacheEntry {
    const file = this.entryPath(entry.key);
    const stored: CacheEntry = { format: CACHE_FORMAT, ...entry };
    const body = entryText(stored);
    engineWrite('the output cache', file, () => {
      try {
        this.account(Buffer.byteLength(body));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        fs.mkdirSync(this.dir, { recursive: true }); // no cache folder yet
        this.account(Buffer.byteLength(body));
      }
      try {
        writeFileAtomic(file, body, { dirExists: true }); // its folder usually exists: no mkdir
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        writeFileAtomic(file, body);
      }
    });
    this.written.add(entry.key);
    return stored;
  }

  /**
   * An entry a rule worker stored (objects and entry): told to the remote tier as put() would.
   * `entry` is told without its inline bytes (the remote tier reads them from the stored entry).
   */
  stored(entry: Omit<CacheEntry, 'format'>): void {
    this.written.add(entry.key);
    this.onPut?.({ format: CACHE_FORMAT, ...entry }, false);
  }

  /**
   * Materialise an entry's outputs at their temporary paths, verifying every object's hash.
   * Returns false (and drops the entry) if an object is missing or corrupt.
   */
  materialize(entry: CacheEntry, tmpOf: (outputPath: string) => string): boolean {
    const inline = (sha: string): string | undefined => {
      const b = entry.format === CACHE_FORMAT ? entry.inline?.[sha] : undefined;
      return typeof b === 'string' ? b : undefined;
    };
    const placeInline = (sha: string, b64: string, to: string): boolean => {
      const bytes = Buffer.from(b64, 'base64');
      if (sha256Hex(bytes) !== sha) return false;
      fs.mkdirSync(path.dirname(to), { recursive: true });
      const fd = fs.openSync(to, 'w', 0o644);
      try {
        let off = 0;
        while (off < bytes.length) off += fs.writeSync(fd, bytes, off);
        fs.fchmodSync(fd, 0o644); // as a restored object's copy: whatever the umask
      } finally {
        fs.closeSync(fd);
      }
      return true;
    };
    const place = (sha: string, to: string): boolean => {
      const obj = this.objectPath(sha);
      if (!fs.existsSync(obj) || hashFileSync(obj) !== sha) {
        fs.rmSync(obj, { force: true });
        return false;
      }
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(obj, to, fs.constants.COPYFILE_FICLONE);
      fs.chmodSync(to, 0o644); // the copy inherits the object's read-only mode
      return true;
    };
    for (const o of entry.outputs) {
      const ok = o.dir
        ? (fs.mkdirSync(tmpOf(o.path), { recursive: true }),
          Object.entries(o.files ?? {}).every(([rel, sha]) => place(sha, path.join(tmpOf(o.path), rel))) &&
            Object.entries(o.links ?? {}).every(([rel, target]) => {
              fs.mkdirSync(path.dirname(path.join(tmpOf(o.path), rel)), { recursive: true });
              fs.symlinkSync(target, path.join(tmpOf(o.path), rel));
              return true;
            }))
        : inline(o.sha256) !== undefined
          ? placeInline(o.sha256, inline(o.sha256)!, tmpOf(o.path))
          : place(o.sha256, tmpOf(o.path));
      if (!ok) {
        fs.rmSync(this.entryPath(entry.key), { force: true });
        return false;
      }
    }
    return true;
  }

  clear(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
