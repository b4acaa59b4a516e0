// The evaluation gates weights, shadow_run and overclar_ablation, each rule compiled as the engine
// compiles it and run with a fake context on synthetic scored rollouts (correctness and reasoning
// follow success, the other dimensions are noise): each passes where it should and fails for
// the right reason — the check that names the fault — where it should not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Rule } from '../../src/api/index.ts';
import { compileRule, runEvalRule, shippedConfig, writeMetrics, writeSynthetic, writeWeights } from '../helpers/evaluation-fixtures.ts';

let dir = '';
const rules: Record<string, Rule> = {};
const cfg = shippedConfig();
const CALIBRATED = { correctness: 0.45, reasoning: 0.3, clarity: 0.05, conciseness: 0.05, clarification: 0.1, tool_use: 0.025, format_safety: 0.025 };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-eval-gates-'));
  for (const name of ['weights', 'shadow_run', 'overclar_ablation']) rules[name] = await compileRule(name, dir);
});
after(async () => { await rm(dir, { recursive: true, force: true }); });

const failed = (checks: Map<string, { pass: boolean }>): string[] => [...checks].filter(([, c]) => !c.pass).map(([n]) => n);
const calibration = { ...cfg.calibration, resamples: 20 };

test('weights: calibrated on the pool, it beats the old weights on held-out folds and writes all 7 dimensions summing to 1', async () => {
  const pool = writeSynthetic(join(dir, 'w1'), 'pool', { scenarios: 150 });
  const run = await runEvalRule(rules.weights!, {
    params: { reward: { old_weights: cfg.reward.old_weights }, calibration }, root: join(dir, 'w1'),
    inputs: { rollouts: [pool.rollouts], scores: [pool.scores] }, outputs: ['configs/weights.json', 'reports/calibration_report.json'],
  });
  assert.deepEqual(failed(run.checks), []);
  assert.ok((run.checks.get('rank_corr_gain')!.value as number) >= 0.08);
  const file = JSON.parse(readFileSync(join(dir, 'w1/out/configs/weights.json'), 'utf8'));
  const w = Object.values(file.weights) as number[];
  assert.equal(w.length, 7);
  assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-9 && w.every((x) => x >= 0 && x <= 0.5));
  assert.equal(file.version, 1);
  assert.equal(Object.keys(file.sha256_of_inputs).length, 2);
  const report = run.result.report as { folds: unknown[]; bootstrap: { replicates: number } };
  assert.equal(report.folds.length, 5);
  assert.equal(report.bootstrap.replicates, 5 * 20);
});

test('weights fails rank_corr_gain when the old weights already rank by success better than any fit with each weight ≤ .5', async () => {
  const pool = writeSynthetic(join(dir, 'w2'), 'pool', { scenarios: 150 });
  const onlyCorrectness = { correctness: 1, reasoning: 0, clarity: 0, conciseness: 0, clarification: 0, tool_use: 0, format_safety: 0 };
  const run = await runEvalRule(rules.weights!, {
    params: { reward: { old_weights: onlyCorrectness }, calibration }, root: join(dir, 'w2'),
    inputs: { rollouts: [pool.rollouts], scores: [pool.scores] }, outputs: ['configs/weights.json', 'reports/calibration_report.json'],
  });
  assert.ok(failed(run.checks).includes('rank_corr_gain'));
  assert.ok((run.checks.get('rank_corr_gain')!.value as number) < 0.08);
  assert.equal(run.checks.get('weights_max')!.pass, true, 'the solver still holds the cap');
});

/** The shadow run on a synthetic shadow set with the given calibrated weights. */
async function shadow(name: string, weights: Record<string, number>) {
  const root = join(dir, name);
  const s = writeSynthetic(root, 'shadow', { scenarios: 120, difficulty: () => null, seed: 11 });
  const ids = Array.from({ length: 120 }, (_, i) => `shadow-${i}`);
  return runEvalRule(rules.shadow_run!, {
    params: { reward: cfg.reward, overclar: cfg.overclar, shadow_run: cfg.shadow_run, difficulty: { bands: cfg.difficulty.bands, dimensions: cfg.difficulty.dimensions } },
    root, args: { tag: 'round1' }, outputs: ['reports/shadow_run_round1.json'],
    inputs: {
      rollouts: [s.rollouts], scores: [s.scores], weights: [writeWeights(join(root, 'weights.json'), weights)],
      metrics: [writeMetrics(join(root, 'metrics.jsonl'), ids, (i) => (['easy', 'medium', 'hard'] as const)[i % 3]!)],
    },
  });
}

test('shadow_run: a new reward that follows success gains ≥ 10 % rank correlation with success over the old score', async () => {
  const run = await shadow('s1', CALIBRATED);
  assert.equal(run.checks.get('success_rank_corr_gain')!.pass, true);
  const r = run.result.report as { scenarios: number; buckets: Record<string, number>; splits: { task: object; difficulty: object } };
  assert.equal(r.scenarios, 120);
  assert.deepEqual(r.buckets, { easy: 40, medium: 40, hard: 40 });
  assert.deepEqual(Object.keys(r.splits.task), ['gsm8k', 'hotpotqa', 'strategyqa']);
  assert.deepEqual(Object.keys(r.splits.difficulty), ['easy', 'hard', 'medium']);
});

test('shadow_run fails when the new reward is worse than the old: weights on noise dimensions lose rank correlation with success', async () => {
  const run = await shadow('s2', { correctness: 0, reasoning: 0, clarity: 0.5, conciseness: 0.5, clarification: 0, tool_use: 0, format_safety: 0 });
  const gain = run.checks.get('success_rank_corr_gain')!;
  assert.equal(gain.pass, false);
  assert.ok((gain.value as number) < 0, `gain ${String(gain.value)}`);
  assert.equal(run.checks.get('spearman_old_new')!.pass, false, 'it also reorders the scenarios far from the old score');
});

test('shadow_run refuses a shadow scenario that has no difficulty metrics, naming it', async () => {
  const root = join(dir, 's3');
  const s = writeSynthetic(root, 'shadow', { scenarios: 6, difficulty: () => null });
  await assert.rejects(runEvalRule(rules.shadow_run!, {
    params: { reward: cfg.reward, overclar: cfg.overclar, shadow_run: cfg.shadow_run, difficulty: { bands: cfg.difficulty.bands, dimensions: cfg.difficulty.dimensions } },
    root, args: { tag: 'round1' }, outputs: ['reports/shadow_run_round1.json'],
    inputs: { rollouts: [s.rollouts], scores: [s.scores], weights: [writeWeights(join(root, 'weights.json'), CALIBRATED)], metrics: [writeMetrics(join(root, 'm.jsonl'), ['shadow-0'], () => 'easy')] },
  }), /scenario shadow-1 \(rollout shadow-1#0\) has no difficulty metrics/);
});

async function ablation(name: string, synth: Parameters<typeof writeSynthetic>[2], alpha = 0.07) {
  const root = join(dir, name);
  const p = writeSynthetic(root, 'pool', synth);
  return runEvalRule(rules.overclar_ablation!, {
    params: { reward: { beta: cfg.reward.beta }, overclar: { ...cfg.overclar, alpha } }, root, outputs: ['reports/overclar_ablation.json'],
    inputs: { rollouts: [p.rollouts], scores: [p.scores], weights: [writeWeights(join(root, 'weights.json'), CALIBRATED)] },
  });
}

test('overclar_ablation: the penalty steers best-of-N away from needless clarifying questions without costing turns or success', async () => {
  const run = await ablation('a1', { scenarios: 150, overclarRate: 0.3 });
  assert.deepEqual(failed(run.checks), []);
  const r = run.result.report as { with_penalty: { overclar_rate: number }; without_penalty: { overclar_rate: number } };
  assert.ok(r.with_penalty.overclar_rate < 0.8 * r.without_penalty.overclar_rate);
});

test('overclar_ablation fails success_change_pp when α is so large that the penalty outweighs a correct answer', async () => {
  const run = await ablation('a2', { scenarios: 150, overclarRate: 0.3, overclarSucceeds: true }, 1);
  assert.deepEqual(failed(run.checks), ['success_change_pp']);
});

test('overclar_ablation fails overclar_relative_drop, saying why, when no candidate asks a needless question', async () => {
  const run = await ablation('a3', { scenarios: 60, overclarRate: 0 });
  const c = run.checks.get('overclar_relative_drop')!;
  assert.equal(c.pass, false);
  assert.ok(Number.isNaN(c.value as number));
  assert.match(c.hint!, /no selected rollout over-clarifies even without the penalty/);
});
