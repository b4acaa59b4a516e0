// The local content-addressed cache of outputs (a constructive trace): objects stored by sha256
// under .rc1/cache/objects, and one entry per fingerprint key listing the outputs it produced.
// When a target's fingerprint matches an earlier build (edit, build, revert), its outputs are
// restored from here after their hashes are verified, instead of running the rule. Objects are
// hard links of the outputs when the filesystem allows (no copy), so a verify-on-restore is what
// keeps a cache entry honest if someone edited an output in place.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Check } from '../api/index.ts';
import { hashFileSync } from '../hash/hash-file.ts';
import { ensureDir, readJsonOrNull } from '../util/fs.ts';
import type { OutputRecord, TargetResult } from '../state/trace-log.ts';

export const CACHE_FORMAT = 1;

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

function linkOrCopy(from: string, to: string): void {
  ensureDir(path.dirname(to));
  try {
    fs.linkSync(from, to);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    fs.copyFileSync(from, to, fs.constants.COPYFILE_FICLONE);
  }
}

export class OutputCache {
  constructor(private readonly dir: string) {}

  private objectPath(sha: string): string {
    return path.join(this.dir, 'objects', sha.slice(0, 2), sha);
  }

  private entryPath(key: string): string {
    return path.join(this.dir, 'entries', key.slice(0, 2), `${key}.json`);
  }

  has(key: string): boolean {
    return fs.existsSync(this.entryPath(key));
  }

  get(key: string): CacheEntry | null {
    const e = readJsonOrNull<CacheEntry>(this.entryPath(key));
    return e && e.format === CACHE_FORMAT ? e : null;
  }

  /** Store the outputs (now in place under root) for a key. */
  put(root: string, entry: Omit<CacheEntry, 'format'>): void {
    for (const o of entry.outputs) {
      if (o.dir) for (const [rel, sha] of Object.entries(o.files ?? {})) linkOrCopy(path.join(root, o.path, rel), this.objectPath(sha));
      else linkOrCopy(path.join(root, o.path), this.objectPath(o.sha256));
    }
    // Written in place: a torn entry fails to parse and reads as a miss.
    const file = this.entryPath(entry.key);
    ensureDir(path.dirname(file));
    fs.writeFileSync(file, JSON.stringify({ format: CACHE_FORMAT, ...entry }));
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
