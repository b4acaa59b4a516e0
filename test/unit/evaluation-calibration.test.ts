// How the weights gate counts unstable items: calibrateWeights' row weights (lib/stats) make each
// fit weighted least squares, so a row of weight 2 counts exactly as the row listed twice, and the
// weights gate passes the scores target's item weights (unstable .5) as those row weights.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { calibrate, normalise, type EvalItem } from '../../lib/evaluation/index.ts';
import { DIMENSIONS } from '../../lib/scoring/types.ts';
import { calibrateWeights, matrix, type CalibrationOptions } from '../../lib/stats/index.ts';

const OPTIONS: CalibrationOptions = { folds: 2, resamples: 1, seed: 1, l2: 0.1, upper: 0.5, loss: 'sum' };

test('a row of weight 2 moves the full-data fit exactly as the same row listed twice', () => {
  const rng = createRng(3);
  const n = 60;
  const d = 3;
  const X = matrix(
    n,
    d,
    Float64Array.from({ length: n * d }, () => rng.next()),
  );
  const y = Float64Array.from({ length: n }, (_, i) => X.data[i * d]! * 0.7 + 0.1 * rng.next());
  const success = Float64Array.from(y, (v) => (v > 0.4 ? 1 : 0));
  const rowWeights = Float64Array.from({ length: n }, (_, i) => (i === 5 ? 2 : 1));
  const weighted = calibrateWeights(
    { X, y, success, prior: [1 / 3, 1 / 3, 1 / 3], names: ['a', 'b', 'c'], rowWeights },
    OPTIONS,
  );
  const rows = [...Array(n).keys(), 5];
  const X2 = matrix(
    n + 1,
    d,
    Float64Array.from({ length: (n + 1) * d }, (_, t) => X.data[rows[Math.floor(t / d)]! * d + (t % d)]!),
  );
  const dup = calibrateWeights(
    {
      X: X2,
      y: Float64Array.from(rows, (r) => y[r]!),
      success: Float64Array.from(rows, (r) => success[r]!),
      prior: [1 / 3, 1 / 3, 1 / 3],
      names: ['a', 'b', 'c'],
    },
    OPTIONS,
  );
  for (const k of ['a', 'b', 'c'])
    assert.ok(
      Math.abs(weighted.weights[k]! - dup.weights[k]!) < 1e-12,
      `${k}: ${weighted.weights[k]} vs ${dup.weights[k]}`,
    );
});

test('the weights gate fits unstable items at their item weight: misleading rows at weight .5 pull the fit less than at 1', () => {
  const rng = createRng(9);
  const items: EvalItem[] = Array.from({ length: 200 }, (_, i) => {
    const success = rng.next() < 0.6;
    const scores = Object.fromEntries(DIMENSIONS.map((dim) => [dim, rng.next()])) as EvalItem['scores'];
    scores.correctness = success ? 0.9 + 0.1 * rng.next() : 0.2 * rng.next();
    // The first 20 items are unstable with a misleading clarity score.
    if (i < 20) scores.clarity = success ? 0 : 1;
    return {
      rollout_id: `r${i}`,
      scenario_id: `s${i}`,
      source_id: `q${i}`,
      task: 'gsm8k',
      difficulty: 'medium',
      candidate_index: 0,
      success,
      needs_clarification: false,
      clarifications: 0,
      turns: 1,
      scores,
      weight: i < 20 ? 0.5 : 1,
      unstable: i < 20,
      samples: [],
    };
  });
  const cfg = {
    folds: 5,
    resamples: 5,
    seed: 42,
    l2: 0.1,
    loss: 'mean' as const,
    max_weight: 0.5,
    level: 0.95,
    min_rank_corr_gain: 0.08,
    max_mae_change: -0.05,
    min_rank_corr: 0.3,
    max_single_dimension_agreement: 0.95,
  };
  const old = normalise(Object.fromEntries(DIMENSIONS.map((dim) => [dim, 1])));
  const halved = calibrate(items, old, cfg, { permutations: 20 }, 'dev').calibration.weights;
  const full = calibrate(
    items.map((it) => ({ ...it, weight: 1 })),
    old,
    cfg,
    { permutations: 20 },
    'dev',
  ).calibration.weights;
  assert.notEqual(halved.clarity, full.clarity);
  assert.ok(halved.clarity! >= full.clarity!, 'the misleading rows pull clarity down less at weight .5');
});
