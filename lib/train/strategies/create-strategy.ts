// Builds the configured strategy for the tfjs engine: ppo (the difficulty-aware sampler over the
// training scenarios) or dpo (preference pairs from the `rollouts` and `scores` input groups).
import { RuleError } from 'rc1-build';
import type { Strategy } from '../api.ts';
import type { TrainConfig } from '../config.ts';
import type { TrainingData } from '../data.ts';
import { ScenarioSampler } from '../env/sampler.ts';
import type { TfjsModelHandle } from '../engines/tfjs/handle.ts';
import type { Params } from '../mlp.ts';
import type { TrainRng } from '../rng.ts';
import { buildPairs } from './dpo-pairs.ts';
import { DpoStrategy } from './dpo.ts';
import { PpoStrategy } from './ppo.ts';

export async function createStrategy(
  cfg: Readonly<TrainConfig>,
  data: TrainingData,
  rng: TrainRng,
  reference: Params,
  inputs: Readonly<Record<string, readonly string[]>>,
  root: string,
  log: (line: string) => void,
): Promise<Strategy<TfjsModelHandle, unknown>> {
  switch (cfg.strategy) {
    case 'ppo':
      return new PpoStrategy(cfg, new ScenarioSampler(data.train, cfg.sampling), data.env, rng) as Strategy<
        TfjsModelHandle,
        unknown
      >;
    case 'dpo': {
      const rollouts = [...(inputs.rollouts ?? [])];
      const scores = [...(inputs.scores ?? [])];
      if (rollouts.length === 0 || scores.length === 0) {
        throw new RuleError(
          "train: strategy dpo needs the `rollouts` (target('rollouts_pool')) and `scores` (target('scores', 'scores')) input groups",
        );
      }
      const { pairs, stats } = await buildPairs(rollouts, scores, data.train, data.env, reference, root);
      log(
        `dpo: ${stats.pairs} preference pairs (best vs worst RC1 reward among other action sequences) from ${stats.scenarios} training scenarios; ${stats.noPair} without a pair (${stats.sameActions} of them because every lower-reward candidate takes the best one's actions)`,
      );
      if (pairs.length === 0)
        throw new RuleError(
          'train: strategy dpo found no preference pair: every training scenario has fewer than two scored candidates, or they tie',
        );
      return new DpoStrategy(cfg, pairs, rng) as Strategy<TfjsModelHandle, unknown>;
    }
  }
}
