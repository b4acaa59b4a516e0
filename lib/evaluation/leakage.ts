// Label leakage in the judge: a single score dimension that, on its own, separates successes from
// failures almost perfectly is reading the outcome (e.g. a judge that sees the reference answer
// and scores correctness by matching it), not judging the trajectory. Measure: for each
// dimension, the best single-threshold rule "success iff score ≥ t" over all thresholds strictly
// inside the dimension's range, scored by BALANCED agreement (the mean of the share of successes
// and of failures it classifies right) so a high base rate of success does not look like
// agreement; the raw share of items classified right at that threshold is reported beside.
// 0.5 is chance; 1 is a dimension that is the label.

export interface DimensionAgreement {
  /** (TPR + TNR)/2 at the best threshold. */
  balanced: number;
  /** Share of all items the rule classifies right at that threshold. */
  share: number;
  /** The threshold t of "success iff score ≥ t" (NaN when the dimension is constant). */
  threshold: number;
}

/** The best single-threshold agreement of one dimension's scores with success (see the module comment). */
export function dimensionAgreement(scores: ArrayLike<number>, success: ArrayLike<number>): DimensionAgreement {
  const n = scores.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  let pos = 0;
  for (let i = 0; i < n; i++) pos += success[i]! > 0 ? 1 : 0;
  const neg = n - pos;
  if (pos === 0 || neg === 0) return { balanced: NaN, share: NaN, threshold: NaN };
  // Walking up the sorted scores: below the cut everything is predicted failure.
  let negBelow = 0;
  let posBelow = 0;
  let best: DimensionAgreement = { balanced: NaN, share: NaN, threshold: NaN };
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    if (success[i]! > 0) posBelow++;
    else negBelow++;
    const next = order[k + 1];
    if (next === undefined || scores[next]! === scores[i]!) continue;
    const tpr = (pos - posBelow) / pos;
    const tnr = negBelow / neg;
    const balanced = (tpr + tnr) / 2;
    if (!(balanced <= best.balanced))
      best = { balanced, share: (pos - posBelow + negBelow) / n, threshold: scores[next]! };
  }
  return best;
}

/**
 * The dimension that agrees most with success, among those whose agreement is defined: a dimension
 * with constant scores has no threshold inside its range (NaN), cannot separate anything and is
 * skipped (a NaN would otherwise win or lose every comparison by its position). null when none is
 * defined (constant scores everywhere, or every rollout has the same success label).
 */
export function worstDimension(
  agreement: Record<string, DimensionAgreement>,
): { dimension: string; agreement: DimensionAgreement } | null {
  let worst: { dimension: string; agreement: DimensionAgreement } | null = null;
  for (const [dimension, a] of Object.entries(agreement)) {
    if (!Number.isNaN(a.balanced) && (worst === null || a.balanced > worst.agreement.balanced))
      worst = { dimension, agreement: a };
  }
  return worst;
}
