// Difficulty buckets for the shadow set's rollouts. The shadow set is not balanced, so its
// rollouts carry difficulty: null; the shadow run needs a bucket per scenario for the new
// reward's difficulty factor and for its split by difficulty. The bucket comes from the same band
// rules as the pool's (difficulty.bands, difficulty.dimensions: bucketOf in lib/difficulty) over
// the shadow scenarios' difficulty metrics (the difficulty_metrics rule run on the shadow set).
import { RuleError } from 'rc1-build';
import { bucketOf, type BandsConfig, type DimensionsConfig } from '../difficulty/bands.ts';
import { readMetrics } from '../difficulty/metrics-file.ts';
import type { Difficulty } from '../rollouts/rollout.ts';
import type { EvalItem } from './items.ts';

/** The bucket of every scenario in a metrics JSONL. */
export async function bucketsFromMetrics(
  file: string,
  root: string,
  bands: BandsConfig,
  dims: DimensionsConfig,
): Promise<Map<string, Difficulty>> {
  const out = new Map<string, Difficulty>();
  for (const m of await readMetrics(file, root)) out.set(m.id, bucketOf(bands, dims, m).bucket);
  return out;
}

/**
 * The items with their scenario's bucket filled in where it is null. An item whose recorded
 * bucket disagrees with the computed one, or whose scenario has no metrics, is an error.
 */
export function withBuckets(items: readonly EvalItem[], buckets: ReadonlyMap<string, Difficulty>): EvalItem[] {
  return items.map((it) => {
    const b = buckets.get(it.scenario_id);
    if (b === undefined) {
      if (it.difficulty !== null) return it;
      throw new RuleError(
        `scenario ${it.scenario_id} (rollout ${it.rollout_id}) has no difficulty metrics: build the shadow set's difficulty metrics from the same scenarios`,
      );
    }
    if (it.difficulty !== null && it.difficulty !== b) {
      throw new RuleError(
        `rollout ${it.rollout_id}: recorded difficulty ${it.difficulty} but the band rules give ${b}: the metrics and rollouts come from different scenarios or bands`,
      );
    }
    return { ...it, difficulty: b };
  });
}
