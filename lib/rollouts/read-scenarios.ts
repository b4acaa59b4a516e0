// Reads the scenario files a rollouts target names (the shadow set and/or the balanced pool):
// every line validated (schemas.ts scenarioSchema: the balanced pool's `difficulty` is kept, other
// extra fields are ignored), files in the order
// given, a scenario id seen twice is a DataError at its second occurrence.
import { DataError } from '../data/index.ts';
import type { RolloutScenario } from './rollout.ts';
import { readValidated, scenarioSchema } from './schemas.ts';

export async function readScenarios(files: readonly string[], root?: string): Promise<RolloutScenario[]> {
  const out: RolloutScenario[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    for (const { at, value } of await readValidated(f, scenarioSchema, root)) {
      const first = seen.get(value.id);
      if (first)
        throw new DataError(
          at,
          'id',
          `a scenario id not used before (first used at ${first})`,
          JSON.stringify(value.id),
        );
      seen.set(value.id, `${at.file}:${at.line}`);
      out.push(value);
    }
  }
  return out;
}
