// How much the reasoning bucket says about the need for clarification: Cramér's V of the
// bucket × needs_clarification contingency table (3 × 2). 0: the bucket shares are the same with
// and without clarification; 1: the bucket gives the flag away (as when clarification was itself a
// difficulty vote). The gated value is Bergsma's (2013) bias-corrected V, because the plain V of
// two independent axes is above 0 by chance, markedly so in the small per-task samples of an
// early scale stage (about sqrt(1/n)); the plain V is reported beside it. Undefined (null) when
// either axis has one value only — no scenario needs clarification, or all are in one bucket.
import { BUCKETS, type Bucket } from './bands.ts';

export const ASSOCIATION_DEFINITION =
  "Cramér's V of the 3 × 2 table bucket × needs_clarification over its non-empty rows (r) and columns (k), bias-corrected (Bergsma 2013): φ² = χ²/n, φ²₊ = max(0, φ² − (k−1)(r−1)/(n−1)), k̃ = k − (k−1)²/(n−1), r̃ = r − (r−1)²/(n−1), V = sqrt(φ²₊ / min(k̃−1, r̃−1)); cramers_v_raw = sqrt(φ² / min(k−1, r−1)). 0 = the bucket shares are the same with and without clarification, 1 = the bucket gives the flag away; null (not applicable) when either axis has a single value";

export interface Association {
  n: number;
  /** Scenarios per bucket, with and without the need for clarification. */
  table: Record<Bucket, { clarify: number; plain: number }>;
  /** Share of each bucket's scenarios that need clarification (null for an empty bucket). */
  clarify_rate_by_bucket: Record<Bucket, number | null>;
  /** Bias-corrected V (the gated value). */
  cramers_v: number | null;
  cramers_v_raw: number | null;
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

export function association(items: readonly { bucket: Bucket; clarify: boolean }[]): Association {
  const table = Object.fromEntries(BUCKETS.map((b) => [b, { clarify: 0, plain: 0 }])) as Association['table'];
  for (const it of items) table[it.bucket][it.clarify ? 'clarify' : 'plain'] += 1;
  const n = items.length;
  const rows = BUCKETS.filter((b) => table[b].clarify + table[b].plain > 0);
  const cols = (['clarify', 'plain'] as const).filter((c) => rows.some((b) => table[b][c] > 0));
  let v: number | null = null;
  let raw: number | null = null;
  if (rows.length >= 2 && cols.length >= 2) {
    let chi2 = 0;
    const colSum = (c: 'clarify' | 'plain') => rows.reduce((a, b) => a + table[b][c], 0);
    for (const b of rows) {
      const rowSum = table[b].clarify + table[b].plain;
      for (const c of cols) {
        const expected = (rowSum * colSum(c)) / n;
        chi2 += (table[b][c] - expected) ** 2 / expected;
      }
    }
    const r = rows.length;
    const k = cols.length;
    const phi2 = chi2 / n;
    raw = round4(Math.sqrt(phi2 / (Math.min(r, k) - 1)));
    const phi2c = Math.max(0, phi2 - ((k - 1) * (r - 1)) / (n - 1));
    const denom = Math.min(k - (k - 1) ** 2 / (n - 1) - 1, r - (r - 1) ** 2 / (n - 1) - 1);
    v = denom > 0 ? round4(Math.min(1, Math.sqrt(phi2c / denom))) : raw;
  }
  const rate = Object.fromEntries(
    BUCKETS.map((b) => {
      const t = table[b].clarify + table[b].plain;
      return [b, t === 0 ? null : round4(table[b].clarify / t)];
    }),
  ) as Record<Bucket, number | null>;
  return { n, table, clarify_rate_by_bucket: rate, cramers_v: v, cramers_v_raw: raw };
}
