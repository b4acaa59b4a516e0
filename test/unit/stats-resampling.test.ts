// k-fold assignment and the seeded bootstrap (lib/stats/folds.ts, bootstrap.ts): partitions,
// balance, stratification, determinism for a seed, and the percentile-interval definition.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  bootstrap,
  deriveStreamSeed,
  foldAssignment,
  kFolds,
  mean,
  percentileInterval,
  resample,
} from '../../lib/stats/index.ts';

test('k folds partition the items: every item is held out exactly once and trained on k − 1 times', () => {
  const folds = kFolds(103, 5, 42);
  const held = new Array<number>(103).fill(0);
  const trained = new Array<number>(103).fill(0);
  for (const f of folds) {
    for (const i of f.test) held[i]!++;
    for (const i of f.train) trained[i]!++;
    assert.equal(f.train.length + f.test.length, 103);
    assert.deepEqual(
      Array.from(f.test),
      Array.from(f.test).sort((a, b) => a - b),
      'test indices ascend',
    );
  }
  assert.ok(held.every((c) => c === 1));
  assert.ok(trained.every((c) => c === 4));
  const sizes = folds.map((f) => f.test.length).sort();
  assert.deepEqual(sizes, [20, 21, 21, 21, 20].sort());
});

test('the same seed gives the same folds and another seed gives different ones', () => {
  assert.deepEqual(foldAssignment(500, 5, 42), foldAssignment(500, 5, 42));
  assert.notDeepEqual(foldAssignment(500, 5, 42), foldAssignment(500, 5, 43));
});

test('stratified folds spread each stratum over the folds within one item', () => {
  const rng = createRng(1);
  // 1000 items, 13 % successes: every fold gets 26 successes, give or take one.
  const success = Array.from({ length: 1000 }, () => (rng.next() < 0.13 ? 1 : 0));
  const positives = success.reduce((a: number, b) => a + b, 0);
  const fold = foldAssignment(1000, 5, 42, success);
  for (const s of [0, 1]) {
    const perFold = [0, 1, 2, 3, 4].map((f) => success.filter((v, i) => v === s && fold[i] === f).length);
    assert.ok(Math.max(...perFold) - Math.min(...perFold) <= 1, `stratum ${s}: ${perFold}`);
    assert.equal(
      perFold.reduce((a, b) => a + b, 0),
      s === 1 ? positives : 1000 - positives,
    );
  }
  const sizes = [0, 1, 2, 3, 4].map((f) => fold.filter((v) => v === f).length);
  assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `fold sizes ${sizes}`);
});

test('stratified folds depend on how items are grouped and on the sorted key order, not on the key type', () => {
  // Groups are dealt in sorted key order (0 before 1, 'a' before 'b'), so relabelling 0 → 'a',
  // 1 → 'b' changes nothing; the group that appears first in the data does not go first.
  const numeric = foldAssignment(9, 3, 7, [1, 0, 1, 0, 1, 0, 0, 1, 1]);
  assert.deepEqual(numeric, foldAssignment(9, 3, 7, ['b', 'a', 'b', 'a', 'b', 'a', 'a', 'b', 'b']));
  assert.deepEqual(numeric, foldAssignment(9, 3, 7, [5, 2, 5, 2, 5, 2, 2, 5, 5]));
});

test('fold requests that cannot be met are refused', () => {
  assert.throws(() => kFolds(10, 1, 0), /k must be an integer ≥ 2/);
  assert.throws(() => kFolds(3, 5, 0), /need at least k = 5 items, got 3/);
  assert.throws(() => kFolds(4, 2, 0, [0, 1]), /4 items but 2 strata keys/);
});

test('a resample draws from the pool with replacement, deterministically for a seed', () => {
  const pool = Int32Array.of(10, 20, 30, 40);
  const a = resample(createRng(5), pool);
  const b = resample(createRng(5), pool);
  assert.deepEqual(a, b);
  assert.equal(a.length, 4);
  assert.ok(Array.from(a).every((v) => pool.includes(v)));
  // Over many draws every pool member appears and some repeat (with replacement).
  const rng = createRng(6);
  const seen = new Set<number>();
  let repeats = 0;
  for (let r = 0; r < 50; r++) {
    const s = resample(rng, pool);
    s.forEach((v) => seen.add(v));
    if (new Set(s).size < 4) repeats++;
  }
  assert.equal(seen.size, 4);
  assert.ok(repeats > 0);
});

test('the bootstrap is deterministic for a seed and changes with it', () => {
  const rng = createRng(3);
  const xs = Array.from({ length: 200 }, () => rng.next());
  const stat = (s: Int32Array) => ({ mean: mean(Array.from(s, (i) => xs[i]!)) });
  const a = bootstrap(200, { resamples: 200, seed: 42 }, stat);
  const b = bootstrap(200, { resamples: 200, seed: 42 }, stat);
  assert.deepEqual(a, b);
  assert.notDeepEqual(bootstrap(200, { resamples: 200, seed: 43 }, stat).intervals, a.intervals);
  assert.equal(a.replicates.length, 200);
  // The mean of U(0, 1) draws: its 95 % interval holds the sample mean and is about ±1.96·0.289/√200 = ±0.04 wide.
  const m = mean(xs);
  const iv = a.intervals.mean;
  assert.ok(iv.lo < m && m < iv.hi);
  assert.ok(iv.hi - iv.lo > 0.05 && iv.hi - iv.lo < 0.11, `width ${iv.hi - iv.lo}`);
});

test('percentile intervals are the type-7 2.5 % and 97.5 % quantiles of the replicates', () => {
  // Replicates 1..100: h = 99·0.025 = 2.475 → 3 + .475 = 3.475; h = 99·0.975 = 96.525 → 97.525.
  const reps = Array.from({ length: 100 }, (_, i) => 100 - i);
  const iv = percentileInterval(reps);
  assert.ok(Math.abs(iv.lo - 3.475) < 1e-12 && Math.abs(iv.hi - 97.525) < 1e-12);
  assert.equal(iv.median, 50.5);
  assert.equal(iv.level, 0.95);
  const iv90 = percentileInterval(reps, 0.9);
  assert.ok(Math.abs(iv90.lo - 5.95) < 1e-12 && Math.abs(iv90.hi - 95.05) < 1e-12);
  assert.throws(() => percentileInterval(reps, 1), /level must be in \(0, 1\)/);
});

test('derived stream seeds differ per stream and are 32-bit unsigned', () => {
  const seeds = [0, 1, 2, 3, 4].map((f) => deriveStreamSeed(42, f));
  assert.equal(new Set(seeds).size, 5);
  assert.ok(seeds.every((s) => Number.isInteger(s) && s >= 0 && s < 2 ** 32));
});
