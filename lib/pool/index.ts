// The seed pool, imported by rules as 'rc1-build/pool': the prefix-stable task sequence and
// rendering kinds, gaps (how a question is made under-specified), hints and split questions (the
// rendering variants), rendering a source item with a pack, the pool generator and its JSONL writer
// (seed_pool's lines from each item's cached JSON parts), per-scenario measures, and the leak index
// used by pool_validation.
export { checkMix, taskSequence, type TaskSequence } from './task-sequence.ts';
export {
  KINDS,
  VARIANTS,
  frameKind,
  kindAt,
  kindKey,
  kindPlan,
  planKinds,
  type FrameKind,
  type Kind,
  type KindPlan,
  type Variant,
} from './pool-kinds.ts';
export { applyGap, containsTokens, findGaps, type GapCandidate } from './find-gaps.ts';
export {
  HINT_DEFINITION,
  SPLIT_DEFINITION,
  findHints,
  sentences,
  splitQuestion,
  splitText,
  type Hint,
} from './variants.ts';
export { renderScenario, type PoolRender, type RenderChoice } from './render-scenario.ts';
export { renderTwin } from './render-twin.ts';
export { PoolBuilder, poolScenario, type PoolConfig, type PoolScenario, type PoolStats } from './build-pool.ts';
export { PoolLines } from './pool-lines.ts';
export {
  contextTokens,
  LENGTH_DEFINITION,
  scenarioLength,
  scenarioTurns,
  TURNS_DEFINITION,
  userSegments,
  type ScenarioLike,
} from './scenario-metrics.ts';
export {
  FUNCTION_WORDS,
  LEAK_DEFINITION,
  LeakIndex,
  contextKey,
  leakTokens,
  type HeldOut,
  type LeakMatch,
} from './leak-index.ts';
export { readShadowScenarios, readShadowSourceIds, SHADOW_MANIFEST } from './read-shadow.ts';
export {
  PoolParamsSchema,
  ValidationParamsSchema,
  poolConfig,
  type PoolParams,
  type ValidationParams,
} from './pool-params.ts';
export {
  buildShadowSet,
  shadowCells,
  type CellCounts,
  type ShadowScenario,
  type ShadowSetOptions,
  type ShadowSetResult,
} from './shadow-set.ts';
export { SPLITS_DEFINITION, shadowSplits, type SplitCount, type SplitRow } from './shadow-splits.ts';
