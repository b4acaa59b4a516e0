// Spearman's ρ and Kendall's τ-b of the same pair of variables from one sort: the (x, y) order
// Kendall's method needs also groups x's ties, which is all average ranking needs. When y is
// fixed across many calls (success on a held-out fold, scored by one fit after another), its
// ranks can be computed once and passed in. Same values as spearman() and kendallTauB().
import { pearson } from './correlation.ts';
import { kendallTauBInOrder, orderByXThenY } from './kendall-tau-b.ts';
import { assertFinite, averageRanksInOrder, rankAverage } from './rank-average.ts';
import { sameLength } from './summary.ts';

export interface RankCorrelations {
  spearman: number;
  kendall: number;
}

/** Spearman's ρ and Kendall's τ-b of x and y; yRanks, if given, must be rankAverage(y). */
export function rankCorrelations(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  yRanks?: ArrayLike<number>,
): RankCorrelations {
  sameLength(x, y, 'rankCorrelations');
  assertFinite(x, 'rankCorrelations x');
  assertFinite(y, 'rankCorrelations y');
  if (yRanks && yRanks.length !== y.length)
    throw new RangeError(`rankCorrelations: ${y.length} values but ${yRanks.length} ranks`);
  const order = orderByXThenY(x, y);
  return {
    spearman: pearson(averageRanksInOrder(x, order), yRanks ?? rankAverage(y)),
    kendall: kendallTauBInOrder(x, y, order),
  };
}
