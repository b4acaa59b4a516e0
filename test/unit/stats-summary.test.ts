// lib/stats summary helpers and ranking: mean, variance, type-7 quantiles, median, MAE and
// average ranks, against values worked by hand (and, where noted, numpy / scipy defaults).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argsort, mae, mean, median, quantile, quantileSorted, rankAverage, variance } from '../../lib/stats/index.ts';

const close = (a: number, b: number, tol = 1e-12): void =>
  assert.ok(Math.abs(a - b) <= tol, `${a} is not within ${tol} of ${b}`);

test('mean and variance of a small sample match the hand computation', () => {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, Σ(x − 5)² = 32, population variance 4, sample variance 32/7.
  const xs = [2, 4, 4, 4, 5, 5, 7, 9];
  assert.equal(mean(xs), 5);
  assert.equal(variance(xs, 0), 4);
  close(variance(xs), 32 / 7);
});

test('variance keeps its precision for data far from zero', () => {
  const xs = [1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16];
  assert.equal(variance(xs), 30);
});

test('an undefined statistic is NaN: empty mean, median and MAE, a one-item sample variance', () => {
  assert.ok(Number.isNaN(mean([])));
  assert.ok(Number.isNaN(median([])));
  assert.ok(Number.isNaN(mae([], [])));
  assert.ok(Number.isNaN(variance([3])));
  assert.equal(variance([3], 0), 0);
});

test('quantile interpolates linearly between order statistics (type 7, numpy default)', () => {
  // [1, 2, 3, 4, 10]: h = 4p. p = .1 → h = .4 → 1 + .4·1 = 1.4; p = .25 → h = 1 → 2;
  // p = .9 → h = 3.6 → 4 + .6·6 = 7.6 (numpy.quantile gives 1.4, 2.0, 7.6).
  const xs = [10, 3, 1, 4, 2];
  close(quantile(xs, 0.1), 1.4);
  assert.equal(quantile(xs, 0.25), 2);
  close(quantile(xs, 0.9), 7.6);
  assert.equal(quantile(xs, 0), 1);
  assert.equal(quantile(xs, 1), 10);
  assert.deepEqual(xs, [10, 3, 1, 4, 2], 'the input is not sorted in place');
  assert.equal(quantileSorted([5], 0.3), 5);
});

test('median is the middle value for odd n and the mean of the two middle values for even n', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

test('quantile refuses p outside [0, 1]', () => {
  assert.throws(() => quantile([1, 2], 1.5), /p must be in \[0, 1\]/);
  assert.throws(() => quantile([1, 2], NaN), /p must be in \[0, 1\]/);
});

test('MAE is the mean absolute difference and refuses samples of different lengths', () => {
  assert.equal(mae([1, 2, 3], [2, 2, 1]), 1);
  assert.throws(() => mae([1, 2], [1]), /differ in length \(2 vs 1\)/);
});

test('tied values share the mean of the positions they occupy', () => {
  // 10 20 20 30 30 30 40 → positions 1, (2+3)/2, (4+5+6)/3, 7 (scipy rankdata 'average').
  assert.deepEqual(Array.from(rankAverage([30, 10, 20, 30, 40, 20, 30])), [5, 1, 2.5, 5, 7, 2.5, 5]);
  assert.deepEqual(Array.from(rankAverage([])), []);
});

test('average ranks always sum to n(n + 1)/2', () => {
  const xs = Array.from({ length: 101 }, (_, i) => (i * 37) % 11);
  const s = rankAverage(xs).reduce((a, b) => a + b, 0);
  assert.equal(s, (101 * 102) / 2);
});

test('ranking refuses NaN and infinite values', () => {
  assert.throws(() => rankAverage([1, NaN, 2]), /value 1 is NaN, not a finite number/);
  assert.throws(() => rankAverage([Infinity]), /value 0 is Infinity/);
});

test('argsort breaks ties by index, so the order is deterministic', () => {
  assert.deepEqual(Array.from(argsort([2, 1, 2, 1])), [1, 3, 0, 2]);
});
