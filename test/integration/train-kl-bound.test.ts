// The KL controls of the ppo strategy: at a learning rate far too high for the reference, the
// realised KL(π ‖ π_ref) on every step's states stays within kl_stop × target_kl (projection toward
// the reference + per-epoch early stop + adaptive β); with the bound set out of reach, the same run
// leaves it far behind — so the bound is the controls' doing, not the run's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTf } from '../../lib/train/engines/tfjs/backend.ts';
import { TfjsModelHandle } from '../../lib/train/engines/tfjs/handle.ts';
import { TfModel } from '../../lib/train/engines/tfjs/model.ts';
import { N_ACTIONS } from '../../lib/train/env/dialogue-env.ts';
import { OBS_DIM } from '../../lib/train/env/features.ts';
import { ScenarioSampler } from '../../lib/train/env/sampler.ts';
import { scenarioSpec } from '../../lib/train/env/scenario-spec.ts';
import { cloneParams, initParams } from '../../lib/train/mlp.ts';
import { TrainRng } from '../../lib/train/rng.ts';
import { PpoStrategy } from '../../lib/train/strategies/ppo.ts';
import { DIMENSIONS } from '../../lib/scoring/types.ts';
import { makeScenarios, smallConfig } from '../helpers/train-fixtures.ts';

async function realisedKl(targetKl: number): Promise<number[]> {
  const cfg = smallConfig({ ppo: { lr: 0.05, target_kl: targetKl, rollout_len: 64 } });
  const tfh = await loadTf('wasm');
  const rng = new TrainRng(3);
  const shape = { obsDim: OBS_DIM, hidden: cfg.model.hidden, actions: N_ACTIONS };
  const init = initParams(shape, rng);
  const model = new TfModel(tfh.tf, init.specs, init, cfg.adam);
  const h = new TfjsModelHandle(tfh.tf, model, cloneParams(init), shape, new AbortController().signal);
  const weights = Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / 7])) as Record<(typeof DIMENSIONS)[number], number>;
  const env = { maxTurns: 8, weights, reward: { ...cfg.reward }, noise: { ...cfg.env.noise } };
  const s = new PpoStrategy(cfg, new ScenarioSampler(makeScenarios(45).map(scenarioSpec), cfg.sampling), env, rng);
  const kls: number[] = [];
  try {
    for (let step = 0; step < 8; step++) kls.push(s.update(step, h, s.collect(step, h), 0.05).kl);
  } finally {
    model.dispose();
  }
  return kls;
}

test('at a learning rate far too high, the realised KL to the reference stays within kl_stop × target_kl on every step; without a reachable bound it does not', async () => {
  const held = await realisedKl(0.03);
  const bound = 1.5 * 0.03;
  for (const [i, kl] of held.entries()) assert.ok(kl <= bound + 1e-9, `step ${i + 1}: KL ${kl} > ${bound}`);
  const free = await realisedKl(100);
  assert.ok(Math.max(...free) > 3 * bound, `uncontrolled KL ${Math.max(...free)}`);
});
