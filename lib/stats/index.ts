// Statistics for the evaluation half of RC1 (shadow_run, weights, overclar_ablation): rank
// correlation, top-k overlap, NNLS and the constrained weight fit, cross-validation folds and
// the bootstrap; negative controls (permutation nulls), the scenario-level (cluster) bootstrap and
// the checks a comparison gate builds from them (decisions.ts). Pure, deterministic functions; no
// I/O. Rules import this as 'rc1-build/stats'.
export { mae, mean, median, quantile, quantileSorted, variance } from './summary.ts';
export { argsort, averageRanksInOrder, rankAverage } from './rank-average.ts';
export { pearson, pointBiserial, spearman } from './correlation.ts';
export { kendallTauB, kendallTauBInOrder, orderByXThenY } from './kendall-tau-b.ts';
export { rankCorrelations, type RankCorrelations } from './rank-correlations.ts';
export { topCount, topKOverlap, topMembership } from './top-k-overlap.ts';
export { gram, gramCounts, matVec, matrix, matrixFromRows, type Gram, type Matrix } from './matrix.ts';
export { nnls, nnlsGram, type NnlsOptions, type NnlsResult } from './nnls.ts';
export { boxSimplexKkt, boxSimplexQp, type BoxSimplexQpResult, type KktResiduals } from './box-simplex-qp.ts';
export {
  priorLeastSquares,
  priorLoss,
  priorQp,
  simplexNnls,
  type PriorFitOptions,
  type SimplexNnlsOptions,
  type SimplexNnlsResult,
} from './simplex-nnls.ts';
export { foldAssignment, foldsOf, groupKFolds, kFolds, type Fold } from './folds.ts';
export {
  bootstrap,
  deriveStreamSeed,
  percentileInterval,
  resample,
  type BootstrapOptions,
  type BootstrapResult,
  type Interval,
} from './bootstrap.ts';
export {
  GAINS,
  HELD_OUT_METRICS,
  calibrateWeights,
  heldOutMetrics,
  type Calibration,
  type Gain,
  type CalibrationData,
  type CalibrationOptions,
  type FoldCalibration,
  type HeldOutMetric,
  type HeldOutMetrics,
} from './calibrate.ts';
export {
  clusterRowMap,
  groupMembers,
  nullQuantiles,
  nullSummary,
  permutationNull,
  permuteWithinGroups,
  type NullQuantiles,
  type PermutationNull,
  type PermutationOptions,
} from './permutation.ts';
export {
  MAX_UNDEFINED_SHARE,
  clusterBootstrap,
  clustersOf,
  moreClustersNeeded,
  type ClusterBootstrapOptions,
  type ClusterBootstrapResult,
  type Clusters,
} from './cluster-bootstrap.ts';
export {
  estimateCheck,
  intervalCheck,
  nullCheck,
  type IntervalCheck,
  type IntervalDecision,
  type Verdict,
} from './decisions.ts';
export { averageRanksFast, binaryRankCorrelations, binaryRankCorrelationsSorted, isBinary } from './binary-rank.ts';
