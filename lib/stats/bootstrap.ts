// The nonparametric bootstrap with seeded resampling, and percentile intervals. A resample
// draws pool.length items from the pool uniformly with replacement, using mulberry32 (createRng
// from the public API): resample r of a run is the same for the same seed on every machine.
// Interval method: the percentile bootstrap (Efron & Tibshirani 1993, §13.3): the interval at
// level 1 − a is the type-7 quantiles a/2 and 1 − a/2 of the replicates, 2.5 % and 97.5 % for
// the default level .95. No bias correction or acceleration (that would be BCa).
import { createRng, type Rng } from 'rc1-build';
import { quantileSorted } from './summary.ts';

/** Draws pool.length indices from pool with replacement (into out, when given). */
export function resample(rng: Rng, pool: ArrayLike<number>, out?: Int32Array): Int32Array {
  const n = pool.length;
  const o = out ?? new Int32Array(n);
  if (o.length !== n) throw new RangeError(`resample: out has ${o.length} slots for a pool of ${n}`);
  for (let i = 0; i < n; i++) o[i] = pool[rng.int(n)]!;
  return o;
}

export interface Interval {
  /** The (1 − level)/2 quantile of the replicates. */
  lo: number;
  /** The median of the replicates. */
  median: number;
  /** The (1 + level)/2 quantile of the replicates. */
  hi: number;
  level: number;
  /** Cluster bootstrap only: resamples whose statistic was undefined (NaN), left out of the quantiles. */
  undefined?: number;
}

/** The percentile interval of the replicates at the given level (default .95: 2.5 % and 97.5 %). */
export function percentileInterval(replicates: ArrayLike<number>, level = 0.95): Interval {
  if (!(level > 0 && level < 1)) throw new RangeError(`percentileInterval: level must be in (0, 1), got ${level}`);
  const sorted = Float64Array.from(replicates).sort();
  return {
    lo: quantileSorted(sorted, (1 - level) / 2),
    median: quantileSorted(sorted, 0.5),
    hi: quantileSorted(sorted, (1 + level) / 2),
    level,
  };
}

export interface BootstrapOptions {
  /** Number of resamples B. */
  resamples: number;
  seed: number;
  /** Interval level, default .95. */
  level?: number;
}

export interface BootstrapResult<K extends string> {
  /** One record of statistics per resample, in resample order. */
  replicates: Record<K, number>[];
  /** The percentile interval of each statistic over the replicates. */
  intervals: Record<K, Interval>;
}

/**
 * Runs statistic on B resamples of the pool (the item indices 0..n−1 when pool is a number).
 * The sample array passed to statistic is reused between calls: copy it to keep it.
 */
export function bootstrap<K extends string>(
  pool: number | ArrayLike<number>,
  options: BootstrapOptions,
  statistic: (sample: Int32Array) => Record<K, number>,
): BootstrapResult<K> {
  if (!Number.isInteger(options.resamples) || options.resamples < 1) {
    throw new RangeError(`bootstrap: resamples must be a positive integer, got ${options.resamples}`);
  }
  const items = typeof pool === 'number' ? Int32Array.from({ length: pool }, (_, i) => i) : pool;
  const rng = createRng(options.seed);
  const sample = new Int32Array(items.length);
  const replicates: Record<K, number>[] = [];
  for (let r = 0; r < options.resamples; r++) replicates.push(statistic(resample(rng, items, sample)));
  const intervals = {} as Record<K, Interval>;
  for (const key of Object.keys(replicates[0]!) as K[]) {
    intervals[key] = percentileInterval(
      replicates.map((rep) => rep[key]),
      options.level,
    );
  }
  return { replicates, intervals };
}

/** A seed for stream `stream` derived from a base seed, so folds get independent resamples. */
export function deriveStreamSeed(seed: number, stream: number): number {
  return (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
}
