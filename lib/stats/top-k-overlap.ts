// Top-k% overlap between two scorings of the same items: |top-k by A ∩ top-k by B| / k with
// k = ⌈p·n⌉. Ties at the cut-off are shared out, not broken by item order: an item tied with
// the k-th largest score counts as a member with probability (k − #strictly above) / #tied, and
// the overlap is the expected overlap when each scoring breaks its ties uniformly at random,
// independently of the other. That is deterministic, independent of how the items are ordered,
// and equals the plain definition whenever neither scoring has a tie at its cut-off.
import { assertFinite } from './rank-average.ts';
import { sameLength } from './summary.ts';

/** k = ⌈p·n⌉ for p in (0, 1], computed as ⌈p·n − 1e-9⌉ so that 0.07·100 gives 7, not 8. */
export function topCount(p: number, n: number): number {
  if (!(p > 0 && p <= 1)) throw new RangeError(`top-k: p must be in (0, 1], got ${p}`);
  return Math.min(n, Math.max(1, Math.ceil(p * n - 1e-9)));
}

/**
 * Membership of each item in the top k of a scoring (higher is better): 1 above the cut-off,
 * 0 below, and (k − above) / tied for the items tied at the k-th largest score.
 */
export function topMembership(scores: ArrayLike<number>, k: number): Float64Array {
  const n = scores.length;
  if (!Number.isInteger(k) || k < 1 || k > n)
    throw new RangeError(`topMembership: k must be an integer in [1, ${n}], got ${k}`);
  const sorted = Float64Array.from(scores).sort();
  const cut = sorted[n - k]!;
  let above = 0;
  let tied = 0;
  for (let i = 0; i < n; i++) {
    if (scores[i]! > cut) above++;
    else if (scores[i]! === cut) tied++;
  }
  const share = (k - above) / tied;
  const m = new Float64Array(n);
  for (let i = 0; i < n; i++) m[i] = scores[i]! > cut ? 1 : scores[i]! === cut ? share : 0;
  return m;
}

/** Expected |top-k by a ∩ top-k by b| / k, k = ⌈p·n⌉ (see the module comment for ties). NaN for n = 0. */
export function topKOverlap(a: ArrayLike<number>, b: ArrayLike<number>, p: number): number {
  const n = sameLength(a, b, 'topKOverlap');
  assertFinite(a, 'topKOverlap a');
  assertFinite(b, 'topKOverlap b');
  if (n === 0) return NaN;
  const k = topCount(p, n);
  const ma = topMembership(a, k);
  const mb = topMembership(b, k);
  let s = 0;
  for (let i = 0; i < n; i++) s += ma[i]! * mb[i]!;
  return s / k;
}
