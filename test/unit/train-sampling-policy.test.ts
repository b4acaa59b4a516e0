// Difficulty-aware sampling (the seed-ratio schedule, the difficulty mix of seed draws, the
// low_perf_cap on priority draws), the learning-rate schedule, the held-out split, loading a
// checkpoint's policy as named Float32 tensors and evaluating it deterministically, and the
// redaction of secrets in the effective config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  evaluatePolicy,
  initParams,
  loadPolicy,
  lrAt,
  makePolicy,
  redact,
  REDACTED,
  scenarioSpec,
  seedRatioAt,
  secretValues,
  splitHoldout,
  writeModelFiles,
} from '../../lib/train/index.ts';
import { capShares, ScenarioSampler } from '../../lib/train/env/sampler.ts';
import { N_ACTIONS } from '../../lib/train/env/dialogue-env.ts';
import { OBS_DIM } from '../../lib/train/env/features.ts';
import { TrainRng } from '../../lib/train/rng.ts';
import { DIMENSIONS } from '../../lib/scoring/types.ts';
import { makeScenarios, smallConfig } from '../helpers/train-fixtures.ts';

test('the seed ratio follows the schedule: the last entry at or before the step', () => {
  const s = [
    { step: 0, ratio: 0.5 },
    { step: 20000, ratio: 0.35 },
    { step: 40000, ratio: 0.2 },
  ];
  assert.deepEqual(
    [0, 19999, 20000, 39999, 40000, 90000].map((x) => seedRatioAt(s, x)),
    [0.5, 0.5, 0.35, 0.35, 0.2, 0.2],
  );
});

test('capShares caps every share at the cap and hands the excess to the rest in proportion', () => {
  const s = capShares([8, 1, 1, 2, 0], 0.3);
  assert.ok(Math.abs(s.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  // 8 is capped at .3; 1, 1, 2 would share .7 as .175, .175, .35, so 2 is capped too; 1 and 1 share .4
  assert.deepEqual(
    s.map((x) => Math.round(x * 1e12) / 1e12),
    [0.3, 0.2, 0.2, 0.3, 0],
  );
  assert.deepEqual(capShares([1, 1], 0.3), [0.5, 0.5]); // a cap no split can meet: uniform
  assert.deepEqual(capShares([5, 1, 0, 0], 0.3), [0.25, 0.25, 0.25, 0.25]); // too few positive weights to carry the mass under the cap
});

test('seed draws follow easy .2 / medium .4 / hard .4; priority draws favour failing buckets but never past low_perf_cap', () => {
  const specs = makeScenarios(90).map(scenarioSpec);
  const cfg = {
    enabled: true,
    by_difficulty: { easy: 0.2, medium: 0.4, hard: 0.4 },
    seed_ratio_schedule: [
      { step: 0, ratio: 1 },
      { step: 10, ratio: 0 },
    ],
    low_perf_cap: 0.3,
    success_ema: 0.5,
  };
  const sampler = new ScenarioSampler(specs, cfg);
  const rng = new TrainRng(5);
  const n = 20000;
  const counts = { easy: 0, medium: 0, hard: 0 };
  for (let i = 0; i < n; i++) counts[sampler.draw(0, rng).spec.difficulty!] += 1;
  assert.ok(Math.abs(counts.easy / n - 0.2) < 0.015 && Math.abs(counts.hard / n - 0.4) < 0.015, JSON.stringify(counts));
  // one bucket always fails, the others always succeed
  const bad = specs.find((s) => s.task === 'gsm8k' && s.difficulty === 'hard')!;
  for (const s of specs)
    for (let k = 0; k < 5; k++) sampler.record(s, !(s.task === bad.task && s.difficulty === bad.difficulty));
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const d = sampler.draw(10, rng);
    assert.equal(d.seed, false);
    if (d.spec.task === bad.task && d.spec.difficulty === bad.difficulty) hits += 1;
  }
  assert.ok(hits / n > 0.25 && hits / n < 0.3 + 0.015, `failing bucket share ${hits / n}`);
});

test('the learning rate follows warmup then the schedule', () => {
  const base = { lr: 1, steps: 110 };
  assert.equal(lrAt({ ...base, lr_schedule: { kind: 'constant', warmup_steps: 10, min_ratio: 1 } }, 4), 0.5);
  assert.ok(
    Math.abs(lrAt({ ...base, lr_schedule: { kind: 'linear', warmup_steps: 10, min_ratio: 0.1 } }, 110) - 0.1) < 1e-12,
  );
  assert.ok(
    Math.abs(lrAt({ ...base, lr_schedule: { kind: 'cosine', warmup_steps: 10, min_ratio: 0 } }, 60) - 0.5) < 1e-12,
  );
});

test('the held-out split is a stable function of the source question, near the configured share, and shares no source question with training', () => {
  const s = makeScenarios(300).map((x, i) => ({ ...x, source_id: `src-${i % 150}` }));
  const a = splitHoldout(s, 0.2);
  assert.deepEqual(
    splitHoldout([...s].reverse(), 0.2)
      .holdout.map((x) => x.id)
      .sort(),
    a.holdout.map((x) => x.id).sort(),
  );
  assert.ok(a.holdout.length > 40 && a.holdout.length < 80, String(a.holdout.length));
  const held = new Set(a.holdout.map((x) => x.source_id));
  assert.equal(a.train.filter((x) => held.has(x.source_id)).length, 0);
});

test('loadPolicy reads back the named Float32 tensors; evaluatePolicy is deterministic and summarises by group', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-policy-'));
  try {
    const shape = { obsDim: OBS_DIM, hidden: [16, 16], actions: N_ACTIONS };
    const params = initParams(shape, new TrainRng(2));
    await writeModelFiles(dir, shape, params, 8);
    const p = await loadPolicy(dir);
    assert.deepEqual(
      p.tensors().map((t) => t.name),
      params.specs.map((s) => s.name),
    );
    p.tensors().forEach((t, i) => assert.deepEqual([...t.data], [...params.data[i]!]));
    assert.equal(p.maxTurns, 8);
    const weights = Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / 7])) as Record<
      (typeof DIMENSIONS)[number],
      number
    >;
    const opts = { weights, reward: smallConfig().reward, noise: smallConfig().env.noise, seed: 4 };
    const scen = makeScenarios(30);
    const a = evaluatePolicy(p, scen, opts);
    const b = evaluatePolicy(makePolicy(shape, params, 8), scen, opts);
    assert.deepEqual(a, b);
    assert.equal(a.env, 'simulated-dialogue-v3');
    assert.equal(a.summary.overall.n, 30);
    assert.equal(a.summary.needs_clarification.n + a.summary.no_clarification_needed.n, 30);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('redaction: keys named like key/token/secret become ***, and so does every occurrence of a secret env value', () => {
  const secrets = secretValues({
    HF_TOKEN: 'hf_abc123456',
    RUN_MODE: 'production',
    SHORT: 'abc',
    OTHER: 'long-enough-value',
  });
  assert.deepEqual(secrets.sort(), ['hf_abc123456', 'long-enough-value']);
  const out = redact(
    {
      api_key: 'x',
      nested: { token_env: 'HF_TOKEN', url: 'https://u:hf_abc123456@host', list: ['long-enough-value!'] },
      mode: 'production',
    },
    secrets,
  );
  assert.deepEqual(out, {
    api_key: REDACTED,
    nested: { token_env: REDACTED, url: `https://u:${REDACTED}@host`, list: [`${REDACTED}!`] },
    mode: 'production',
  });
});
