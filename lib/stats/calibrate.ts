// The weight-calibration protocol of the `weights` gate: k-fold cross-validation whose folds keep
// every GROUP (the scenario of each rollout) on one side, so no held-out rollout has a sibling in
// training; each fold's fit is the constrained prior fit (simplexNnls) on the training rows, scored
// on the held-out rows by Spearman's ρ and Kendall's τ-b with success and the MAE against y; the
// old weights w₀ and any baseline weightings (each dimension alone…) are scored on the same folds.
// The point figures are the medians over folds.
// Intervals resample the independent unit: B cluster-bootstrap resamples of the groups (within
// strata), each running the WHOLE cross-validation again on the drawn groups — training and test
// folds both resampled — with the fold of every group fixed. Each resample's XᵀX, Xᵀy come exactly
// from per-group Gram sums times how often the group was drawn (no matrix is rebuilt).
// Negative control (optional): the same cross-validation on N permutations of (y, success) at the
// GROUP level within strata — whole groups' label vectors change places (clusterRowMap), so the
// correlation inside a group survives and the null is as wide as the groups make it; the
// statistic is the median held-out Spearman ρ of the fit (permutation.ts).
// Deterministic for a seed. The weights to ship are the fit on all rows. Optional row weights make
// every fit weighted least squares (a row counts its weight); held-out metrics are unweighted.
import { percentileInterval, type Interval } from './bootstrap.ts';
import { clusterBootstrap, clustersOf } from './cluster-bootstrap.ts';
import { binaryRankCorrelations, binaryRankCorrelationsSorted, isBinary } from './binary-rank.ts';
import { groupKFolds } from './folds.ts';
import { groupGrams, unpackGram } from './group-grams.ts';
import { matVec, type Gram, type Matrix } from './matrix.ts';
import { clusterRowMap, permutationNull, type PermutationNull } from './permutation.ts';
import { argsort, rankAverage } from './rank-average.ts';
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
  /** Optional row weights ≥ 0 (weighted least squares); the held-out metrics stay unweighted. */
  rowWeights?: ArrayLike<number>;
  /** The independent unit of each row (e.g. its scenario); default: every row its own group. */
  groups?: ArrayLike<string | number>;
  /** A stratum per row, constant within a group (e.g. the task): folds, bootstrap draws and permutations stay within it. Default: success, for the folds only. */
  strata?: ArrayLike<string | number>;
  /** Other weightings scored on the same held-out folds (e.g. each dimension alone), by name. */
  baselines?: Record<string, ArrayLike<number>>;
}

export interface CalibrationOptions {
  folds: number;
  /** Cluster-bootstrap resamples, each a whole cross-validation on the drawn groups. */
  resamples: number;
  seed: number;
  /** λ of the prior term. */
  l2: number;
  /** Cap on each weight. */
  upper: number;
  /** Percentile-interval level, default .95. */
  level?: number;
  loss?: 'sum' | 'mean';
  /** 'simplex-nnls' (default) is the fit to ship; 'least-squares' is the unconstrained baseline. */
  solver?: 'simplex-nnls' | 'least-squares';
  /** Permutations for the negative control (0 or absent: none). */
  permutations?: number;
  /** What the negative control permutes, in words (for the report). */
  permuted?: string;
}

export const HELD_OUT_METRICS = ['spearman', 'kendall', 'mae'] as const;
export type HeldOutMetric = (typeof HELD_OUT_METRICS)[number];
export type HeldOutMetrics = Record<HeldOutMetric, number>;
export const GAINS = ['rank_corr_gain', 'kendall_gain', 'mae_change'] as const;
export type Gain = (typeof GAINS)[number];

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
  /** Each baseline weighting scored on the same held-out rows. */
  baselines: Record<string, HeldOutMetrics>;
}

export interface Calibration {
  /** The fit on all n rows: the weights to ship. */
  weights: Record<string, number>;
  folds: FoldCalibration[];
  /** Median over folds of each held-out metric: the fit, the old weights, each baseline. */
  median: { metrics: HeldOutMetrics; prior: HeldOutMetrics; baselines: Record<string, HeldOutMetrics> };
  /** Relative changes of the medians, fit vs old weights: (fit − old)/|old|. */
  gains: Record<Gain, number>;
  /** Cluster-bootstrap percentile intervals of the medians, the gains and the full-data weights. */
  bootstrap: {
    groups: number;
    resamples: number;
    metrics: Record<HeldOutMetric, Interval>;
    prior: Record<HeldOutMetric, Interval>;
    gains: Record<Gain, Interval>;
    weights: Record<string, Interval>;
  };
  /** The negative control of the median held-out Spearman ρ of the fit (when permutations > 0). */
  null: (PermutationNull & { replicates: Float64Array }) | null;
}

/**
 * Spearman and Kendall τ-b of the score with success, and the MAE of the score against y. A 0/1
 * success takes the one-sort fast path (binary-rank.ts), which gives the same values.
 */
export function heldOutMetrics(
  score: ArrayLike<number>,
  success: ArrayLike<number>,
  y: ArrayLike<number>,
  successRanks?: ArrayLike<number>,
): HeldOutMetrics {
  const { spearman: s, kendall } = isBinary(success)
    ? binaryRankCorrelations(score, success)
    : rankCorrelations(score, success, successRanks);
  return { spearman: s, kendall, mae: mae(score, y) };
}

/** (next − old)/|old|; NaN when old is 0 or either is undefined. */
const relative = (next: number, old: number): number =>
  old === 0 || !Number.isFinite(old) || !Number.isFinite(next) ? NaN : (next - old) / Math.abs(old);
const named = (names: readonly string[], w: ArrayLike<number>): Record<string, number> =>
  Object.fromEntries(names.map((name, i) => [name, w[i]!]));
const medianOf = (ms: readonly HeldOutMetrics[]): HeldOutMetrics =>
  Object.fromEntries(HELD_OUT_METRICS.map((m) => [m, median(ms.map((x) => x[m]))])) as HeldOutMetrics;
const gainsOf = (fit: HeldOutMetrics, old: HeldOutMetrics): Record<Gain, number> => ({
  rank_corr_gain: relative(fit.spearman, old.spearman),
  kendall_gain: relative(fit.kendall, old.kendall),
  mae_change: relative(fit.mae, old.mae),
});

/** Runs the protocol described in the module comment. */
export function calibrateWeights(data: CalibrationData, o: CalibrationOptions): Calibration {
  const { X, y, success, prior, names, rowWeights } = data;
  const n = X.rows;
  const d = X.cols;
  if (y.length !== n || success.length !== n)
    throw new RangeError(`calibrateWeights: ${n} rows but ${y.length} targets and ${success.length} successes`);
  if (
    rowWeights &&
    (rowWeights.length !== n || !Array.prototype.every.call(rowWeights, (v: number) => v >= 0 && Number.isFinite(v)))
  ) {
    throw new RangeError(`calibrateWeights: rowWeights must be ${n} finite values ≥ 0`);
  }
  if (o.permutations && !isBinary(success))
    throw new RangeError('calibrateWeights: the negative control needs success coded 0/1');
  if (names.length !== d) throw new RangeError(`calibrateWeights: ${d} dimensions but ${names.length} names`);
  const clash = names.find((name) => (HELD_OUT_METRICS as readonly string[]).includes(name));
  if (clash) throw new RangeError(`calibrateWeights: dimension name '${clash}' is also a metric name`);
  for (const [k, w] of Object.entries(data.baselines ?? {}))
    if (w.length !== d)
      throw new RangeError(`calibrateWeights: baseline ${k} has ${w.length} weights for ${d} dimensions`);
  const level = o.level ?? 0.95;
  const fitOptions = { l2: o.l2, prior, upper: o.upper, ...(o.loss ? { loss: o.loss } : {}) };
  const fit = (g: Gram): Float64Array =>
    (o.solver ?? 'simplex-nnls') === 'simplex-nnls' ? simplexNnls(g, fitOptions).w : priorLeastSquares(g, fitOptions);
  const weight = (r: number): number => (rowWeights ? rowWeights[r]! : 1);

  const groupKeys = data.groups ?? Int32Array.from({ length: n }, (_, i) => i);
  const clusters = clustersOf(groupKeys);
  const C = clusters.members.length;
  const folds = groupKFolds(groupKeys, o.folds, o.seed, data.strata ?? success);
  const foldOfGroup = new Int32Array(C);
  for (const f of folds) for (const r of f.test) foldOfGroup[clusters.of[r]!] = f.index;
  const grams = groupGrams(X, y, clusters.members, weight);
  const G = d * d + d + 2;
  /** Per fold, the Gram sums of its groups, each drawn `count` times. */
  const foldSums = (count: ArrayLike<number>): Float64Array[] => {
    const acc = folds.map(() => new Float64Array(G));
    for (let c = 0; c < C; c++) {
      const m = count[c]!;
      if (m === 0) continue;
      const a = acc[foldOfGroup[c]!]!;
      const g = grams[c]!;
      for (let t = 0; t < G; t++) a[t] = a[t]! + m * g[t]!;
    }
    return acc;
  };
  /** The Gram of every fold but `except` (−1: all folds) from foldSums. */
  const gramExcept = (sums: readonly Float64Array[], except: number): Gram => {
    const acc = new Float64Array(G);
    sums.forEach((a, f) => {
      if (f !== except) for (let t = 0; t < G; t++) acc[t] = acc[t]! + a[t]!;
    });
    return unpackGram(acc, d);
  };
  const realSums = foldSums(new Float64Array(C).fill(1));
  const baselines = Object.entries(data.baselines ?? {});

  // Point figures on the real data.
  const reports = folds.map((fold): FoldCalibration => {
    const ts = Float64Array.from(fold.test, (r) => success[r]!);
    const ty = Float64Array.from(fold.test, (r) => y[r]!);
    const ranks = isBinary(ts) ? undefined : rankAverage(ts);
    const score = (w: ArrayLike<number>): HeldOutMetrics => heldOutMetrics(matVec(X, w, fold.test), ts, ty, ranks);
    const w = fit(gramExcept(realSums, fold.index));
    return {
      fold: fold.index,
      nTrain: fold.train.length,
      nTest: fold.test.length,
      weights: named(names, w),
      metrics: score(w),
      prior: score(prior),
      baselines: Object.fromEntries(baselines.map(([k, b]) => [k, score(b)])),
    };
  });
  const med = {
    metrics: medianOf(reports.map((r) => r.metrics)),
    prior: medianOf(reports.map((r) => r.prior)),
    baselines: Object.fromEntries(baselines.map(([k]) => [k, medianOf(reports.map((r) => r.baselines[k]!))])),
  };

  // Cluster bootstrap: the whole cross-validation on each resample of the groups.
  const counts = new Float64Array(C);
  const priorScore = matVec(X, prior);
  let cap = 0;
  for (const m of clusters.members) cap = Math.max(cap, m.length);
  cap *= C;
  const bufS = new Float64Array(cap);
  const bufY = new Float64Array(cap);
  const bufFit = new Float64Array(cap);
  const bufOld = new Float64Array(cap);
  // The old weights' scores are the same in every resample: with a 0/1 success, each fold's
  // held-out rows are sorted by them once, and a resample only re-counts (binaryRankCorrelationsSorted).
  const binary = isBinary(success);
  const oldSorted = folds.map((fold) => {
    const order = argsort(Float64Array.from(fold.test, (r) => priorScore[r]!));
    const rows = Int32Array.from(order, (q) => fold.test[q]!);
    return {
      rows,
      x: Float64Array.from(rows, (r) => priorScore[r]!),
      s: Float64Array.from(rows, (r) => success[r]!),
      cnt: new Float64Array(rows.length),
    };
  });
  const oldMetrics = (f: number): HeldOutMetrics => {
    const o2 = oldSorted[f]!;
    let n = 0;
    let abs = 0;
    for (let q = 0; q < o2.rows.length; q++) {
      const r = o2.rows[q]!;
      const m = counts[clusters.of[r]!]!;
      o2.cnt[q] = m;
      n += m;
      abs += m * Math.abs(o2.x[q]! - y[r]!);
    }
    const rc = binaryRankCorrelationsSorted(o2.x, o2.s, o2.cnt);
    return { spearman: rc.spearman, kendall: rc.kendall, mae: n === 0 ? NaN : abs / n };
  };
  const boot = clusterBootstrap(
    clusters,
    {
      resamples: o.resamples,
      seed: o.seed,
      level,
      ...(data.strata ? { strata: clusters.members.map((m) => data.strata![m[0]!]!) } : {}),
    },
    (_items, drawn) => {
      counts.fill(0);
      for (const c of drawn) counts[c]!++;
      const sums = foldSums(counts);
      const fits: HeldOutMetrics[] = [];
      const olds: HeldOutMetrics[] = [];
      for (const fold of folds) {
        const w = fit(gramExcept(sums, fold.index));
        // The held-out rows of the drawn groups, each as often as its group was drawn.
        let t = 0;
        for (let q = 0; q < fold.test.length; q++) {
          const r = fold.test[q]!;
          const m = counts[clusters.of[r]!]!;
          if (m === 0) continue;
          let f = 0;
          for (let j = 0; j < d; j++) f += X.data[r * d + j]! * w[j]!;
          for (let k = 0; k < m; k++, t++) {
            bufS[t] = success[r]!;
            bufY[t] = y[r]!;
            bufFit[t] = f;
            if (!binary) bufOld[t] = priorScore[r]!;
          }
        }
        if (t < 2) continue;
        const ts = bufS.subarray(0, t);
        const ty = bufY.subarray(0, t);
        const ranks = isBinary(ts) ? undefined : rankAverage(ts);
        fits.push(heldOutMetrics(bufFit.subarray(0, t), ts, ty, ranks));
        olds.push(binary ? oldMetrics(fold.index) : heldOutMetrics(bufOld.subarray(0, t), ts, ty, ranks));
      }
      const mf = medianOf(fits);
      const mo = medianOf(olds);
      const wAll = fit(gramExcept(sums, -1));
      const out: Record<string, number> = { ...gainsOf(mf, mo) };
      for (const m of HELD_OUT_METRICS) {
        out[`fit.${m}`] = mf[m];
        out[`old.${m}`] = mo[m];
      }
      names.forEach((name, i) => {
        out[`w.${name}`] = wAll[i]!;
      });
      return out;
    },
  );
  const iv = boot.intervals;
  const pick = <K extends string>(keys: readonly K[], prefix: string): Record<K, Interval> =>
    Object.fromEntries(keys.map((k) => [k, iv[`${prefix}${k}`] ?? percentileInterval([NaN], level)])) as Record<
      K,
      Interval
    >;

  // Negative control: the cross-validation on group-level permutations of (y, success) within strata.
  let nullResult: Calibration['null'] = null;
  if (o.permutations && o.permutations > 0) {
    const perFold = folds.map((fold) => ({ fold, gram: gramExcept(realSums, fold.index) }));
    const clusterIds = Float64Array.from({ length: C }, (_, c) => c);
    const clusterStrata = data.strata ? clusters.members.map((m) => data.strata![m[0]!]!) : undefined;
    const perm = new Int32Array(n);
    const foldOfRow = Int32Array.from(clusters.of, (c) => foldOfGroup[c]!);
    const k = folds.length;
    const part = new Float64Array(k * (d + 1));
    const testS = new Float64Array(n);
    const testScore = new Float64Array(n);
    nullResult = permutationNull(
      clusterIds,
      {
        permutations: o.permutations,
        seed: o.seed,
        ...(clusterStrata ? { groups: clusterStrata } : {}),
        permuted:
          o.permuted ?? `success between groups${data.strata ? ' within stratum' : ''} (whole groups' label vectors)`,
      },
      (cperm) => {
        clusterRowMap(clusters.members, cperm, perm);
        // Same XᵀX per fold; Xᵀy and yᵀy of the permuted labels, summed per fold in one pass.
        part.fill(0);
        for (let r = 0; r < n; r++) {
          const yp = y[perm[r]!]!;
          const yr = yp * weight(r);
          const o0 = foldOfRow[r]! * (d + 1);
          for (let j = 0; j < d; j++) part[o0 + j] = part[o0 + j]! + X.data[r * d + j]! * yr;
          part[o0 + d] = part[o0 + d]! + yr * yp;
        }
        const rhos = perFold.map(({ fold, gram: g }) => {
          const xty = new Float64Array(d);
          let yty = 0;
          for (let f = 0; f < k; f++) {
            if (f === fold.index) continue;
            for (let j = 0; j < d; j++) xty[j] = xty[j]! + part[f * (d + 1) + j]!;
            yty += part[f * (d + 1) + d]!;
          }
          const w = fit({ xtx: g.xtx, xty, yty, n: g.n });
          const m = fold.test.length;
          for (let q = 0; q < m; q++) {
            const r = fold.test[q]!;
            let sc = 0;
            for (let j = 0; j < d; j++) sc += X.data[r * d + j]! * w[j]!;
            testScore[q] = sc;
            testS[q] = success[perm[r]!]!;
          }
          return binaryRankCorrelations(testScore.subarray(0, m), testS.subarray(0, m)).spearman;
        });
        return median(rhos);
      },
    );
  }

  return {
    weights: named(names, fit(gramExcept(realSums, -1))),
    folds: reports,
    median: med,
    gains: gainsOf(med.metrics, med.prior),
    bootstrap: {
      groups: C,
      resamples: o.resamples,
      metrics: pick(HELD_OUT_METRICS, 'fit.'),
      prior: pick(HELD_OUT_METRICS, 'old.'),
      gains: pick(GAINS, ''),
      weights: pick(names, 'w.'),
    },
    null: nullResult,
  };
}
