// Spearman's ρ and Kendall's τ-b of a score x with a BINARY variable s (success 0/1), from two
// native sorts — the fast path the calibration's bootstrap and negative control run thousands of
// times. Same values as rankCorrelations (a test checks it on data with ties):
//   average ranks of x: the successes' and the failures' scores are sorted separately
//   (Float64Array.prototype.sort, no comparator) and walked together tie group by tie group;
//   ρ = Pearson(ranks of x, s): the average ranks of a 0/1 variable are an affine map of s, and
//   Pearson's r is invariant under affine maps, so s itself stands for its ranks;
//   τ-b: with U = Σ_{s_i = 1} rank_i − n₁(n₁ + 1)/2 (Mann–Whitney, ties counted ½), the pairs of
//   unequal s give C − D = 2U − n₁n₀; τ-b = (C − D)/√((P − T_x)(P − T_s)) with P = n(n − 1)/2,
//   T_x = Σ t(t − 1)/2 over the tie groups of x, T_s = n₁(n₁ − 1)/2 + n₀(n₀ − 1)/2.
// NaN when x or s is constant or n < 2, as the general functions.

/** Average ranks of xs (1-based, ties share their mean position) and the tie term Σ t(t − 1)/2. */
export function averageRanksFast(xs: ArrayLike<number>): { ranks: Float64Array; tiePairs: number } {
  const n = xs.length;
  const sorted = Float64Array.from(xs).sort();
  const ranks = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = xs[i]!;
    if (Number.isNaN(v)) throw new RangeError(`averageRanksFast: value ${i} is NaN`);
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (sorted[m]! < v) lo = m + 1;
      else hi = m;
    }
    const less = lo;
    hi = n;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (sorted[m]! <= v) lo = m + 1;
      else hi = m;
    }
    ranks[i] = (less + 1 + lo) / 2;
  }
  let tiePairs = 0;
  for (let i = 0; i < n; ) {
    let j = i + 1;
    while (j < n && sorted[j] === sorted[i]) j++;
    const t = j - i;
    tiePairs += (t * (t - 1)) / 2;
    i = j;
  }
  return { ranks, tiePairs };
}

/** Whether every value is 0 or 1. */
export function isBinary(s: ArrayLike<number>): boolean {
  for (let i = 0; i < s.length; i++) if (s[i] !== 0 && s[i] !== 1) return false;
  return true;
}

/** Spearman's ρ and Kendall's τ-b of x with a 0/1 variable s (see the module comment). */
export function binaryRankCorrelations(
  x: ArrayLike<number>,
  s: ArrayLike<number>,
): { spearman: number; kendall: number } {
  const n = x.length;
  if (s.length !== n)
    throw new RangeError(`binaryRankCorrelations: the two samples differ in length (${n} vs ${s.length})`);
  if (n < 2) return { spearman: NaN, kendall: NaN };
  let n1 = 0;
  for (let i = 0; i < n; i++) {
    if (s[i] === 1) n1++;
    else if (s[i] !== 0) throw new RangeError(`binaryRankCorrelations: s[${i}] is ${s[i]}, not 0 or 1`);
    if (Number.isNaN(x[i])) throw new RangeError(`binaryRankCorrelations: x[${i}] is NaN`);
  }
  const n0 = n - n1;
  if (n1 === 0 || n0 === 0) return { spearman: NaN, kendall: NaN };
  // The successes' and failures' scores, each sorted natively, walked together in tie groups:
  // no index sort and no search. A group of t tied values at positions p+1..p+t has rank p + (t+1)/2.
  const a = new Float64Array(n1);
  const b = new Float64Array(n0);
  for (let i = 0, ia = 0, ib = 0; i < n; i++) {
    if (s[i] === 1) a[ia++] = x[i]!;
    else b[ib++] = x[i]!;
  }
  a.sort();
  b.sort();
  const meanRank = (n + 1) / 2;
  let ia = 0;
  let ib = 0;
  let pos = 0;
  let r1 = 0;
  let ss = 0;
  let tiePairs = 0;
  while (ia < n1 || ib < n0) {
    const v = ib >= n0 || (ia < n1 && a[ia]! <= b[ib]!) ? a[ia]! : b[ib]!;
    let ta = 0;
    let tb = 0;
    while (ia < n1 && a[ia] === v) {
      ia++;
      ta++;
    }
    while (ib < n0 && b[ib] === v) {
      ib++;
      tb++;
    }
    const t = ta + tb;
    const rank = pos + (t + 1) / 2;
    r1 += ta * rank;
    ss += t * (rank - meanRank) ** 2;
    tiePairs += (t * (t - 1)) / 2;
    pos += t;
  }
  return fromRankSums(n, n1, r1, ss, tiePairs);
}

/**
 * ρ and τ-b from the walk's sums: n items, n1 successes, R₁ (the successes' rank sum), Σ t·(rank −
 * r̄)² over tie groups and the tied pairs. Pearson(ranks, s): Σ(r − r̄)(s − s̄) = R₁ − n₁·r̄,
 * Σ(s − s̄)² = n₁n₀/n; τ-b's concordance is 2U − n₁n₀ with U = R₁ − n₁(n₁ + 1)/2.
 */
function fromRankSums(
  n: number,
  n1: number,
  r1: number,
  ss: number,
  tiePairs: number,
): { spearman: number; kendall: number } {
  const n0 = n - n1;
  const pairs = (n * (n - 1)) / 2;
  if (tiePairs === pairs) return { spearman: NaN, kendall: NaN };
  const meanRank = (n + 1) / 2;
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const ts = (n1 * (n1 - 1)) / 2 + (n0 * (n0 - 1)) / 2;
  const clamp = (v: number): number => Math.max(-1, Math.min(1, v));
  return {
    spearman: clamp((r1 - n1 * meanRank) / Math.sqrt(ss * ((n1 * n0) / n))),
    kendall: clamp((2 * u - n1 * n0) / Math.sqrt((pairs - tiePairs) * (pairs - ts))),
  };
}

/**
 * The same two coefficients when the items are already sorted by x (ascending) and item i counts
 * counts[i] times (a bootstrap resample's multiplicities; 0 leaves it out): one linear walk, no
 * sort. For a scoring that is fixed across resamples (the old weights on a held-out fold), the
 * order is computed once and every resample costs O(n).
 */
export function binaryRankCorrelationsSorted(
  sortedX: ArrayLike<number>,
  s: ArrayLike<number>,
  counts: ArrayLike<number>,
): { spearman: number; kendall: number } {
  const m = sortedX.length;
  let n = 0;
  let n1 = 0;
  for (let i = 0; i < m; i++) {
    n += counts[i]!;
    if (s[i] === 1) n1 += counts[i]!;
  }
  const n0 = n - n1;
  if (n < 2 || n1 === 0 || n0 === 0) return { spearman: NaN, kendall: NaN };
  const meanRank = (n + 1) / 2;
  let pos = 0;
  let r1 = 0;
  let ss = 0;
  let tiePairs = 0;
  for (let i = 0; i < m; ) {
    let t = 0;
    let ta = 0;
    let j = i;
    for (; j < m && sortedX[j] === sortedX[i]; j++) {
      t += counts[j]!;
      if (s[j] === 1) ta += counts[j]!;
    }
    i = j;
    if (t === 0) continue;
    const rank = pos + (t + 1) / 2;
    r1 += ta * rank;
    ss += t * (rank - meanRank) ** 2;
    tiePairs += (t * (t - 1)) / 2;
    pos += t;
  }
  return fromRankSums(n, n1, r1, ss, tiePairs);
}
