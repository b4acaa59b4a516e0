// The two scorings RC1 compares (docs/rc1.md, targets shadow_run, overclar_ablation,
// train), for one scored rollout with judge medians m_d over the seven dimensions:
//   old score   s_old = Σ_d w_old[d]·m_d, w_old = reward.old_weights normalised by their sum
//   penalty     p = α·min(c, cap) when needs_clarification = false, else 0 (c = clarifying
//               questions asked; α, cap = overclar.alpha, overclar.cap)
//   new reward  r_new = (Σ_d w_cal[d]·m_d − p) · (1 + β·(I[hard] − I[easy])), w_cal the
//               calibrated weights (configs/weights.json), β = reward.beta; the bucket is the
//               scenario's difficulty (balanced pool, or computed for the shadow set)
// The shadow run gates r_new before the difficulty factor (shadow-run.ts says why).
// The item weight (1 stable, .5 unstable: scores target) is a SAMPLE weight, never a factor of
// the reward (halving an unstable item's reward would rank it lower, not count it less): it
// weighs the row in the calibration fit and the rollout in its scenario's mean in the shadow run.
import { RuleError } from 'rc1-build';
import type { Difficulty } from '../rollouts/rollout.ts';
import { DIMENSIONS, type DimScores, type Dimension } from '../scoring/types.ts';
import type { EvalItem } from './items.ts';

export type Weights = Readonly<Record<Dimension, number>>;

export interface RewardSettings {
  /** The calibrated weights w_cal. */
  weights: Weights;
  /** α, cap of the penalty; null when the penalty is off. */
  penalty: { alpha: number; cap: number } | null;
  /** β of the difficulty factor. */
  beta: number;
}

export const REWARD_DEFINITIONS = {
  old_score: 's_old = Σ_d w_old[d]·median_d over the 7 dimensions; w_old = reward.old_weights normalised by their sum',
  penalty: 'p = α·min(c, cap) on items with needs_clarification = false (c = clarifying questions asked), 0 otherwise',
  new_reward: 'r_new = (Σ_d w_cal[d]·median_d − p)·(1 + β·(I[hard] − I[easy])), w_cal = configs/weights.json',
  difficulty_factor: '1 + β when the scenario is hard, 1 − β when easy, 1 when medium',
  shadow_run_reward:
    'the shadow run gates r_new before the difficulty factor (docs/rc1.md: calibrated weights and penalty); the factor re-ranks across buckets on purpose and is reported beside',
  item_weight:
    "the scores target's item weight (1 stable, scoring.aggregate.unstable_weight unstable) is a sample weight, not a reward factor: " +
    "it weighs the row in the calibration fit and the rollout in its scenario's mean",
} as const;

/** w normalised by its sum, in DIMENSIONS order as a record. */
export function normalise(w: Readonly<Record<string, number>>): Weights {
  let sum = 0;
  for (const d of DIMENSIONS) {
    const v = w[d];
    if (typeof v !== 'number' || !(v >= 0)) throw new RuleError(`weights: ${d} must be a number ≥ 0, got ${String(v)}`);
    sum += v;
  }
  if (!(sum > 0)) throw new RuleError('weights: at least one weight must be positive');
  return Object.fromEntries(DIMENSIONS.map((d) => [d, w[d]! / sum])) as Weights;
}

/** Σ_d w[d]·m_d. */
export function weightedScore(m: DimScores, w: Weights): number {
  let s = 0;
  for (const d of DIMENSIONS) s += w[d] * m[d];
  return s;
}

export function overclarPenalty(
  item: Pick<EvalItem, 'needs_clarification' | 'clarifications'>,
  p: { alpha: number; cap: number },
): number {
  return item.needs_clarification ? 0 : p.alpha * Math.min(item.clarifications, p.cap);
}

export function difficultyFactor(bucket: Difficulty, beta: number): number {
  return 1 + beta * ((bucket === 'hard' ? 1 : 0) - (bucket === 'easy' ? 1 : 0));
}

/** r_new of an item whose scenario has a bucket; m defaults to the item's judge medians. */
export function newReward(
  item: Pick<EvalItem, 'rollout_id' | 'difficulty' | 'needs_clarification' | 'clarifications' | 'scores'>,
  s: RewardSettings,
  m: DimScores = item.scores,
): number {
  if (item.difficulty === null)
    throw new RuleError(
      `rollout ${item.rollout_id}: no difficulty bucket, so the difficulty factor of the new reward is undefined`,
    );
  const p = s.penalty ? overclarPenalty(item, s.penalty) : 0;
  return (weightedScore(m, s.weights) - p) * difficultyFactor(item.difficulty, s.beta);
}

export function oldScore(item: Pick<EvalItem, 'scores'>, oldWeights: Weights, m: DimScores = item.scores): number {
  return weightedScore(m, oldWeights);
}
