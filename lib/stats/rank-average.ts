// Ranking with average ties ("fractional" ranking, scipy.stats.rankdata method='average'): the
// ranks Spearman's ρ is computed on. Ranks are 1-based; tied values share the mean of the
// positions they occupy, so ranks always sum to n(n + 1)/2.

/** Throws unless every value is a finite number: ranks and sorts of NaN mean nothing. */
export function assertFinite(xs: ArrayLike<number>, what: string): void {
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(xs[i]!)) throw new RangeError(`${what}: value ${i} is ${xs[i]}, not a finite number`);
  }
}

/** Indices 0..n−1 ordered by value ascending, ties by index (a stable, deterministic order). */
export function argsort(xs: ArrayLike<number>): Uint32Array {
  const idx = new Uint32Array(xs.length);
  for (let i = 0; i < idx.length; i++) idx[i] = i;
  return idx.sort((a, b) => xs[a]! - xs[b]! || a - b);
}

/** Average ranks: rank 1 for the smallest value, ties get the mean of their positions. */
export function rankAverage(xs: ArrayLike<number>): Float64Array {
  assertFinite(xs, 'rankAverage');
  return averageRanksInOrder(xs, argsort(xs));
}

/**
 * Average ranks of xs given an order of its indices that sorts xs ascending (any order among
 * equal values, e.g. the (x, y) order Kendall's τ-b sorts by, so one sort can serve both).
 */
export function averageRanksInOrder(xs: ArrayLike<number>, order: ArrayLike<number>): Float64Array {
  const n = xs.length;
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i + 1;
    const v = xs[order[i]!]!;
    while (j < n && xs[order[j]!]! === v) j++;
    // Positions i..j−1 (0-based) are ranks i+1..j; their mean is (i + 1 + j) / 2.
    const r = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) ranks[order[k]!] = r;
    i = j;
  }
  return ranks;
}
