// PPO math against hand computations: GAE(λ) on a two-episode trajectory, the clipped surrogate
// in each of its regimes, advantage normalisation, and the adaptive KL coefficient update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adaptKlCoef, clippedObjective, gae, normalize } from '../../lib/train/strategies/ppo-math.ts';

const close = (a: number, b: number, eps = 1e-12): void => assert.ok(Math.abs(a - b) < eps, `${a} ≠ ${b}`);

test('GAE matches a hand computation and does not bootstrap across an episode end', () => {
  // episode 1: t0, t1 (done); episode 2: t2 (done). γ = 0.9, λ = 0.8.
  const r = [0, 1, 0.5];
  const v = [0.2, 0.4, 0.1];
  const d = [false, true, true];
  const { advantages: A, returns: R } = gae(r, v, d, 0.9, 0.8);
  // t2: δ = 0.5 − 0.1 = 0.4; A = 0.4
  close(A[2]!, 0.4);
  // t1: δ = 1 − 0.4 = 0.6; A = 0.6 (done: nothing from t2)
  close(A[1]!, 0.6);
  // t0: δ = 0 + 0.9·0.4 − 0.2 = 0.16; A = 0.16 + 0.9·0.8·0.6 = 0.592
  close(A[0]!, 0.592);
  assert.deepEqual(
    [...R].map((x) => Math.round(x * 1e12) / 1e12),
    [0.792, 1, 0.5],
  );
});

test('GAE with λ = 1 and γ = 1 gives the return minus the value', () => {
  const { advantages } = gae([0, 0, 2], [0.5, 1, 1.5], [0, 0, 1], 1, 1);
  assert.deepEqual([...advantages], [1.5, 1, 0.5]);
});

test('the clipped objective takes the pessimistic branch in each regime', () => {
  // positive advantage: the ratio's gain is capped at 1 + ε
  close(clippedObjective(1.5, 2, 0.2), 1.2 * 2);
  close(clippedObjective(1.1, 2, 0.2), 1.1 * 2);
  close(clippedObjective(0.5, 2, 0.2), 0.5 * 2); // below 1 − ε: min keeps the unclipped (lower) value
  // negative advantage: the ratio's gain is capped at 1 − ε, a large ratio is not clipped
  close(clippedObjective(0.5, -1, 0.2), 0.8 * -1);
  close(clippedObjective(1.5, -1, 0.2), 1.5 * -1);
  close(clippedObjective(1, 3, 0.2), 3);
});

test('advantage normalisation gives mean 0 and standard deviation 1', () => {
  const x = normalize(Float64Array.from([1, 2, 3, 4]));
  close(
    x.reduce((a, b) => a + b, 0),
    0,
    1e-9,
  );
  close(Math.sqrt(x.reduce((a, b) => a + b * b, 0) / 4), 1, 1e-6);
});

test('the adaptive KL coefficient moves toward target_kl, at most ±20 % × n / horizon per update', () => {
  // KL twice the target: error clipped to +0.2 → β · (1 + 0.2 · 128 / 10000)
  close(adaptKlCoef(0.02, 0.04, 0.02, 128, 10000), 0.02 * (1 + 0.2 * 0.0128));
  // KL at half the target: error −0.5 clipped to −0.2
  close(adaptKlCoef(0.02, 0.01, 0.02, 128, 10000), 0.02 * (1 - 0.2 * 0.0128));
  // KL 10 % above target: error 0.1, not clipped
  close(adaptKlCoef(0.1, 0.022, 0.02, 1000, 1000), 0.1 * 1.1);
  // KL on target: unchanged
  close(adaptKlCoef(0.05, 0.02, 0.02, 64, 100), 0.05);
});

test('the adaptive KL coefficient does not grow past its cap (kl_coef_max), however long the KL stays over target', () => {
  let beta = 0.5;
  for (let i = 0; i < 100; i++) beta = adaptKlCoef(beta, 0.1, 0.02, 1000, 1000, 1);
  assert.equal(beta, 1);
  // below the cap it moves as before; the cap never raises it
  close(adaptKlCoef(0.1, 0.022, 0.02, 1000, 1000, 1), 0.1 * 1.1);
  close(adaptKlCoef(2, 0.01, 0.02, 1000, 1000, 1), 1);
});
