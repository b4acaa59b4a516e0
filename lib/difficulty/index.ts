// Difficulty metrics, bands, buckets, balancing and the difficulty gate (docs/rc1.md rows
// difficulty_metrics, balanced_pool, difficulty_report; docs/rc1.md, "Where the planning notes set numbers").
// Rules import this as 'rc1-build/difficulty'. See each module for its contract.
export {
  QWEN3_COUNTING,
  QWEN3_MAX_PIECE_BYTES,
  QWEN3_PROBES,
  QWEN3_SELF_CHECK,
  QWEN3_SELF_CHECK_COUNTS,
  QWEN3_TOKENIZER_SHA256,
  loadQwen3,
  loadQwen3Tokenizer,
  qwen3Counter,
  type Qwen3Counter,
} from './qwen3-tokens.ts';
export {
  NeedsQwen3Package,
  QWEN3_HF_SPLIT,
  QWEN3_TABLE_FORMAT,
  checkPinnedTokenizer,
  checkTable,
  checkTableAgainst,
  encodeQwen3Table,
  loadQwen3Table,
  qwen3TableFromJson,
  qwen3TableOf,
  readQwen3Table,
  type Qwen3Table,
  type Qwen3TableCounter,
  type Qwen3TableHeader,
} from './qwen3-table.ts';
export {
  AMBIGUITY_FLAGS,
  METRIC_DEFINITIONS,
  MetricsComputer,
  requestText,
  type AmbiguityFlag,
  type DifficultyMetrics,
  type MetricsOptions,
} from './metrics.ts';
export {
  BUCKETS,
  DIMENSIONS,
  NUMERIC_DIMENSIONS,
  TIE_RULE,
  bandOf,
  bandsSchema,
  bucketOf,
  dimensionsSchema,
  meanBand,
  parseCondition,
  type BandsConfig,
  type Bucket,
  type Bucketing,
  type Condition,
  type Dimension,
  type DimensionsConfig,
  type NumericDimension,
} from './bands.ts';
export {
  BALANCE_METHOD,
  STRATA,
  balanceSchema,
  maxSize,
  normaliseShares,
  planBalance,
  quotasFor,
  taskQuotas,
  type BalanceConfig,
  type BalanceItem,
  type BalancePlan,
  type BucketCounts,
  type Stratum,
  type StratumPlan,
  type TaskPlan,
} from './balance.ts';
export { balanceParams, gateSchema, metricsParams, metricsSchema, reportParams, type GateConfig } from './config.ts';
export {
  BALANCED_ASSOCIATION,
  HINTS,
  bucketShares,
  clarifyAssociation,
  clueMedians,
  clueNotApplicable,
  difficultyChecks,
  type Scored,
} from './gate.ts';
export { ASSOCIATION_DEFINITION, association, type Association } from './association.ts';
export {
  BIN_WIDTH,
  NOT_APPLICABLE_REASONS,
  bandTable,
  difficultyReport,
  taskShares,
  tasksOf,
  type ReportInput,
} from './report.ts';
export { histogram, quantileSorted, summarise, type Histogram, type Summary } from './stats.ts';
export { BYTES_PER_WORKER, writeMetrics, type MetricsJob, type MetricsSummary } from './metrics-workers.ts';
export {
  ByteWriter,
  LineWriter,
  asScenario,
  blankRange,
  parseObject,
  readLineRanges,
  readLines,
  singleJsonl,
} from './lines.ts';
export {
  balancedEntry,
  balancedEntryOf,
  lineId,
  lineIdOf,
  readMetrics,
  withDifficulty,
  withDifficultyBytes,
} from './metrics-file.ts';
export {
  countCalcOperators,
  countInlineOperators,
  countPhrases,
  distinctEntities,
  entitySpans,
  phraseIndex,
  pronounBeforeName,
  SPAN_MEMO,
  spanMemoSize,
  spanNames,
  type EntitySpan,
  type PhraseIndex,
} from './text-cues.ts';
