// No observation feature leaks the needs_clarification label: on scenarios rendered by the seed
// pool's generator from the real datasets, a logistic regression trained on the policy's step-0
// observations predicts "needs clarification" (5-fold cross-validated AUC, folds by source
// question) no better than one trained on the request's text features alone — and the same check
// flags a leak when one is planted (a column that copies the label 90 % of the time), so it can fail.
// And the calculator gives nothing away: on the gsm8k scenarios, the observation after a first calc
// call predicts the label no better than the text features either, where v2's calculator (an error
// exactly when the request missed its number) is caught as a leak by the same check.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { dataFileFormat, loadSources } from '../../lib/data/index.ts';
import { PoolBuilder, PoolParamsSchema, poolConfig } from '../../lib/pool/index.ts';
import { loadPack } from '../../lib/templates/index.ts';
import { CALC, newState, stepEnv, type EnvOptions } from '../../lib/train/env/dialogue-env.ts';
import { feature, OBS_DIM, observeState, staticFeatures } from '../../lib/train/env/features.ts';
import { scenarioSpec } from '../../lib/train/env/scenario-spec.ts';
import type { Scenario } from '../../lib/data/index.ts';
import { TrainRng } from '../../lib/train/rng.ts';
import { DIMENSIONS } from '../../lib/scoring/types.ts';
import { REPO } from '../helpers/rig.ts';

let scenarios: Scenario[] = [];

before(async () => {
  const raw = ['gsm8k', 'hotpotqa', 'strategyqa']
    .flatMap((t) => fs.readdirSync(path.join(REPO, 'data/raw', t)).map((f) => path.join(REPO, 'data/raw', t, f)))
    .filter((f) => dataFileFormat(f) !== null)
    .sort();
  const { items } = await loadSources(raw, { onError: 'fail', root: REPO });
  const pool = PoolParamsSchema.parse(
    (parse(fs.readFileSync(path.join(REPO, 'configs/pool.yaml'), 'utf8')) as { pool: unknown }).pool,
  );
  const dir = path.join(REPO, 'templates/pack_v2');
  const pack = await loadPack(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(dir, f)),
    REPO,
  );
  scenarios = [
    ...new PoolBuilder(items, new Set(), pack, { ...poolConfig(pool), idPrefix: 'leak' }, createRng).scenarios(900),
  ].map(({ hint: _h, ...s }) => s);
});

/** Logistic regression (standardised features, gradient descent, small L2) scored by AUC. */
function fitPredict(xTrain: number[][], yTrain: number[], xTest: number[][]): number[] {
  const d = xTrain[0]!.length;
  const mu = Array.from({ length: d }, (_, j) => xTrain.reduce((a, r) => a + r[j]!, 0) / xTrain.length);
  const sd = Array.from(
    { length: d },
    (_, j) => Math.sqrt(xTrain.reduce((a, r) => a + (r[j]! - mu[j]!) ** 2, 0) / xTrain.length) || 1,
  );
  const z = (r: number[]): number[] => r.map((v, j) => (v - mu[j]!) / sd[j]!);
  const xs = xTrain.map(z);
  const w = new Array<number>(d + 1).fill(0);
  for (let it = 0; it < 300; it++) {
    const g = new Array<number>(d + 1).fill(0);
    xs.forEach((r, i) => {
      const p = 1 / (1 + Math.exp(-(w[d]! + r.reduce((a, v, j) => a + v * w[j]!, 0))));
      const e = p - yTrain[i]!;
      r.forEach((v, j) => {
        g[j]! += e * v;
      });
      g[d]! += e;
    });
    for (let j = 0; j <= d; j++) w[j] = w[j]! - 0.5 * (g[j]! / xs.length + (j < d ? 1e-3 * w[j]! : 0));
  }
  return xTest.map((r) => {
    const q = z(r);
    return w[d]! + q.reduce((a, v, j) => a + v * w[j]!, 0);
  });
}

function auc(scores: number[], y: number[]): number {
  let num = 0;
  let pos = 0;
  let neg = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] !== 1) continue;
    pos += 1;
    for (let j = 0; j < y.length; j++)
      if (y[j] === 0) num += scores[i]! > scores[j]! ? 1 : scores[i] === scores[j] ? 0.5 : 0;
  }
  for (const v of y) if (v === 0) neg += 1;
  return num / (pos * neg);
}

/** 5-fold cross-validated AUC, folds by source question. */
function cvAuc(x: number[][], y: number[], groups: string[]): number {
  const fold = (g: string): number => [...g].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7) % 5;
  const scores = new Array<number>(y.length).fill(0);
  for (let k = 0; k < 5; k++) {
    const tr = y.flatMap((_, i) => (fold(groups[i]!) !== k ? [i] : []));
    const te = y.flatMap((_, i) => (fold(groups[i]!) === k ? [i] : []));
    const p = fitPredict(
      tr.map((i) => x[i]!),
      tr.map((i) => y[i]!),
      te.map((i) => x[i]!),
    );
    te.forEach((i, j) => {
      scores[i] = p[j]!;
    });
  }
  return auc(scores, y);
}

function step0(s: Scenario): number[] {
  const obs = new Float32Array(OBS_DIM);
  observeState(scenarioSpec(s), newState(), 10, obs);
  return [...obs];
}

test('a classifier on step-0 observations predicts needs_clarification no better than one on the request text features, and a planted leak is caught', () => {
  const y = scenarios.map((s) => (s.needs_clarification ? 1 : 0));
  const groups = scenarios.map((s) => s.source_id);
  assert.ok(
    y.filter((v) => v === 1).length > 100 && y.filter((v) => v === 0).length > 300,
    'both classes well represented',
  );
  const text = cvAuc(
    scenarios.map((s) => [...staticFeatures(s)]),
    y,
    groups,
  );
  const obs = cvAuc(scenarios.map(step0), y, groups);
  assert.ok(obs <= text + 0.01, `observation AUC ${obs.toFixed(3)} vs text-feature AUC ${text.toFixed(3)}`);
  const rng = createRng(5);
  const leaky = cvAuc(
    scenarios.map((s, i) => [...step0(s), rng.next() < 0.9 ? y[i]! : 1 - y[i]!]),
    y,
    groups,
  );
  assert.ok(leaky > text + 0.01, `the planted leak is caught: ${leaky.toFixed(3)} vs ${text.toFixed(3)}`);
});

test('after a first calc call, a gsm8k observation predicts needs_clarification no better than the text features; the calculator error of v2 is caught', () => {
  const math = scenarios.filter((s) => s.task === 'gsm8k');
  const y = math.map((s) => (s.needs_clarification ? 1 : 0));
  const groups = math.map((s) => s.source_id);
  assert.ok(y.filter((v) => v === 1).length >= 30 && y.filter((v) => v === 0).length >= 30, 'both classes represented');
  const env: EnvOptions = {
    maxTurns: 10,
    weights: Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / DIMENSIONS.length])) as EnvOptions['weights'],
    reward: { use_overclar_penalty: true, alpha: 0.07, cap: 3, beta: 0.05 },
    noise: { tool_failure: 0, search_miss: 0, vague_reply: 0 },
  };
  const specs = math.map(scenarioSpec);
  const afterCalc = math.map((_, i) => {
    const spec = specs[i]!;
    const st = newState();
    assert.equal(stepEnv(spec, st, CALC, new TrainRng(i), env), null);
    const obs = new Float32Array(OBS_DIM);
    observeState(spec, st, 10, obs);
    return obs;
  });
  const text = cvAuc(
    math.map((s) => [...staticFeatures(s)]),
    y,
    groups,
  );
  const obs = cvAuc(
    afterCalc.map((o) => [...o]),
    y,
    groups,
  );
  assert.ok(obs <= text + 0.01, `observation AUC ${obs.toFixed(3)} vs text-feature AUC ${text.toFixed(3)}`);
  // a result on every problem with an arithmetic step, whatever the label; the error only on one without
  afterCalc.forEach((o, i) => {
    const stepless = specs[i]!.calc.length === 0;
    assert.equal(feature(o, 'calc_results'), stepless ? 0 : 1, math[i]!.id);
    assert.equal(feature(o, 'last_error'), stepless ? 1 : 0, math[i]!.id);
  });
  // v2: the calculator answered "error: could not evaluate the expression" exactly when the number was missing
  const v2 = cvAuc(
    afterCalc.map((o, i) => [...o, y[i]!]),
    y,
    groups,
  );
  assert.ok(v2 > text + 0.01, `v2's calculator error is caught: ${v2.toFixed(3)} vs ${text.toFixed(3)}`);
});
