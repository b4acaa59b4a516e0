// The local content-addressed cache of outputs (a constructive trace): objects stored by sha256
// under .rc1/cache/objects, and one entry per fingerprint key listing the outputs it produced.
// When a target's fingerprint matches an earlier build (edit, build, revert), its outputs are
// restored from here after their hashes are verified, instead of running the rule.
//
// Objects are immutable and never share an inode with the workspace: each is a private copy
// (a reflink where the filesystem can, else a byte copy), written under a temp name and renamed
// into place, read-only (0444). An object left as a hard link by an older version (link count
// > 1) is replaced by a copy when next stored. So no write to an output — by a rule, a person or
// the engine — can reach a cached object; restores copy objects out (verifying their hash).
//
// Layout, for tools that manage the cache's size (gc): objects/<sha[0:2]>/<sha> and
// entries/<key[0:2]>/<key>.json; an entry is usable only while every object it lists exists.
// objectPath(), entryPath() and the CacheEntry shape are the contract; materialize() drops an
// entry whose objects are gone, so deleting objects (oldest first) is always safe.
//
// Size accounting, so the size cap needs no walk of every object after each build (cache-gc.ts):
// before it creates an object, storeObject() appends the object's size to added.log (O_APPEND,
// one line per object, from whichever thread stores it). A kill after the line and before the
// object leaves an over-count, never an under-count. gc's walk records the exact total in
// size.json and empties added.log.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Check } from '../api/index.ts';
import { hashFileSync } from '../hash/hash-file.ts';
import { ensureDir, readJsonOrNull, tempName, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import type { OutputRecord, TargetResult } from '../state/trace-log.ts';

export const CACHE_FORMAT = 1;

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
}

/** Where each output of an entry is now (a temp path before commit, or its place in the workspace). */
export type SourceOf = (output: OutputRecord) => string;

export class OutputCache {
  /**
   * Told of every entry put() stored (after its objects and the entry are written): the remote
   * tier (remote/remote-cache.ts) uploads it from here.
   */
  onPut: ((entry: CacheEntry) => void) | undefined = undefined;

  /** Keys of the entries this process wrote (put(), or a rule worker: stored()). */
  readonly written = new Set<string>();

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

  /** Count `bytes` about to be stored as a new object (added.log). */
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
    const file = this.entryPath(key);
    // A miss (every target of a first build) costs one stat, not a thrown ENOENT (~10 µs more).
    if (!fs.statSync(file, { throwIfNoEntry: false })) return null;
    const e = readJsonOrNull<CacheEntry>(file);
    return e && e.format === CACHE_FORMAT ? e : null;
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
   * Store an entry's outputs, read from `sourceOf(output)` (a file, or a directory holding the
   * output's files). Objects first, then the entry (atomically): a kill in between leaves only
   * unreferenced objects. A refused write is an EngineWriteError naming the cache path.
   */
  put(entry: Omit<CacheEntry, 'format'>, sourceOf: SourceOf): void {
    for (const o of entry.outputs) {
      const src = sourceOf(o);
      if (o.dir)
        for (const [rel, sha] of Object.entries(o.files ?? {}))
          engineWrite('the output cache', this.objectPath(sha), () => this.storeObject(path.join(src, rel), sha));
      else engineWrite('the output cache', this.objectPath(o.sha256), () => this.storeObject(src, o.sha256));
    }
    // Not `this.onPut?.(this.putEntry(entry))`: without a remote tier that would skip the write too
    // (an optional call does not evaluate its arguments).
    const stored = this.putEntry(entry);
    this.onPut?.(stored);
  }

  /**
   * Write an entry whose objects are all stored (atomically: a kill leaves the old state or the
   * new). A rule worker writes its target's entry with it; the engine then calls stored().
   */
  putEntry(entry: Omit<CacheEntry, 'format'>): CacheEntry {
    const file = this.entryPath(entry.key);
    const stored: CacheEntry = { format: CACHE_FORMAT, ...entry };
    const body = JSON.stringify(stored);
    engineWrite('the output cache', file, () => {
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

  /** An entry a rule worker stored (objects and entry): told to the remote tier as put() would. */
  stored(entry: Omit<CacheEntry, 'format'>): void {
    this.written.add(entry.key);
    this.onPut?.({ format: CACHE_FORMAT, ...entry });
  }

  /**
   * Materialise an entry's outputs at their temporary paths, verifying every object's hash.
   * Returns false (and drops the entry) if an object is missing or corrupt.
   */
  materialize(entry: CacheEntry, tmpOf: (outputPath: string) => string): boolean {
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
