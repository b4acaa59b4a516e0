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

export interface Histogram {
  /** Bin width; bin k holds values in [k*width, (k+1)*width). */
  bin_width: number;
  /** Non-empty bins in order: from = k*width (inclusive), to = (k+1)*width (exclusive). */
  bins: { from: number; to: number; count: number }[];
}

/** A fixed-width histogram of the non-null values. */
export function histogram(values: readonly (number | null)[], width: number): Histogram {
  const counts = new Map<number, number>();
  for (const x of values) {
    if (x === null) continue;
    const k = Math.floor(x / width + 1e-9);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const bins = [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([k, count]) => ({ from: round4(k * width), to: round4((k + 1) * width), count }));
  return { bin_width: width, bins };
}
