// The calibration protocol (lib/stats/calibrate.ts) and the Gram statistics it rests on: a
// resample's XᵀX / Xᵀy from row counts equal the resampled matrix's, the protocol recovers a
// known weighting on synthetic data, every fit honours the constraints, and a seed fixes it all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  calibrateWeights,
  gram,
  gramCounts,
  matrix,
  resample,
  type CalibrationData,
  type CalibrationOptions,
} from '../../lib/stats/index.ts';

const NAMES = ['a', 'b', 'c', 'd', 'e'];
const TRUTH = [0.4, 0.25, 0.2, 0.1, 0.05];

/** n synthetic items: scores in [0, 1], y = X·TRUTH + noise, success drawn with probability rising in y. */
function synthetic(n: number, seed: number): CalibrationData {
  const rng = createRng(seed);
  const d = NAMES.length;
  const X = matrix(
    n,
    d,
    Float64Array.from({ length: n * d }, () => rng.next()),
  );
  const y = Float64Array.from(
    { length: n },
    (_, i) => TRUTH.reduce((s, t, j) => s + t * X.data[i * d + j]!, 0) + 0.03 * (rng.next() - 0.5),
  );
  const success = Float64Array.from(y, (v) => (rng.next() < 1 / (1 + Math.exp(-15 * (v - 0.5))) ? 1 : 0));
  return { X, y, success, prior: NAMES.map(() => 1 / d), names: NAMES };
}

const OPTIONS: CalibrationOptions = { folds: 5, resamples: 20, seed: 42, l2: 0.1, upper: 0.5 };

test('XᵀX and Xᵀy from row counts equal those of the resampled rows listed one by one', () => {
  const { X, y } = synthetic(300, 1);
  const sample = resample(
    createRng(2),
    Int32Array.from({ length: 300 }, (_, i) => i),
  );
  const counts = new Float64Array(300);
  for (const r of sample) counts[r]!++;
  const byList = gram(X, y, sample);
  const byCounts = gramCounts(X, y, counts);
  assert.equal(byCounts.n, 300);
  const rel = (a: number, b: number): number => Math.abs(a - b) / Math.max(1, Math.abs(b));
  byList.xtx.data.forEach((v, i) => assert.ok(rel(byCounts.xtx.data[i]!, v) < 1e-13));
  byList.xty.forEach((v, i) => assert.ok(rel(byCounts.xty[i]!, v) < 1e-13));
  assert.ok(rel(byCounts.yty, byList.yty) < 1e-13);
  // And the resampled matrix built explicitly gives the same XᵀX.
  const Xr = matrix(
    300,
    5,
    Float64Array.from({ length: 1500 }, (_, t) => X.data[sample[Math.floor(t / 5)]! * 5 + (t % 5)]!),
  );
  const yr = Float64Array.from(sample, (r) => y[r]!);
  gram(Xr, yr).xtx.data.forEach((v, i) => assert.ok(rel(byList.xtx.data[i]!, v) < 1e-13));
});

test('the protocol recovers a known weighting and beats uniform old weights on held-out folds', () => {
  const cal = calibrateWeights(synthetic(2000, 3), OPTIONS);
  NAMES.forEach((name, j) =>
    assert.ok(Math.abs(cal.weights[name]! - TRUTH[j]!) < 0.02, `${name}: ${cal.weights[name]}`),
  );
  assert.ok(cal.median.metrics.spearman > cal.median.prior.spearman);
  assert.ok(cal.median.metrics.kendall > cal.median.prior.kendall);
  assert.ok(cal.median.metrics.mae < cal.median.prior.mae);
});

test('every fold fit and every bootstrap interval respects w ≥ 0, w ≤ .5 and the fits sum to 1', () => {
  // The truth puts .4 on one dimension; a cap of .3 must bind, and the solver must hold it.
  const cal = calibrateWeights(synthetic(1000, 4), { ...OPTIONS, upper: 0.3 });
  for (const w of [cal.weights, ...cal.folds.map((f) => f.weights)]) {
    const values = Object.values(w);
    assert.ok(
      values.every((v) => v >= 0 && v <= 0.3),
      `weights ${values}`,
    );
    assert.ok(Math.abs(values.reduce((a, b) => a + b, 0) - 1) <= 1e-9);
  }
  assert.equal(cal.weights.a, 0.3);
  for (const iv of Object.values(cal.bootstrap.weights))
    assert.ok(iv.lo >= 0 && iv.hi <= 0.3 && iv.lo <= iv.median && iv.median <= iv.hi);
});

test('the report holds per-fold metrics and baselines, scenario-level intervals of the medians and gains, and fold sizes', () => {
  const data = synthetic(1000, 5);
  const cal = calibrateWeights({ ...data, baselines: { 'a alone': [1, 0, 0, 0, 0] } }, OPTIONS);
  assert.equal(cal.folds.length, 5);
  assert.deepEqual([cal.bootstrap.groups, cal.bootstrap.resamples], [1000, 20]);
  for (const f of cal.folds) {
    assert.equal(f.nTrain + f.nTest, 1000);
    assert.deepEqual(Object.keys(f.baselines), ['a alone']);
  }
  assert.deepEqual(Object.keys(cal.bootstrap.metrics).sort(), ['kendall', 'mae', 'spearman']);
  assert.deepEqual(Object.keys(cal.bootstrap.gains).sort(), ['kendall_gain', 'mae_change', 'rank_corr_gain']);
  assert.deepEqual(Object.keys(cal.bootstrap.weights), NAMES);
  assert.equal(cal.bootstrap.metrics.spearman.level, 0.95);
  const iv = cal.bootstrap.metrics.spearman;
  assert.ok(
    iv.lo < cal.median.metrics.spearman && cal.median.metrics.spearman < iv.hi,
    'the interval brackets the estimate',
  );
  assert.equal(cal.null, null, 'no negative control unless permutations are asked for');
});

/** Each synthetic item repeated m times as the rollouts of one scenario, with a little judge noise. */
function clustered(base: CalibrationData, m: number, seed: number): CalibrationData {
  const rng = createRng(seed);
  const n = base.X.rows * m;
  const d = base.X.cols;
  const X = matrix(
    n,
    d,
    Float64Array.from(
      { length: n * d },
      (_, t) => base.X.data[Math.floor(t / d / m) * d + (t % d)]! + 0.01 * rng.next(),
    ),
  );
  const y = Float64Array.from({ length: n }, (_, i) => base.y[Math.floor(i / m)]!);
  const success = Float64Array.from({ length: n }, (_, i) => base.success[Math.floor(i / m)]!);
  return { ...base, X, y, success, groups: Array.from({ length: n }, (_, i) => `s${Math.floor(i / m)}`) };
}

test('resampling scenarios instead of rollouts widens the held-out interval about √(rollouts per scenario)', () => {
  const data = clustered(synthetic(300, 8), 4, 1);
  const { groups: _g, ...byRow } = data;
  const width = (c: ReturnType<typeof calibrateWeights>): number =>
    c.bootstrap.metrics.spearman.hi - c.bootstrap.metrics.spearman.lo;
  const scen = calibrateWeights(data, { ...OPTIONS, resamples: 100 });
  const rows = calibrateWeights(byRow, { ...OPTIONS, resamples: 100 });
  assert.equal(scen.bootstrap.groups, 300);
  assert.ok(width(scen) / width(rows) > 1.4, `scenario ${width(scen)} vs row ${width(rows)}`);
});

test("the negative control: real labels exceed the null's 95th percentile; labels unrelated to the scores do not", () => {
  const data = synthetic(600, 9);
  const real = calibrateWeights(data, { ...OPTIONS, permutations: 100 });
  assert.equal(real.null!.exceeds_p95, true);
  assert.ok(Math.abs(real.null!.quantiles.p50) < 0.1, `null median ${real.null!.quantiles.p50}`);
  const rng = createRng(4);
  const noise = Float64Array.from(data.success, () => (rng.next() < 0.5 ? 1 : 0));
  const fake = calibrateWeights({ ...data, y: noise, success: noise }, { ...OPTIONS, permutations: 100 });
  assert.equal(fake.null!.exceeds_p95, false, `real ${fake.null!.real}, null p95 ${fake.null!.quantiles.p95}`);
});

test('the protocol is deterministic for a seed and changes with the seed', () => {
  const data = synthetic(600, 6);
  const a = calibrateWeights(data, OPTIONS);
  assert.deepEqual(calibrateWeights(data, OPTIONS), a);
  assert.notDeepEqual(calibrateWeights(data, { ...OPTIONS, seed: 43 }).folds, a.folds);
});

test('the unconstrained baseline solver runs the same protocol without enforcing the constraints', () => {
  const cal = calibrateWeights(synthetic(1000, 4), { ...OPTIONS, upper: 0.3, solver: 'least-squares' });
  assert.ok(cal.weights.a! > 0.3, 'ridge regression is free to exceed the cap');
});

test('mismatched inputs are refused', () => {
  const data = synthetic(50, 7);
  assert.throws(() => calibrateWeights({ ...data, names: ['a'] }, OPTIONS), /5 dimensions but 1 names/);
  assert.throws(
    () => calibrateWeights({ ...data, names: ['a', 'b', 'mae', 'd', 'e'] }, OPTIONS),
    /dimension name 'mae' is also a metric name/,
  );
  assert.throws(() => calibrateWeights({ ...data, y: Array.from(data.y).slice(1) }, OPTIONS), /50 rows but 49 targets/);
});

test('per-scenario Gram sums, each times how often its scenario was drawn, equal the Gram of the drawn rows', async () => {
  const { groupGrams, unpackGram } = await import('../../lib/stats/group-grams.ts');
  const { X, y } = synthetic(120, 12);
  const members = Array.from({ length: 30 }, (_, g) => Int32Array.from({ length: 4 }, (_, k) => 4 * g + k));
  const grams = groupGrams(X, y, members, () => 1);
  const draws = Array.from({ length: 30 }, (_, g) => g % 3);
  const acc = new Float64Array(grams[0]!.length);
  grams.forEach((gr, g) =>
    gr.forEach((v, t) => {
      acc[t] = acc[t]! + draws[g]! * v;
    }),
  );
  const counts = Float64Array.from({ length: 120 }, (_, r) => draws[Math.floor(r / 4)]!);
  const want = gramCounts(X, y, counts);
  const got = unpackGram(acc, 5);
  const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  assert.ok(want.xtx.data.every((v, i) => close(got.xtx.data[i]!, v)));
  assert.ok(want.xty.every((v, i) => close(got.xty[i]!, v)));
  assert.ok(close(got.yty, want.yty) && got.n === want.n);
});
