// The evaluation gates weights, shadow_run and overclar_ablation, each rule compiled as the engine
// compiles it and run with a fake context on synthetic scored rollouts (correctness and reasoning
// follow success, the other dimensions are noise): each passes where it should and fails for
// the right reason — the check that names the fault — where it should not. Negative controls:
// with the labels a gate correlates with shuffled (several seeds) every gate fails, and a judge
// whose scores carry nothing (constant, or random) fails weights.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createRng, type Rule } from '../../packages/engine/src/api/index.ts';
import {
  compileRule,
  runEvalRule,
  shippedConfig,
  writeMetrics,
  writeSynthetic,
  writeWeights,
} from '../helpers/evaluation-fixtures.ts';

let dir = '';
const rules: Record<string, Rule> = {};
const cfg = shippedConfig();
const CALIBRATED = {
  correctness: 0.45,
  reasoning: 0.3,
  clarity: 0.05,
  conciseness: 0.05,
  clarification: 0.1,
  tool_use: 0.025,
  format_safety: 0.025,
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-eval-gates-'));
  for (const name of ['weights', 'shadow_run', 'overclar_ablation']) rules[name] = await compileRule(name, dir);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const failed = (checks: Map<string, { status: string }>): string[] =>
  [...checks].filter(([, c]) => c.status === 'fail').map(([n]) => n);
const calibration = { ...cfg.calibration, resamples: 20 };
const statistics = { ...cfg.statistics, bootstrap_resamples: 300 };

/**
 * A copy of a rollouts JSONL with one boolean field shuffled (seeded) within task: per rollout, or
 * per scenario (every candidate of a scenario gets the label of the scenario it was dealt).
 */
function shuffled(
  file: string,
  field: 'success' | 'needs_clarification',
  seed: number,
  by: 'rollout' | 'scenario',
): string {
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
  const rng = createRng(seed);
  const unit = (r: Record<string, any>): string => (by === 'rollout' ? r.rollout_id : r.scenario_id);
  const label = new Map<string, boolean>();
  for (const task of [...new Set(rows.map((r) => r.task as string))].sort()) {
    const units = [...new Set(rows.filter((r) => r.task === task).map(unit))];
    const first = new Map<string, boolean>();
    for (const r of rows) if (r.task === task && !first.has(unit(r))) first.set(unit(r), r[field]);
    const values = rng.shuffle(units.map((u) => first.get(u)!));
    units.forEach((u, i) => label.set(u, values[i]!));
  }
  const out = file.replace(/\.jsonl$/, `.shuffled-${field}-${seed}.jsonl`);
  writeFileSync(out, rows.map((r) => JSON.stringify({ ...r, [field]: label.get(unit(r)) })).join('\n') + '\n');
  return out;
}

test('weights: calibrated on the pool, it beats the old weights on held-out folds and writes all 7 dimensions summing to 1', async () => {
  const pool = writeSynthetic(join(dir, 'w1'), 'pool', { scenarios: 400 });
  const run = await runEvalRule(rules.weights!, {
    params: { reward: { old_weights: cfg.reward.old_weights }, calibration, statistics },
    root: join(dir, 'w1'),
    inputs: { rollouts: [pool.rollouts], scores: [pool.scores] },
    outputs: { weights: 'configs/weights.json', report: 'reports/calibration_report.json' },
  });
  assert.deepEqual(failed(run.checks), []);
  assert.equal(
    run.checks.get('label_leakage')!.status,
    'waived',
    'correctness follows success in this data: a visible dev waiver',
  );
  assert.ok((run.checks.get('rank_corr_gain')!.value as number) >= 0.08);
  const file = JSON.parse(readFileSync(join(dir, 'w1/out/configs/weights.json'), 'utf8'));
  const w = Object.values(file.weights) as number[];
  assert.equal(w.length, 7);
  assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-9 && w.every((x) => x >= 0 && x <= 0.5));
  assert.equal(file.version, 1);
  assert.equal(Object.keys(file.sha256_of_inputs).length, 2);
  const report = run.result.report as {
    folds: unknown[];
    intervals: { resamples: number };
    held_out: { rows: { weights: string }[] };
    n_scenarios: number;
  };
  assert.equal(report.folds.length, 5);
  assert.equal(report.intervals.resamples, 20);
  assert.equal(report.n_scenarios, 400);
  assert.deepEqual(report.held_out.rows.map((r) => r.weights).slice(0, 3), ['calibrated', 'old', 'correctness alone']);
  assert.equal(report.held_out.rows.length, 9);
  assert.match(
    run.checks.get('rank_corr')!.basis!,
    /lower bound of the 95 % source question-level \(cluster\) bootstrap interval/,
  );
});

test('weights fails rank_corr_gain when the old weights already rank by success better than any fit with each weight ≤ .5', async () => {
  const pool = writeSynthetic(join(dir, 'w2'), 'pool', { scenarios: 150 });
  const onlyCorrectness = {
    correctness: 1,
    reasoning: 0,
    clarity: 0,
    conciseness: 0,
    clarification: 0,
    tool_use: 0,
    format_safety: 0,
  };
  const run = await runEvalRule(rules.weights!, {
    params: { reward: { old_weights: onlyCorrectness }, calibration, statistics },
    root: join(dir, 'w2'),
    inputs: { rollouts: [pool.rollouts], scores: [pool.scores] },
    outputs: { weights: 'configs/weights.json', report: 'reports/calibration_report.json' },
  });
  assert.ok(failed(run.checks).includes('rank_corr_gain'));
  assert.ok((run.checks.get('rank_corr_gain')!.value as number) < 0.08);
  assert.equal(run.checks.get('weights_max')!.pass, true, 'the solver still holds the cap');
});

/** The weights gate on the given rollouts and scores files. */
async function weightsOn(name: string, rollouts: string, scores: string, profile = 'dev') {
  return runEvalRule(rules.weights!, {
    params: { reward: { old_weights: cfg.reward.old_weights }, calibration, statistics },
    root: join(dir, name),
    profile,
    inputs: { rollouts: [rollouts], scores: [scores] },
    outputs: { weights: 'configs/weights.json', report: 'reports/calibration_report.json' },
  });
}

test('weights holds out, resamples and permutes whole source questions: the renderings of one question are one unit', async () => {
  const pool = writeSynthetic(join(dir, 'w5'), 'pool', { scenarios: 150, renderings: 3 });
  const rows = readFileSync(pool.rollouts, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { task: string; source_id: string });
  const questions = new Set(rows.map((r) => `${r.task}/${r.source_id}`)).size;
  assert.ok(questions < 60, `${questions} source questions for 150 scenarios`);
  const run = await weightsOn('w5', pool.rollouts, pool.scores);
  const r = run.result.report as {
    n_scenarios: number;
    n_source_questions: number;
    intervals: { unit: string };
    negative_control: { permuted: string };
    definitions: { folds: string };
  };
  assert.deepEqual([r.n_scenarios, r.n_source_questions], [150, questions]);
  assert.match(r.intervals.unit, new RegExp(`^source question \\(${questions}; 150 scenarios\\)`));
  assert.match(r.definitions.folds, /grouped by source question/);
  assert.match(r.negative_control.permuted, /between source questions within task/);
  assert.equal(run.checks.get('source_questions')!.value, questions);
});

test('weights fails with the success labels shuffled within task, for every seed, on its floor, and its negative control catches it', async () => {
  const pool = writeSynthetic(join(dir, 'w3'), 'pool', { scenarios: 150 });
  let nullFailed = 0;
  for (const seed of [1, 2, 3, 4, 5]) {
    const run = await weightsOn('w3', shuffled(pool.rollouts, 'success', seed, 'rollout'), pool.scores);
    const f = failed(run.checks);
    assert.ok(f.includes('rank_corr'), `seed ${seed}: failed ${f.join(', ')}`);
    if (f.includes('rank_corr.vs_null_p95')) nullFailed++;
  }
  assert.ok(nullFailed >= 4, `the negative control failed in ${nullFailed} of 5 seeds`);
});

/** A copy of a scores JSONL whose judge gives every dimension of every item `score(i, dim)`. */
function rejudged(file: string, tag: string, score: (i: number) => number): string {
  const out = file.replace(/_scores\.jsonl$/, `_${tag}_scores.jsonl`);
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l, i) => {
      const r = JSON.parse(l) as Record<string, any>;
      const m = Object.fromEntries(Object.keys(r.scores).map((d) => [d, score(i)]));
      return JSON.stringify({
        ...r,
        scores: m,
        samples: r.samples.map((x: Record<string, unknown>) => ({ ...x, scores: m })),
      });
    });
  writeFileSync(out, lines.join('\n') + '\n');
  return out;
}

test('weights fails for a judge that gives every item the same scores and for a judge that scores at random', async () => {
  const pool = writeSynthetic(join(dir, 'w4'), 'pool', { scenarios: 150 });
  const equal = await weightsOn(
    'w4',
    pool.rollouts,
    rejudged(pool.scores, 'equal', () => 0.8),
  );
  assert.ok(failed(equal.checks).includes('rank_corr'), `equal judge failed ${failed(equal.checks).join(', ')}`);
  assert.ok(
    Number.isNaN(equal.checks.get('rank_corr')!.value as number),
    'a constant score has no rank correlation: undefined, never a pass',
  );
  const rng = createRng(17);
  const random = await weightsOn(
    'w4',
    pool.rollouts,
    rejudged(pool.scores, 'random', () => Math.round(rng.next() * 1e4) / 1e4),
  );
  const f = failed(random.checks);
  assert.ok(f.includes('rank_corr') && f.includes('rank_corr.vs_null_p95'), `random judge failed ${f.join(', ')}`);
});

test('weights reports label leakage as a failure in prod and a visible waiver in dev', async () => {
  const pool = writeSynthetic(join(dir, 'w5'), 'pool', { scenarios: 60 });
  const prod = await weightsOn('w5', pool.rollouts, pool.scores, 'prod');
  const leak = prod.checks.get('label_leakage')!;
  assert.equal(leak.status, 'fail');
  assert.match(leak.hint!, /dimension correctness alone agrees with success/);
  const report = prod.result.report as { label_leakage: { flagged: string[]; status: string } };
  assert.ok(report.label_leakage.flagged.includes('correctness'));
  assert.equal(report.label_leakage.status, 'FAILED (prod)');
  const dev = await weightsOn('w5', pool.rollouts, pool.scores, 'dev');
  assert.match(
    (dev.result.report as { label_leakage: { status: string } }).label_leakage.status,
    /^WARNING \(dev, waived\): .*sees the reference answer/,
  );
});

/** The shadow run on a synthetic shadow set with the given calibrated weights. */
async function shadow(name: string, weights: Record<string, number>, shuffle?: number) {
  const root = join(dir, name);
  const s = writeSynthetic(root, 'shadow', { scenarios: 245, difficulty: () => null, seed: 11 });
  const ids = Array.from({ length: 245 }, (_, i) => `shadow-${i}`);
  return runEvalRule(rules.shadow_run!, {
    params: {
      reward: cfg.reward,
      overclar: cfg.overclar,
      shadow_run: cfg.shadow_run,
      statistics,
      difficulty: { bands: cfg.difficulty.bands, dimensions: cfg.difficulty.dimensions },
    },
    root,
    args: { tag: 'round1' },
    outputs: ['reports/shadow_run_round1.json'],
    inputs: {
      rollouts: [shuffle ? shuffled(s.rollouts, 'success', shuffle, 'rollout') : s.rollouts],
      scores: [s.scores],
      weights: [writeWeights(join(root, 'weights.json'), weights)],
      metrics: [writeMetrics(join(root, 'metrics.jsonl'), ids, (i) => (['easy', 'medium', 'hard'] as const)[i % 3]!)],
    },
  });
}

test('shadow_run: a new reward that follows success gains ≥ 10 % rank correlation with success over the old score', async () => {
  const run = await shadow('s1', CALIBRATED);
  assert.equal(run.checks.get('success_rank_corr_gain')!.pass, true);
  const r = run.result.report as {
    scenarios: number;
    buckets: Record<string, number>;
    splits: { task: object; difficulty: object };
  };
  assert.equal(r.scenarios, 245);
  assert.deepEqual(r.buckets, { easy: 82, medium: 82, hard: 81 });
  assert.deepEqual(Object.keys(r.splits.task), ['gsm8k', 'hotpotqa', 'strategyqa']);
  assert.deepEqual(Object.keys(r.splits.difficulty), ['easy', 'hard', 'medium']);
  for (const c of [
    'success_rank_corr',
    'success_rank_corr_gain',
    'success_rank_corr.vs_null_p95',
    'success_rank_corr_difference.vs_null_p95',
  ]) {
    assert.equal(run.checks.get(c)!.status, 'pass', c);
  }
  const nc = (
    run.result.report as { negative_controls: { success_rank_corr: { quantiles: { p95: number }; real: number } } }
  ).negative_controls;
  assert.ok(nc.success_rank_corr.real > nc.success_rank_corr.quantiles.p95);
});

test('shadow_run fails with the success labels shuffled within task, for every seed, on its floor, and its negative controls catch it', async () => {
  let nullFailed = 0;
  for (const seed of [1, 2, 3, 4, 5]) {
    const run = await shadow('s4', CALIBRATED, seed);
    const f = failed(run.checks);
    assert.ok(
      f.includes('success_rank_corr') && f.includes('success_rank_corr_gain'),
      `seed ${seed}: failed ${f.join(', ')}`,
    );
    if (f.includes('success_rank_corr.vs_null_p95') || f.includes('success_rank_corr_difference.vs_null_p95'))
      nullFailed++;
  }
  assert.ok(nullFailed >= 4, `a negative control failed in ${nullFailed} of 5 seeds`);
});

test('shadow_run fails when the new reward is worse than the old: weights on noise dimensions lose rank correlation with success', async () => {
  const run = await shadow('s2', {
    correctness: 0,
    reasoning: 0,
    clarity: 0.5,
    conciseness: 0.5,
    clarification: 0,
    tool_use: 0,
    format_safety: 0,
  });
  const gain = run.checks.get('success_rank_corr_gain')!;
  assert.equal(gain.pass, false);
  assert.ok((gain.value as number) < 0, `gain ${String(gain.value)}`);
  assert.equal(
    run.checks.get('spearman_old_new')!.pass,
    false,
    'it also reorders the scenarios far from the old score',
  );
});

test('shadow_run refuses a shadow scenario that has no difficulty metrics, naming it', async () => {
  const root = join(dir, 's3');
  const s = writeSynthetic(root, 'shadow', { scenarios: 6, difficulty: () => null });
  await assert.rejects(
    runEvalRule(rules.shadow_run!, {
      params: {
        reward: cfg.reward,
        overclar: cfg.overclar,
        shadow_run: cfg.shadow_run,
        statistics,
        difficulty: { bands: cfg.difficulty.bands, dimensions: cfg.difficulty.dimensions },
      },
      root,
      args: { tag: 'round1' },
      outputs: ['reports/shadow_run_round1.json'],
      inputs: {
        rollouts: [s.rollouts],
        scores: [s.scores],
        weights: [writeWeights(join(root, 'weights.json'), CALIBRATED)],
        metrics: [writeMetrics(join(root, 'm.jsonl'), ['shadow-0'], () => 'easy')],
      },
    }),
    /scenario shadow-1 \(rollout shadow-1#0\) has no difficulty metrics/,
  );
});

async function ablation(name: string, synth: Parameters<typeof writeSynthetic>[2], alpha = 0.07, shuffle?: number) {
  const root = join(dir, name);
  const p = writeSynthetic(root, 'pool', synth);
  return runEvalRule(rules.overclar_ablation!, {
    params: { reward: { beta: cfg.reward.beta }, overclar: { ...cfg.overclar, alpha }, statistics },
    root,
    outputs: ['reports/overclar_ablation.json'],
    inputs: {
      rollouts: [shuffle ? shuffled(p.rollouts, 'needs_clarification', shuffle, 'scenario') : p.rollouts],
      scores: [p.scores],
      weights: [writeWeights(join(root, 'weights.json'), CALIBRATED)],
    },
  });
}

test('overclar_ablation: the penalty steers best-of-N away from needless clarifying questions without costing turns or success', async () => {
  const run = await ablation('a1', { scenarios: 150, overclarRate: 0.3, needsMatter: true });
  assert.deepEqual(failed(run.checks), []);
  const r = run.result.report as {
    with_penalty: { overclar_rate: number };
    without_penalty: { overclar_rate: number };
  };
  assert.ok(r.with_penalty.overclar_rate < 0.8 * r.without_penalty.overclar_rate);
  const nc = (run.result.report as { negative_control: { real: number; permuted: string; quantiles: { p50: number } } })
    .negative_control;
  assert.match(nc.permuted, /needs_clarification between source questions within task/);
  assert.ok(
    nc.quantiles.p50 > 0 && nc.quantiles.p50 < nc.real,
    `the null moves: the penalty applied by shuffled labels still drops some over-clarification (median ${nc.quantiles.p50}, real ${nc.real})`,
  );
});

test('overclar_ablation fails success_change_pp when α is so large that the penalty outweighs a correct answer', async () => {
  const run = await ablation('a2', { scenarios: 150, overclarRate: 0.3, overclarSucceeds: true }, 1);
  assert.deepEqual(failed(run.checks), ['success_change_pp']);
});

test('overclar_ablation: when no candidate asks a needless question the relative drop is n/a, not a pass, and the absolute floor fails the gate', async () => {
  const run = await ablation('a3', { scenarios: 60, overclarRate: 0 });
  const c = run.checks.get('overclar_relative_drop')!;
  assert.deepEqual([c.status, c.pass], ['n/a', false]);
  assert.match(c.not_applicable!, /no selected rollout over-clarifies even without the penalty/);
  assert.equal(run.checks.get('overclar_relative_drop.vs_null_p95')!.status, 'n/a');
  assert.deepEqual(failed(run.checks), ['overclar_absolute_drop_pp']);
  assert.match(run.checks.get('overclar_absolute_drop_pp')!.hint!, /nothing to reduce/);
});

test('overclar_ablation fails, for every data seed, when the penalty moves selection no more than applying it by shuffled needs_clarification labels', async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const run = await ablation(`a4-${seed}`, { scenarios: 150, overclarRate: 0.3, seed }, 0.0005);
    const f = failed(run.checks);
    assert.ok(
      f.includes('overclar_relative_drop.vs_null_p95') && f.includes('overclar_relative_drop'),
      `seed ${seed}: failed ${f.join(', ')}`,
    );
    const nc = (run.result.report as { negative_control: { quantiles: { p50: number } } }).negative_control;
    assert.ok(
      Math.abs(nc.quantiles.p50) < 0.1,
      `a penalty that moves nothing has a null at no effect (median ${nc.quantiles.p50})`,
    );
  }
});
