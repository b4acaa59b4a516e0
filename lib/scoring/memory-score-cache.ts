// An in-memory score cache with the driver's interface (score-items.ts ScoreCacheLike), for tests
// and for runs that must not touch the persistent cache. It counts its lookups and keeps the
// order of its puts, so a test can assert that a sample was stored the moment it arrived.
import type { ScoreSample } from './types.ts';
import { cacheKey, type CacheKeyFields, type SampleFailure, type ScoreCacheLike } from './score-items.ts';

export class MemoryScoreCache implements ScoreCacheLike {
  readonly entries = new Map<string, ScoreSample>();
  readonly failures = new Map<string, SampleFailure>();
  /** Keys in the order they were put. */
  readonly putLog: string[] = [];
  hits = 0;
  misses = 0;

  get(key: CacheKeyFields): ScoreSample | null {
    const s = this.entries.get(cacheKey(key));
    if (s) this.hits++;
    else this.misses++;
    return s ? { ...s, scores: { ...s.scores }, cached: true } : null;
  }

  put(key: CacheKeyFields, sample: ScoreSample): void {
    const k = cacheKey(key);
    this.entries.set(k, { ...sample, scores: { ...sample.scores } });
    this.failures.delete(k);
    this.putLog.push(k);
  }

  recordFailure(key: CacheKeyFields, failure: SampleFailure): void {
    this.failures.set(cacheKey(key), { ...failure });
  }

  get size(): number {
    return this.entries.size;
  }
}
