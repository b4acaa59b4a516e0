// Summary statistics for the difficulty report: quantiles (linear interpolation between order
// statistics, numpy's default), and fixed-width histograms listing only the non-empty bins.

/** The q-quantile of sorted values (linear interpolation); null for no values. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number | null {
  if (sorted.length === 0) return null;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (pos - lo);
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

export interface Summary {
  n: number;
  min: number | null;
  p10: number | null;
  p50: number | null;
  p90: number | null;
  max: number | null;
  mean: number | null;
}

/** n, min, p10, p50, p90, max and mean of the non-null values. */
export function summarise(values: readonly (number | null)[]): Summary {
  return summariseCounts(values) ?? summariseSorted(values);
}

/** summarise() by its definition: the values sorted. */
export function summariseSorted(values: readonly (number | null)[]): Summary {
  // A Float64Array sorts numerically without a comparator call per pair (metrics are never NaN;
  // a -0 would sort before 0, which JSON writes as 0 either way).
  const xs = Float64Array.from(values.filter((x): x is number => x !== null)).sort();
  const q = (p: number): number | null => {
    const v = quantileSorted(xs, p);
    return v === null ? null : round4(v);
  };
  return {
    n: xs.length,
    min: xs[0] ?? null,
    p10: q(0.1),
    p50: q(0.5),
    p90: q(0.9),
    max: xs[xs.length - 1] ?? null,
    mean: xs.length === 0 ? null : round4(xs.reduce((a, b) => a + b, 0) / xs.length),
  };
}

/** Integer values spanning at most this many: summarised from their counts, without a sort. */
const MAX_COUNTED_SPAN = 1 << 16;

/**
 * summarise() of integer values in a small range (most metrics are counts), from a count per value
 * instead of a sort: the same order statistics, and the same mean (a sum of integers below 2^53 is
 * exact in any order). null where a value is not an integer or the range is wide.
 */
function summariseCounts(values: readonly (number | null)[]): Summary | null {
  let n = 0;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const x of values) {
    if (x === null) continue;
    if (!Number.isSafeInteger(x)) return null;
    n += 1;
    sum += x;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (n === 0 || max - min >= MAX_COUNTED_SPAN || !Number.isSafeInteger(sum)) return null;
  const counts = new Uint32Array(max - min + 1);
  for (const x of values) if (x !== null) counts[x - min]! += 1;
  /** The i-th smallest value (0-based). */
  const at = (i: number): number => {
    let seen = 0;
    for (let v = 0; v < counts.length; v++) {
      seen += counts[v]!;
      if (seen > i) return v + min;
    }
    return max;
  };
  const q = (p: number): number => {
    const pos = (n - 1) * p;
    const lo = Math.floor(pos);
    const hi = Math.ceil(pos);
    const a = at(lo);
    const b = hi === lo ? a : at(hi);
    return round4(a + (b - a) * (pos - lo));
  };
  return { n, min, p10: q(0.1), p50: q(0.5), p90: q(0.9), max, mean: round4(sum / n) };
}

export interface Histogram {
  /** Bin width; bin k holds values in [k*width, (k+1)*width). */
  bin_width: number;
  /** Non-empty bins in order: from = k*width (inclusive), to = (k+1)*width (exclusive). */
  bins: { from: number; to: number; count: number }[];
}

/** A fixed-width histogram of the non-null values. */
export function histogram(values: readonly (number | null)[], width: number): Histogram {
  // Bin indices 0..SMALL_BINS−1 (every metric's, at the shipped widths) are counted in an array;
  // any other (a negative value, a very long text) in a Map. Bins in ascending order either way.
  const small = new Uint32Array(SMALL_BINS);
  let other: Map<number, number> | undefined;
  for (const x of values) {
    if (x === null) continue;
    const k = Math.floor(x / width + 1e-9);
    if (k >= 0 && k < SMALL_BINS) small[k]! += 1;
    else {
      other ??= new Map();
      other.set(k, (other.get(k) ?? 0) + 1);
    }
  }
  const counted: [number, number][] = other ? [...other.entries()] : [];
  for (let k = 0; k < SMALL_BINS; k++) if (small[k]! > 0) counted.push([k, small[k]!]);
  if (other) counted.sort((a, b) => a[0] - b[0]);
  const bins = counted.map(([k, count]) => ({ from: round4(k * width), to: round4((k + 1) * width), count }));
  return { bin_width: width, bins };
}

const SMALL_BINS = 1024;
