// The weights gate's computation (RC1.md row weights; seeds/000 Phase 2 B): the calibrated
// reward weights from the POOL's scored rollouts (never the shadow set, which is the held-out
// evaluation), by calibrateWeights (src/stats): X = the judge medians (n × 7), y = success (0/1),
// prior w₀ = the old weights, minimise L·‖W^½(Xw − y)‖² + λ‖w − w₀‖² over w ≥ 0, Σw = 1,
// w ≤ max_weight, W the item weights (unstable items count .5). Loss scale: 'mean' (L = 1/Σ
// weights) by default, so λ = .1 pulls toward w₀ the same whatever the pool size (with 'sum', λ
// would weigh 20 000× less at prod scale than on one item's worth of data and the prior would do
// nothing). k-fold CV stratified by success, B bootstrap resamples per fold, one seed.
// Gates: the median over folds of the held-out Spearman ρ with success, relative to the old
// weights' on the same folds: (ρ_new − ρ_old)/|ρ_old| ≥ min_rank_corr_gain; the held-out MAE of
// the score against success: (MAE_new − MAE_old)/MAE_old ≤ max_mae_change; and the shipped
// weights' constraints (which the solver enforces; checked, not assumed).
import { check, type Check } from '../api/index.ts';
import { DIMENSIONS } from '../scoring/types.ts';
import { calibrateWeights, matrix, type Calibration } from '../stats/index.ts';
import type { CalibrationConfig } from './config.ts';
import type { EvalItem } from './items.ts';
import type { Weights } from './reward.ts';

export interface CalibrationOutcome {
  calibration: Calibration;
  checks: Check[];
  /** Fields for the calibration report. */
  report: Record<string, unknown>;
}

/** (new − old)/|old|; NaN when old is 0 or either is undefined (NaN never passes a check). */
export function relativeChange(next: number, old: number): number {
  return old === 0 || !Number.isFinite(old) || !Number.isFinite(next) ? NaN : (next - old) / Math.abs(old);
}

export function calibrate(items: readonly EvalItem[], old: Weights, cfg: CalibrationConfig): CalibrationOutcome {
  const n = items.length;
  const d = DIMENSIONS.length;
  const X = matrix(n, d);
  const y = new Float64Array(n);
  const rowWeights = new Float64Array(n);
  items.forEach((it, i) => {
    DIMENSIONS.forEach((dim, j) => { X.data[i * d + j] = it.scores[dim]; });
    y[i] = it.success ? 1 : 0;
    rowWeights[i] = it.weight;
  });
  const cal = calibrateWeights(
    { X, y, success: y, prior: DIMENSIONS.map((dim) => old[dim]), names: DIMENSIONS, rowWeights },
    { folds: cfg.folds, resamples: cfg.resamples, seed: cfg.seed, l2: cfg.l2, upper: cfg.max_weight, level: cfg.level, loss: cfg.loss },
  );
  const m = cal.median;
  const rankGain = relativeChange(m.metrics.spearman, m.prior.spearman);
  const kendallGain = relativeChange(m.metrics.kendall, m.prior.kendall);
  const maeChange = relativeChange(m.metrics.mae, m.prior.mae);
  const w = DIMENSIONS.map((dim) => cal.weights[dim]!);
  const sum = w.reduce((a, b) => a + b, 0);
  const checks = [
    check('items', n, '>=', cfg.folds, 'too few scored pool rollouts to calibrate on: build rollouts_pool and scores'),
    check('rank_corr_gain', rankGain, '>=', cfg.min_rank_corr_gain,
      'the calibrated weights rank successes no better than the old ones on held-out folds: check the success labels and that the scores cover the pool'),
    check('mae_change', maeChange, '<=', cfg.max_mae_change, 'the calibrated score is not closer to success than the old one on held-out folds'),
    check('weights_min', Math.min(...w), '>=', 0, 'internal error: the solver left the feasible set; please report'),
    check('weights_sum', sum, 'in', [1 - 1e-9, 1 + 1e-9], 'internal error: the solver left the feasible set; please report'),
    check('weights_max', Math.max(...w), '<=', cfg.max_weight, 'internal error: the solver left the feasible set; please report'),
  ];
  const successes = y.reduce((a, b) => a + b, 0);
  const report = {
    definitions: {
      data: 'the pool\'s scored rollouts (rollouts_pool joined with scores.jsonl); the shadow set is never used here',
      target: 'y = success (0/1) of each rollout',
      objective: `L·Σ_i u_i (x_i·w − y_i)² + λ‖w − w₀‖², w ≥ 0, Σw = 1, w ≤ ${cfg.max_weight}; x_i the judge medians, u_i the item weight, `
        + `w₀ the old weights; L = ${cfg.loss === 'mean' ? '1/Σu_i (loss mean: λ keeps its pull at any pool size)' : '1 (loss sum)'}`,
      protocol: `${cfg.folds}-fold CV stratified by success, ${cfg.resamples} bootstrap resamples of each fold's training rows, seed ${cfg.seed}, percentile intervals at level ${cfg.level}`,
      rank_corr_gain: '(median held-out Spearman ρ(score, success) of the fit − that of the old weights) / |the old weights\'|',
      mae_change: '(median held-out MAE(score, success) of the fit − that of the old weights) / the old weights\'',
    },
    settings: { ...cfg },
    n_items: n,
    n_unstable: items.filter((it) => it.unstable).length,
    success_rate: n === 0 ? null : successes / n,
    weights: cal.weights,
    old_weights: old,
    held_out_median: { calibrated: m.metrics, old: m.prior },
    rank_corr_gain: rankGain,
    kendall_gain: kendallGain,
    mae_change: maeChange,
    folds: cal.folds,
    bootstrap: cal.bootstrap,
  };
  return { calibration: cal, checks, report };
}
