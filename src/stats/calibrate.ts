// The weight-calibration protocol of RC1.md row `weights` (seeds/000 Phase 2 B): k-fold cross-
// validation, stratified by success, with B bootstrap resamples of each fold's training rows.
// Each fit is the constrained prior fit (simplexNnls) from the resample's XᵀX, Xᵀy, summed from
// how often each row was drawn (gramCounts: exact, no resampled matrix is built); each is scored on the held-out fold by Spearman's ρ and
// Kendall's τ-b of the fitted score with success and the MAE of the score against y; the old
// weights w₀ are scored on the same fold. Deterministic for a seed: the folds come from `seed`,
// fold f's resamples from deriveStreamSeed(seed, f). The weights to ship are the fit on all rows.
// Optional row weights make every fit weighted least squares (a row counts its weight, in the
// resamples too); the held-out metrics are unweighted.
import { bootstrap, deriveStreamSeed, percentileInterval, type Interval } from './bootstrap.ts';
import { kFolds } from './folds.ts';
import { gram, gramCounts, matVec, type Gram, type Matrix } from './matrix.ts';
import { rankAverage } from './rank-average.ts';
import { rankCorrelations } from './rank-correlations.ts';
import { priorLeastSquares, simplexNnls } from './simplex-nnls.ts';
import { mae, median } from './summary.ts';

export interface CalibrationData {
  /** Scores, n items × d dimensions. */
  X: Matrix;
  /** The regression target of each item. */
  y: ArrayLike<number>;
  /** Binary success of each item (0/1): the variable the rank correlations are taken with. */
  success: ArrayLike<number>;
  /** The old weights w₀ (the prior, and the baseline every fold is compared with). */
  prior: ArrayLike<number>;
  /** A name per dimension, used as the keys of weights. */
  names: readonly string[];
  /**
   * Optional row weights ≥ 0 (weighted least squares: row r counts rowWeights[r] times in every
   * fit, and a bootstrap draw of r counts rowWeights[r]). The held-out metrics stay unweighted.
   */
  rowWeights?: ArrayLike<number>;
}

export interface CalibrationOptions {
  folds: number;
  /** Bootstrap resamples per fold. */
  resamples: number;
  seed: number;
  /** λ of the prior term. */
  l2: number;
  /** Cap on each weight. */
  upper: number;
  /** Percentile-interval level, default .95. */
  level?: number;
  /** Stratify the folds by success (default true). */
  stratify?: boolean;
  loss?: 'sum' | 'mean';
  /** 'simplex-nnls' (default) is the fit to ship; 'least-squares' is the unconstrained baseline. */
  solver?: 'simplex-nnls' | 'least-squares';
}

export const HELD_OUT_METRICS = ['spearman', 'kendall', 'mae'] as const;
export type HeldOutMetric = (typeof HELD_OUT_METRICS)[number];
export type HeldOutMetrics = Record<HeldOutMetric, number>;

export interface FoldCalibration {
  fold: number;
  nTrain: number;
  nTest: number;
  /** The fit on the fold's training rows. */
  weights: Record<string, number>;
  /** That fit scored on the held-out rows. */
  metrics: HeldOutMetrics;
  /** The old weights scored on the same held-out rows. */
  prior: HeldOutMetrics;
  /** Percentile intervals over the fold's B resample fits. */
  bootstrap: { weights: Record<string, Interval>; metrics: Record<HeldOutMetric, Interval> };
}

export interface Calibration {
  /** The fit on all n rows: the weights to ship. */
  weights: Record<string, number>;
  folds: FoldCalibration[];
  /** Median over folds of each held-out metric, for the fit and for the old weights. */
  median: { metrics: HeldOutMetrics; prior: HeldOutMetrics };
  /** Percentile intervals over all k·B resample fits (resampling and fold-to-fold variation). */
  bootstrap: { weights: Record<string, Interval>; metrics: Record<HeldOutMetric, Interval>; replicates: number };
}

/**
 * Spearman and Kendall τ-b of the score with success, and the MAE of the score against y.
 * successRanks, if given, must be rankAverage(success) (computed once per fold by the protocol).
 */
export function heldOutMetrics(score: ArrayLike<number>, success: ArrayLike<number>, y: ArrayLike<number>, successRanks?: ArrayLike<number>): HeldOutMetrics {
  const { spearman, kendall } = rankCorrelations(score, success, successRanks);
  return { spearman, kendall, mae: mae(score, y) };
}

const pick = (xs: ArrayLike<number>, rows: Int32Array): Float64Array => Float64Array.from(rows, (r) => xs[r]!);
const named = (names: readonly string[], w: ArrayLike<number>): Record<string, number> =>
  Object.fromEntries(names.map((name, i) => [name, w[i]!]));
const intervals = <K extends string>(keys: readonly K[], reps: readonly Record<string, number>[], level: number): Record<K, Interval> =>
  Object.fromEntries(keys.map((k) => [k, percentileInterval(reps.map((r) => r[k]!), level)])) as Record<K, Interval>;
const only = <K extends string>(keys: readonly K[], all: Record<string, Interval>): Record<K, Interval> =>
  Object.fromEntries(keys.map((k) => [k, all[k]!])) as Record<K, Interval>;

/** Runs the protocol described in the module comment. */
export function calibrateWeights(data: CalibrationData, o: CalibrationOptions): Calibration {
  const { X, y, success, prior, names, rowWeights } = data;
  const n = X.rows;
  if (y.length !== n || success.length !== n) throw new RangeError(`calibrateWeights: ${n} rows but ${y.length} targets and ${success.length} successes`);
  if (rowWeights && (rowWeights.length !== n || !Array.prototype.every.call(rowWeights, (v: number) => v >= 0 && Number.isFinite(v)))) {
    throw new RangeError(`calibrateWeights: rowWeights must be ${n} finite values ≥ 0`);
  }
  const rowWeight = (r: number): number => (rowWeights ? rowWeights[r]! : 1);
  /** The Gram statistics over a list of rows, each counted with its row weight. */
  const gramOf = (rows?: ArrayLike<number>): Gram => {
    if (!rowWeights) return gram(X, y, rows);
    const counts = new Float64Array(n);
    if (rows) for (let t = 0; t < rows.length; t++) counts[rows[t]!]! += rowWeights[rows[t]!]!;
    else counts.set(rowWeights);
    return gramCounts(X, y, counts);
  };
  if (names.length !== X.cols) throw new RangeError(`calibrateWeights: ${X.cols} dimensions but ${names.length} names`);
  const clash = names.find((name) => (HELD_OUT_METRICS as readonly string[]).includes(name));
  if (clash) throw new RangeError(`calibrateWeights: dimension name '${clash}' is also a metric name`);
  const level = o.level ?? 0.95;
  const fitOptions = { l2: o.l2, prior, upper: o.upper, ...(o.loss ? { loss: o.loss } : {}) };
  const fit = (g: Gram): Float64Array =>
    (o.solver ?? 'simplex-nnls') === 'simplex-nnls' ? simplexNnls(g, fitOptions).w : priorLeastSquares(g, fitOptions);

  const folds = kFolds(n, o.folds, o.seed, o.stratify === false ? undefined : success);
  const pooled: Record<string, number>[] = [];
  const reports = folds.map((fold): FoldCalibration => {
    const testSuccess = pick(success, fold.test);
    const testY = pick(y, fold.test);
    const successRanks = rankAverage(testSuccess);
    const score = (w: ArrayLike<number>): HeldOutMetrics => heldOutMetrics(matVec(X, w, fold.test), testSuccess, testY, successRanks);
    const w = fit(gramOf(fold.train));
    const counts = new Float64Array(n);
    const boot = bootstrap(fold.train, { resamples: o.resamples, seed: deriveStreamSeed(o.seed, fold.index), level }, (sample) => {
      // The resample's XᵀX and Xᵀy, exactly, from how often each row was drawn.
      counts.fill(0);
      for (const r of sample) counts[r]! += rowWeight(r);
      const wb = fit(gramCounts(X, y, counts));
      return { ...score(wb), ...named(names, wb) };
    });
    pooled.push(...boot.replicates);
    return {
      fold: fold.index,
      nTrain: fold.train.length,
      nTest: fold.test.length,
      weights: named(names, w),
      metrics: score(w),
      prior: score(prior),
      bootstrap: { weights: only(names, boot.intervals), metrics: only(HELD_OUT_METRICS, boot.intervals) },
    };
  });
  const medianOf = (key: 'metrics' | 'prior'): HeldOutMetrics =>
    Object.fromEntries(HELD_OUT_METRICS.map((m) => [m, median(reports.map((r) => r[key][m]))])) as HeldOutMetrics;
  return {
    weights: named(names, fit(gramOf())),
    folds: reports,
    median: { metrics: medianOf('metrics'), prior: medianOf('prior') },
    bootstrap: { weights: intervals(names, pooled, level), metrics: intervals(HELD_OUT_METRICS, pooled, level), replicates: pooled.length },
  };
}
