// RC1's reward for one training or evaluation episode — the evaluation half's definitions
// (lib/evaluation/reward.ts: weightedScore, overclarPenalty, difficultyFactor; the same formula
// the shadow run and the over-clarification ablation gate), adapted to the environment's episodes:
//   reward = (Σ_d w_d · score_d − penalty) × (1 + β (I[hard] − I[easy]))
//   penalty = α · min(c, cap) when the item needs no clarification and the policy asked c times
//             (0 when it needs one, or when use_overclar_penalty is false)
// w are the calibrated weights of configs/weights.json (read by the evaluation half's reader).
// The one difference: an episode whose scenario has no difficulty bucket (a shadow-set scenario
// played without one) gets the factor 1, where the evaluation half refuses to score it.
import { RuleError } from 'rc1-build';
import {
  difficultyFactor as bucketFactor,
  overclarPenalty as penaltyOf,
  weightedScore,
  type Weights,
} from '../../evaluation/reward.ts';
import { readWeights as readWeightsFile } from '../../evaluation/weights-file.ts';
import type { Difficulty } from '../../rollouts/index.ts';
import { DIMENSIONS, type DimScores } from '../../scoring/types.ts';

export { weightedScore, type Weights };

export interface RewardOptions {
  use_overclar_penalty: boolean;
  alpha: number;
  cap: number;
  beta: number;
}

export interface RewardItem {
  needsClarification: boolean;
  clarifications: number;
  difficulty: Difficulty | null;
}

/** α · min(c, cap) on items that need no clarification (0 with the penalty off). */
export function overclarPenalty(
  item: Pick<RewardItem, 'needsClarification' | 'clarifications'>,
  o: Pick<RewardOptions, 'use_overclar_penalty' | 'alpha' | 'cap'>,
): number {
  if (!o.use_overclar_penalty) return 0;
  return penaltyOf(
    { needs_clarification: item.needsClarification, clarifications: item.clarifications },
    { alpha: o.alpha, cap: o.cap },
  );
}

/** 1 + β (I[hard] − I[easy]); 1 for an episode without a bucket. */
export function difficultyFactor(d: Difficulty | null, beta: number): number {
  return d === null ? 1 : bucketFactor(d, beta);
}

export function rc1Reward(scores: Readonly<DimScores>, w: Weights, item: RewardItem, o: RewardOptions): number {
  return (weightedScore(scores as DimScores, w) - overclarPenalty(item, o)) * difficultyFactor(item.difficulty, o.beta);
}

/** The calibrated weights (the evaluation half's reader), refused unless they sum to 1: training never runs on unnormalised weights. */
export async function readWeights(file: string, shown = file): Promise<Weights> {
  const w = readWeightsFile(file, shown);
  const sum = DIMENSIONS.reduce((a, d) => a + w[d], 0);
  if (Math.abs(sum - 1) > 1e-6)
    throw new RuleError(`${shown}: the weights sum to ${sum}, not 1: rebuild the weights target`);
  return Object.freeze({ ...w });
}
