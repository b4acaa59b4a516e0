// The held-out scenarios the ppo_eval gate plays both policies on, and their difficulty buckets.
//   shadow  data/shadow_eval_245.jsonl as it is: RC1's held-out evaluation set. Its scenarios are
//           plain renderings (needs_clarification is false on every one), so it measures
//           over-clarification, success, turns and the hard bucket, but not success on items that
//           need a clarification.
//   twins   the same held-out source items rendered under-specified by the seed pool's generator
//           (lib/pool PoolBuilder with template pack v2 and the pool's settings, but clarify_rate 1,
//           no hint / split variants, seed ppo_eval.seed): a detail of the question is replaced by a
//           placeholder and revealed only when asked. These are the needs-clarification items.
//           The seed pool never renders a shadow source item, so the policy never trained on
//           these items either.
// Buckets: neither file carries a difficulty, so each scenario's bucket is computed with the
// balanced pool's band rules (rc1-build/difficulty MetricsComputer + bucketOf over difficulty.bands
// and difficulty.dimensions), exactly as the pool's scenarios got theirs.
import type { Rng } from 'rc1-build';
import { TASKS, type Scenario, type SourceItem, type Task } from '../data/index.ts';
import {
  bucketOf,
  type BandsConfig,
  type Bucket,
  type DimensionsConfig,
  type MetricsComputer,
} from '../difficulty/index.ts';
import { PoolBuilder, poolConfig, type PoolConfig, type PoolParams } from '../pool/index.ts';
import type { RolloutScenario } from '../rollouts/index.ts';
import type { Pack } from '../templates/index.ts';

export type HeldOutKind = 'shadow' | 'twin';

export interface HeldOutSet {
  scenarios: RolloutScenario[];
  kind: Map<string, HeldOutKind>;
  bucket: Map<string, Bucket>;
  /** What was done and why, for the report. */
  notes: string[];
}

export const TWIN_ID_PREFIX = 'shadow-twin';

/**
 * Under-specified renderings of the held-out source items, as many as there are shadow scenarios,
 * in the pool's task mix. A task none of whose held-out items has a detail that can be held back is
 * left out (named in `skipped`).
 */
export function underspecifiedTwins(
  items: readonly SourceItem[],
  pack: Pack,
  pool: PoolParams,
  seed: number,
  n: number,
  rng: (seed: number) => Rng,
): { scenarios: Scenario[]; skipped: Task[] } {
  const config = (mix: PoolParams['mix']): PoolConfig => ({
    ...poolConfig(pool),
    seed,
    mix,
    clarifyRate: 1,
    idPrefix: TWIN_ID_PREFIX,
    variants: { hint: {}, split: {} },
  });
  const probe = new PoolBuilder(items, new Set(), pack, config(pool.mix), rng);
  const skipped = TASKS.filter((t) => (pool.mix[t] ?? 0) > 0 && (probe.stats.eligible[t].kinds.clarify ?? 0) === 0);
  const mix = Object.fromEntries(Object.entries(pool.mix).map(([t, w]) => [t, skipped.includes(t as Task) ? 0 : w]));
  if (Object.values(mix).every((w) => w === 0)) return { scenarios: [], skipped };
  const builder = skipped.length === 0 ? probe : new PoolBuilder(items, new Set(), pack, config(mix), rng);
  return { scenarios: [...builder.scenarios(n)].map(({ hint: _hint, ...s }) => s), skipped };
}

/** The bucket of every scenario by the pool's band rules. */
export function bucketScenarios(
  scenarios: readonly Scenario[],
  metrics: MetricsComputer,
  bands: BandsConfig,
  dims: DimensionsConfig,
): Map<string, Bucket> {
  const out = new Map<string, Bucket>();
  for (const s of scenarios) out.set(s.id, bucketOf(bands, dims, metrics.compute(s)).bucket);
  return out;
}

/** The shadow scenarios and their twins, with kinds, buckets and notes. */
export function heldOutSet(
  shadow: readonly Scenario[],
  twins: { scenarios: Scenario[]; skipped: Task[] },
  metrics: MetricsComputer,
  bands: BandsConfig,
  dims: DimensionsConfig,
): HeldOutSet {
  const scenarios: RolloutScenario[] = [...shadow, ...twins.scenarios];
  const kind = new Map<string, HeldOutKind>([
    ...shadow.map((s) => [s.id, 'shadow'] as const),
    ...twins.scenarios.map((s) => [s.id, 'twin'] as const),
  ]);
  if (kind.size !== scenarios.length)
    throw new Error('internal error: a twin id collides with a shadow id; please report');
  const notes = [
    `shadow: ${shadow.length} scenarios of data/shadow_eval_245.jsonl, ${shadow.filter((s) => s.needs_clarification).length} of them needing a clarification`,
    `twins: ${twins.scenarios.length} under-specified renderings of the shadow source items (pack v2, clarify_rate 1), the needs-clarification items`,
    "buckets: computed with the balanced pool's band rules (difficulty.bands, difficulty.dimensions) from each scenario's difficulty metrics: neither set carries one",
  ];
  if (twins.skipped.length)
    notes.push(
      `twins: no held-out ${twins.skipped.join(', ')} item has a detail that can be held back; those tasks have no twins`,
    );
  return { scenarios, kind, bucket: bucketScenarios(scenarios, metrics, bands, dims), notes };
}
