// The built-in engine's data: the balanced pool's scenarios split into training and held-out
// scenarios (the split that selects the best checkpoint), the calibrated weights, and the reward
// and environment options. The split is by a seeded hash of the source question (isHoldout): no
// held-out scenario shares its source question with a training scenario, and it does not depend on
// file order. The ppo_eval gate evaluates on the shadow set instead, which the pool never renders.
import { RuleError, createRng } from 'rc1-build';
import { deriveSeed } from '../data/index.ts';
import { readScenarios, type RolloutScenario } from '../rollouts/index.ts';
import type { TrainConfig } from './config.ts';
import type { EnvOptions } from './env/dialogue-env.ts';
import { readWeights, type RewardOptions } from './env/reward.ts';
import { scenarioSpecs, type EnvScenario } from './env/scenario-spec.ts';

/**
 * Whether a source question is held out of training (share `holdout`, decided by a hash of the
 * source id alone: the sft target and every seed's run share one split).
 */
export function isHoldout(sourceId: string, holdout: number): boolean {
  return holdout > 0 && createRng(deriveSeed(0, `holdout:${sourceId}`)).next() < holdout;
}

/** Splits by source question: every rendering of a held-out source question is held out, so the two sides share none. */
export function splitHoldout<T extends { source_id: string }>(
  scenarios: readonly T[],
  holdout: number,
): { train: T[]; holdout: T[] } {
  const train: T[] = [];
  const held: T[] = [];
  for (const s of scenarios) (isHoldout(s.source_id, holdout) ? held : train).push(s);
  return { train, holdout: held };
}

export function rewardOptions(cfg: Readonly<TrainConfig>): RewardOptions {
  return { ...cfg.reward };
}

export interface TrainingData {
  scenarios: RolloutScenario[];
  train: EnvScenario[];
  holdout: EnvScenario[];
  env: EnvOptions;
}

/** Reads the scenario files and the weights file of the train target's inputs (groups scenarios and weights). */
export async function loadTrainingData(
  cfg: Readonly<TrainConfig>,
  inputs: Readonly<Record<string, readonly string[]>>,
  root: string,
): Promise<TrainingData> {
  const files = [...(inputs.scenarios ?? [])];
  if (files.length === 0)
    throw new RuleError(
      "train: the `scenarios` input group is empty (declare the balanced pool: target('balanced_pool', 'pool'))",
    );
  const [weightsFile, ...more] = inputs.weights ?? [];
  if (!weightsFile || more.length)
    throw new RuleError(
      `train: the \`weights\` input group must hold the weights file alone (declare target('weights', 'weights') or configs/weights.json), got ${(inputs.weights ?? []).length} paths`,
    );
  const scenarios = await readScenarios(files, root);
  const { train, holdout } = splitHoldout(scenarios, cfg.env.holdout);
  if (train.length === 0)
    throw new RuleError(`train: no training scenario left after holding out ${cfg.env.holdout} of ${scenarios.length}`);
  const weights = await readWeights(
    weightsFile,
    weightsFile.startsWith(root) ? weightsFile.slice(root.length + 1) : weightsFile,
  );
  return {
    scenarios,
    train: scenarioSpecs(train),
    holdout: scenarioSpecs(holdout),
    env: { maxTurns: cfg.env.max_turns, weights, reward: rewardOptions(cfg), noise: { ...cfg.env.noise } },
  };
}
