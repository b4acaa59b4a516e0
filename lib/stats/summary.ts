// Summary statistics of one sample: mean, variance, median, quantile (Hyndman & Fan type 7) and
// the mean absolute error between two samples. Pure functions over ArrayLike<number>.
// Conventions shared by lib/stats: a statistic that is undefined for the data (an empty sample,
// a sample of one for the n−1 variance) is NaN, which no gate check passes; arguments that are
// wrong in kind (mismatched lengths, p outside [0, 1]) throw a RangeError.

/** Throws unless a and b have the same length; returns that length. */
export function sameLength(a: ArrayLike<number>, b: ArrayLike<number>, what: string): number {
  if (a.length !== b.length)
    throw new RangeError(`${what}: the two samples differ in length (${a.length} vs ${b.length})`);
  return a.length;
}

/** Arithmetic mean; NaN for an empty sample. */
export function mean(xs: ArrayLike<number>): number {
  const n = xs.length;
  if (n === 0) return NaN;
  let s = 0;
  for (let i = 0; i < n; i++) s += xs[i]!;
  return s / n;
}

/**
 * Variance with divisor n − ddof: ddof 1 (the default) is the unbiased sample variance, ddof 0
 * the population variance. Two-pass (mean first), which keeps precision for data far from 0.
 * NaN when n − ddof ≤ 0.
 */
export function variance(xs: ArrayLike<number>, ddof = 1): number {
  const n = xs.length;
  if (n - ddof <= 0) return NaN;
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < n; i++) {
    const d = xs[i]! - m;
    s += d * d;
  }
  return s / (n - ddof);
}

/**
 * The p-quantile of values already sorted ascending, by linear interpolation between order
 * statistics (Hyndman & Fan 1996 type 7; R's default, numpy's 'linear'): with h = (n − 1)·p,
 * Q(p) = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋ + 1] − x[⌊h⌋]), 0-based. NaN for no values.
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantile: p must be in [0, 1], got ${p}`);
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const a = sorted[lo]!;
  if (lo + 1 >= n) return a;
  return a + (h - lo) * (sorted[lo + 1]! - a);
}

/** The p-quantile (type 7, see quantileSorted) of unsorted values; the input is not modified. */
export function quantile(xs: ArrayLike<number>, p: number): number {
  return quantileSorted(Float64Array.from(xs).sort(), p);
}

/** The median: the type-7 0.5-quantile, i.e. the mean of the two middle values for even n. */
export function median(xs: ArrayLike<number>): number {
  return quantile(xs, 0.5);
}

/** Mean absolute error (1/n)·Σ|a_i − b_i|; NaN for empty samples. */
export function mae(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = sameLength(a, b, 'mae');
  if (n === 0) return NaN;
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.abs(a[i]! - b[i]!);
  return s / n;
}
