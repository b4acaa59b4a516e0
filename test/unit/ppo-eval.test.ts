// The ppo_eval comparison on hand-made per-scenario rows (eval-compare.ts, eval-report.ts): the
// gains against the SFT policy, the negative control, the n/a checks, the KL and best-baseline
// checks, the interval across seeds, and the refusal of a seed that did not start from the SFT input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  acrossSeeds,
  assertStartedFromSft,
  comparePolicies,
  gains,
  swappedRows,
  type PolicyRows,
  type PpoEvalConfig,
  type ScenarioInfo,
} from '../../lib/train/index.ts';

const cfg: PpoEvalConfig = {
  seed: 1,
  actions: 'sampled',
  samples: 1,
  twins: true,
  min_group_n: 30,
  bootstrap: 200,
  permutations: 200,
  min_seeds: 3,
  thresholds: {
    min_needs_clarification_success_gain_pp: 5,
    max_overclar_relative_change: -0.2,
    max_avg_turns_increase: 0,
    min_hard_qa_success_gain_pp: 5,
    max_kl_over_target: 1.5,
    min_ppo_minus_best_baseline_pp: 0,
  },
};

// 200 scenarios: 100 source questions, each a plain item and its under-specified twin; the first 40 sources are hard QA.
const scenarios: ScenarioInfo[] = Array.from({ length: 200 }, (_, i) => ({
  id: `s${i}`,
  cluster: `q${i >> 1}`,
  needsClarification: i % 2 === 1,
  hardQa: i < 80,
}));

function rows(f: (s: ScenarioInfo, i: number) => { success: number; asked: number; turns: number }): PolicyRows {
  const r = scenarios.map(f);
  return {
    success: Float64Array.from(r, (x) => x.success),
    asked: Float64Array.from(r, (x) => x.asked),
    turns: Float64Array.from(r, (x) => x.turns),
    reward: Float64Array.from(r, (x) => x.success),
  };
}

const sft = rows((s, i) => ({
  success: s.needsClarification ? (i % 4 === 1 ? 1 : 0) : 1,
  asked: s.needsClarification ? 0.5 : i % 10 === 0 ? 1 : 0,
  turns: 2,
}));
const better = rows((s, i) => ({
  success: s.needsClarification ? (i % 8 === 7 ? 0 : 1) : 1,
  asked: s.needsClarification ? 1 : 0,
  turns: 1.9,
}));
const check = (c: ReturnType<typeof comparePolicies>, name: string) => c.checks.find((k) => k.name === name)!;

test('a PPO policy identical to SFT gains nothing, and the negative control says so', () => {
  const c = comparePolicies({
    scenarios,
    sft,
    seeds: [11, 12, 13].map((seed) => ({ seed, rows: sft, klRolloutMax: 0.01, klPostUpdateMax: 0.01, klEval: 0.01 })),
    baselines: [],
    cfg,
    targetKl: 0.03,
  });
  assert.equal(check(c, 'needs_clarification_success_gain_pp').value, 0);
  assert.equal(check(c, 'needs_clarification_success_gain_pp').pass, false);
  assert.equal(check(c, 'needs_clarification_success_gain_pp.vs_null_p95').pass, false);
  assert.equal(check(c, 'ppo_minus_best_baseline_success_pp').value, null, 'no baseline: nothing to compare');
});

test('a PPO policy that asks where a detail is missing passes the gains against SFT and beats the null, but not a better scripted baseline', () => {
  const oracle = rows((s) => ({ success: 1, asked: s.needsClarification ? 1 : 0, turns: 1.5 }));
  const c = comparePolicies({
    scenarios,
    sft,
    seeds: [11, 12, 13].map((seed) => ({
      seed,
      rows: better,
      klRolloutMax: 0.04,
      klPostUpdateMax: 0.04,
      klEval: 0.05,
    })),
    baselines: [
      { name: 'always-answer', rows: sft },
      { name: 'hand-rule', rows: oracle },
    ],
    cfg,
    targetKl: 0.03,
  });
  assert.equal(check(c, 'needs_clarification_success_gain_pp').value, 25);
  for (const n of [
    'needs_clarification_success_gain_pp',
    'needs_clarification_success_gain_pp.vs_null_p95',
    'overclar_rate_relative_change',
    'avg_turns_change',
    'hard_qa_success_gain_pp',
    'kl_rollout_max_over_target',
    'needs_clarification_items',
    'seeds',
  ]) {
    assert.equal(check(c, n).pass, true, n);
  }
  assert.equal(check(c, 'overclar_rate_relative_change').value, -1);
  assert.equal(check(c, 'kl_eval_over_target').pass, false, '0.05 / 0.03 > 1.5');
  assert.equal(check(c, 'ppo_minus_best_baseline_success_pp').pass, false);
  assert.equal(c.best_baseline!.name, 'hand-rule');
  assert.equal(c.table.length, 1 + 3 + 1 + 2);
  assert.match(c.table_markdown, /\| negative control \(PPO\/SFT swapped per source question\) \|/);
  const iv = c.gains.ppo_mean.nc_gain_pp!.bootstrap_95;
  assert.ok(iv[0]! < 25 && iv[1]! > 25, JSON.stringify(iv));
});

test('a group too small to measure is n/a, never a pass; SFT that never over-asks makes the over-clarification check n/a', () => {
  const few = scenarios.map((s, i) => ({ ...s, hardQa: i < 10 }));
  const quiet = rows((s) => ({ success: 1, asked: s.needsClarification ? 1 : 0, turns: 2 }));
  const c = comparePolicies({
    scenarios: few,
    sft: quiet,
    seeds: [{ seed: 1, rows: quiet, klRolloutMax: 0, klPostUpdateMax: 0, klEval: 0 }],
    baselines: [],
    cfg,
    targetKl: 0.03,
  });
  assert.equal(check(c, 'hard_qa_success_gain_pp').status, 'n/a');
  assert.equal(check(c, 'overclar_rate_relative_change').status, 'n/a');
  assert.equal(check(c, 'seeds').pass, false);
});

test('gains are computed over a multiset of scenarios, and the across-seed interval is a t-interval', () => {
  const g = gains(scenarios, better, sft, [1, 1, 3]);
  assert.equal(g.nc_gain_pp, 100 * (1 - 2 / 3));
  const a = acrossSeeds([1, 2, 3]);
  assert.equal(a.mean, 2);
  assert.ok(Math.abs(a.hi - (2 + 4.303 / Math.sqrt(3))) < 1e-9);
});

test('the KL check gates the rollout KL (the policy that generated a batch, before projection), not the post-update KL the early stop bounds by construction', () => {
  const c = comparePolicies({
    scenarios,
    sft,
    seeds: [11, 12, 13].map((seed) => ({
      seed,
      rows: better,
      klRolloutMax: seed === 12 ? 0.06 : 0.02,
      klPostUpdateMax: 0.04,
      klEval: 0.01,
    })),
    baselines: [],
    cfg,
    targetKl: 0.03,
  });
  assert.equal(check(c, 'kl_rollout_max_over_target').value, 2);
  assert.equal(check(c, 'kl_rollout_max_over_target').pass, false);
  assert.deepEqual(c.kl.per_seed[1], {
    seed: 12,
    train_rollout_max: 0.06,
    train_post_update_max: 0.04,
    eval_mean: 0.01,
  });
});

test('the negative control swaps PPO and SFT per source question: an item and its twin are swapped together', () => {
  const a = rows(() => ({ success: 1, asked: 1, turns: 1 }));
  const b = rows(() => ({ success: 0, asked: 0, turns: 2 }));
  const clusterOf = Int32Array.from(scenarios, (_, i) => i >> 1);
  const labels = Float64Array.from({ length: 200 }, (_, k) =>
    k >> 1 === 1 ? (k % 2 === 0 ? 0 : 1) : k % 2 === 0 ? 1 : 0,
  );
  const [x, y] = swappedRows(a, b, labels, clusterOf);
  assert.deepEqual([...x.success.subarray(0, 6)], [1, 1, 0, 0, 1, 1], 'cluster 1 (scenarios 2 and 3) swapped as one');
  assert.deepEqual([...y.success.subarray(0, 6)], [0, 0, 1, 1, 0, 0]);
  // With the real gain concentrated in twins, a per-scenario swap would break up pairs; per cluster the null is centred on 0 and the real gain beats it.
  const c = comparePolicies({
    scenarios,
    sft,
    seeds: [11, 12, 13].map((seed) => ({ seed, rows: better, klRolloutMax: 0, klPostUpdateMax: 0, klEval: 0 })),
    baselines: [],
    cfg,
    targetKl: 0.03,
  });
  assert.match(c.negative_control.needs_clarification_gain.permuted, /source question/);
  assert.ok(Math.abs(c.negative_control.needs_clarification_gain.quantiles.p50) < 5);
});

test("ppo_eval refuses a seed whose initial/ policy is not the SFT input's model.bin, naming both files", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-ppo-eval-sft-'));
  try {
    const put = (dir: string, bin: string): void => {
      fs.mkdirSync(path.join(root, dir), { recursive: true });
      fs.writeFileSync(path.join(root, dir, 'model.json'), '{}\n');
      fs.writeFileSync(path.join(root, dir, 'model.bin'), bin);
      fs.writeFileSync(
        path.join(root, dir, 'checkpoint.json'),
        JSON.stringify({ format: 'rc1-train-checkpoint-v1', step: 0, files: {} }),
      );
    };
    put('checkpoints/sft', 'sft-weights');
    put('checkpoints/rc1/seed_1/initial', 'sft-weights');
    put('checkpoints/rc1/seed_2/initial', 'old-sft-weights');
    const runs = [1, 2].map((seed) => ({ seed, dir: path.join(root, `checkpoints/rc1/seed_${seed}`) }));
    assert.doesNotThrow(() =>
      assertStartedFromSft(path.join(root, 'checkpoints/sft'), runs.slice(0, 1), 'ppo_eval', root),
    );
    assert.throws(
      () => assertStartedFromSft(path.join(root, 'checkpoints/sft'), runs, 'ppo_eval', root),
      /ppo_eval: checkpoints\/rc1\/seed_2\/initial\/model\.bin \(sha256 [0-9a-f]{12}…\) differs from the SFT policy checkpoints\/sft\/model\.bin .*seed 2 did not start from this sft model/,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
