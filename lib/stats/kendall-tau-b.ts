// Kendall's τ-b in O(n log n) by Knight's (1966) method, as scipy.stats.kendalltau does it:
// sort the pairs by (x, y), count the discordant pairs as the swaps a merge sort on y needs,
// and correct for ties with the tie counts of x, of y and of (x, y) jointly. τ-b divides by
// √((n₀ − n₁)(n₀ − n₂)), so ties in either variable are handled (τ-b = τ-a without ties).
import { assertFinite } from './rank-average.ts';
import { sameLength } from './summary.ts';

/** Σ t(t − 1)/2 over runs of equal values in an array already sorted so equal values are adjacent. */
function tiedPairs(sorted: ArrayLike<number>): number {
  let pairs = 0;
  let run = 1;
  for (let i = 1; i <= sorted.length; i++) {
    if (i < sorted.length && sorted[i] === sorted[i - 1]) run++;
    else {
      pairs += (run * (run - 1)) / 2;
      run = 1;
    }
  }
  return pairs;
}

/** Stable bottom-up merge sort of a in place; returns the number of inversions (i < j, a_i > a_j). */
function sortCountingSwaps(a: Float64Array): number {
  const n = a.length;
  let src: Float64Array = a;
  let dst: Float64Array = new Float64Array(n);
  let swaps = 0;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        // Equal values are taken from the left: a tie in y is not a discordant pair.
        if (src[j]! < src[i]!) {
          swaps += mid - i;
          dst[k++] = src[j++]!;
        } else dst[k++] = src[i++]!;
      }
      while (i < mid) dst[k++] = src[i++]!;
      while (j < hi) dst[k++] = src[j++]!;
    }
    [src, dst] = [dst, src];
  }
  if (src !== a) a.set(src);
  return swaps;
}

/** Indices 0..n−1 ordered by x ascending, ties in x by y ascending. */
export function orderByXThenY(x: ArrayLike<number>, y: ArrayLike<number>): Uint32Array {
  const order = new Uint32Array(x.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => x[a]! - x[b]! || y[a]! - y[b]!);
}

/**
 * Kendall's τ-b = (n_c − n_d) / √((n₀ − n₁)(n₀ − n₂)), with n₀ = n(n − 1)/2, n₁ the pairs tied
 * in x, n₂ the pairs tied in y; n_c − n_d = n₀ − n₁ − n₂ + n₃ − 2·n_d where n₃ counts pairs tied
 * in both. NaN when n < 2 or either variable is constant. Counts stay exact in doubles up to
 * n ≈ 10⁸ (n₀ < 2⁵³).
 */
export function kendallTauB(x: ArrayLike<number>, y: ArrayLike<number>): number {
  sameLength(x, y, 'kendallTauB');
  assertFinite(x, 'kendallTauB x');
  assertFinite(y, 'kendallTauB y');
  return kendallTauBInOrder(x, y, orderByXThenY(x, y));
}

/** kendallTauB for finite x and y of equal length, given orderByXThenY(x, y). */
export function kendallTauBInOrder(x: ArrayLike<number>, y: ArrayLike<number>, byX: ArrayLike<number>): number {
  const n = x.length;
  if (n < 2) return NaN;
  // In (x, y) order, pairs tied in x are sorted by y, so they contribute no swaps below.
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    xs[i] = x[byX[i]!]!;
    ys[i] = y[byX[i]!]!;
  }
  const n1 = tiedPairs(xs);
  let n3 = 0;
  let run = 1;
  for (let i = 1; i <= n; i++) {
    if (i < n && xs[i] === xs[i - 1] && ys[i] === ys[i - 1]) run++;
    else {
      n3 += (run * (run - 1)) / 2;
      run = 1;
    }
  }
  const discordant = sortCountingSwaps(ys);
  const n2 = tiedPairs(ys);
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - n1) * (n0 - n2));
  if (denom === 0) return NaN;
  const tau = (n0 - n1 - n2 + n3 - 2 * discordant) / denom;
  return Math.max(-1, Math.min(1, tau));
}
