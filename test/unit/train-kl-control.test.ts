// The KL controller of the ppo strategy (lib/train/strategies/ppo.ts, docs/kl-control.md) and the
// ppo_eval check it answers to (kl_rollout_max_over_target: the largest KL to the reference of a
// policy that generated a training batch, over every step, / target_kl <= 1.5). At a learning
// rate far too high for the reference, the run with the controller switched off (setpoint and
// bound out of reach) fails the check, and the same run with the configured controller (replay of
// recent states, setpoint kl_hold below the bound, per-minibatch early stop, projection) passes
// it on every step — so the pass is the controller's doing, and the check can fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTf } from '../../lib/train/engines/tfjs/backend.ts';
import { TfjsModelHandle } from '../../lib/train/engines/tfjs/handle.ts';
import { TfModel } from '../../lib/train/engines/tfjs/model.ts';
import { N_ACTIONS } from '../../lib/train/env/dialogue-env.ts';
import { OBS_DIM } from '../../lib/train/env/features.ts';
import { ScenarioSampler } from '../../lib/train/env/sampler.ts';
import { scenarioSpec } from '../../lib/train/env/scenario-spec.ts';
import { comparePolicies, type PolicyRows, type PpoEvalConfig, type ScenarioInfo } from '../../lib/train/index.ts';
import { cloneParams, forwardNet, initParams, logSoftmax } from '../../lib/train/mlp.ts';
import { TrainRng } from '../../lib/train/rng.ts';
import { batchKl, KlReplay, PpoStrategy } from '../../lib/train/strategies/ppo.ts';
import { DIMENSIONS } from '../../lib/scoring/types.ts';
import { makeScenarios, smallConfig } from '../helpers/train-fixtures.ts';

const TARGET = 0.03;
const LR = 0.05;

/** kl_rollout of every step of a short run at learning rate LR, and the final policy's KL on the replay's states. */
async function run(controller: 'on' | 'off', seed: number): Promise<{ rollout: number[] }> {
  const cfg = smallConfig({
    ppo: { lr: LR, target_kl: TARGET, rollout_len: 64 },
    train: controller === 'off' ? { ppo: { kl_stop: 1000, kl_hold: 999 } } : {},
  });
  const tfh = await loadTf('wasm');
  const rng = new TrainRng(seed);
  const shape = { obsDim: OBS_DIM, hidden: cfg.model.hidden, actions: N_ACTIONS };
  const init = initParams(shape, rng);
  const model = new TfModel(tfh.tf, init.specs, init, cfg.adam);
  const h = new TfjsModelHandle(tfh.tf, model, cloneParams(init), shape, new AbortController().signal);
  const weights = Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / 7])) as Record<(typeof DIMENSIONS)[number], number>;
  const env = { maxTurns: 8, weights, reward: { ...cfg.reward }, noise: { ...cfg.env.noise } };
  const s = new PpoStrategy(cfg, new ScenarioSampler(makeScenarios(45).map(scenarioSpec), cfg.sampling), env, rng);
  const rollout: number[] = [];
  try {
    for (let step = 0; step < 12; step++) rollout.push(s.update(step, h, s.collect(step, h), LR).kl_rollout!);
  } finally {
    model.dispose();
  }
  return { rollout };
}

// ppo_eval's comparison with the KL figures of the runs (the success rows do not matter here).
const scenarios: ScenarioInfo[] = Array.from({ length: 60 }, (_, i) => ({
  id: `s${i}`,
  cluster: `q${i >> 1}`,
  needsClarification: i % 2 === 1,
  hardQa: false,
}));
const rows: PolicyRows = {
  success: new Float64Array(60).fill(1),
  asked: new Float64Array(60),
  turns: new Float64Array(60).fill(1),
  reward: new Float64Array(60).fill(1),
};
const evalCfg: PpoEvalConfig = {
  seed: 1,
  actions: 'sampled',
  samples: 1,
  twins: true,
  min_group_n: 30,
  bootstrap: 50,
  permutations: 50,
  min_seeds: 2,
  thresholds: {
    min_needs_clarification_success_gain_pp: 5,
    max_overclar_relative_change: -0.2,
    max_avg_turns_increase: 0,
    min_hard_qa_success_gain_pp: 5,
    max_kl_over_target: 1.5,
    min_ppo_minus_best_baseline_pp: 0,
  },
};
function klCheck(runs: { rollout: number[] }[]) {
  const c = comparePolicies({
    scenarios,
    sft: rows,
    seeds: runs.map((r, i) => ({
      seed: i,
      rows,
      klRolloutMax: Math.max(...r.rollout),
      klPostUpdateMax: 0,
      klEval: 0,
    })),
    baselines: [],
    cfg: evalCfg,
    targetKl: TARGET,
  });
  return c.checks.find((k) => k.name === 'kl_rollout_max_over_target')!;
}

test('at a learning rate far too high, the run without the KL controller fails ppo_eval kl_rollout_max_over_target; with the controller every batch is generated within 1.5 × target_kl and the check passes', async () => {
  const off = [await run('off', 3), await run('off', 4)];
  const offCheck = klCheck(off);
  assert.equal(offCheck.pass, false, `uncontrolled: ${offCheck.value}`);
  assert.ok(Number(offCheck.value) > 3, `uncontrolled KL / target ${offCheck.value}`);
  const on = [await run('on', 3), await run('on', 4)];
  for (const [i, r] of on.entries())
    for (const [step, kl] of r.rollout.entries())
      assert.ok(kl <= 1.5 * TARGET, `seed ${i}, step ${step + 1}: rollout KL ${kl} > ${1.5 * TARGET}`);
  const onCheck = klCheck(on);
  assert.equal(onCheck.pass, true, `controlled: ${onCheck.value}`);
  assert.ok(Math.max(...on.flatMap((r) => r.rollout)) > 0.2 * TARGET, 'the controlled run moved the policy at all');
});

test('the replay keeps the last kl_replay batches, round-trips through its checkpoint state exactly, and refuses a malformed state', () => {
  const rng = new TrainRng(5);
  const shape = { obsDim: OBS_DIM, hidden: [8], actions: N_ACTIONS };
  const ref = initParams(shape, rng);
  const pol = initParams(shape, rng);
  // a batch as collect makes it: capacity beyond n, reference log-probabilities in Float32
  const batch = (n: number, fill: number) => {
    const obs = new Float32Array((n + 3) * OBS_DIM).map((_, i) => ((i * 7919 + fill * 104729) % 1000) / 1000);
    const refLogp = new Float32Array((n + 3) * N_ACTIONS);
    for (let t = 0; t < n; t++)
      refLogp.set(logSoftmax(forwardNet(ref, 'policy', obs, t * OBS_DIM, OBS_DIM)), t * N_ACTIONS);
    return { n, obs, refLogp };
  };
  const r = new KlReplay(2);
  r.push(batch(5, 1));
  r.push(batch(6, 2));
  r.push(batch(7, 3));
  const s = r.sample(ref);
  assert.equal(s.n, 6 + 7, 'the oldest batch is dropped');
  const back = new KlReplay(2);
  back.restore(JSON.parse(JSON.stringify(r.state())));
  const t = back.sample(ref);
  assert.equal(t.n, s.n);
  assert.deepEqual(t.obs, s.obs);
  assert.deepEqual(t.refLogp, s.refLogp, 'restored batches get their reference log-probabilities recomputed exactly');
  assert.equal(batchKl(pol, t), batchKl(pol, s));
  assert.throws(() => back.restore([123]), /kl_replay must be a list of base64 strings/);
  assert.throws(() => back.restore(['AAAA']), /not a multiple of/);
});
