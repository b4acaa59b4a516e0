// The `file` rollout source: candidate trajectories from a real model run, one JSONL record per
// candidate: { scenario_id, policy, candidate_index?, trajectory: { steps, final_answer } }
// (schemas.ts policyRunSchema, strict). Each record is joined with its scenario and its success
// computed here, never taken from the file. A bad line is a DataError with file, line, field and
// what was expected; so is a record naming a scenario that is not among the inputs, and a second
// record for the same (scenario_id, candidate_index). Candidates without candidate_index are
// numbered per scenario in file order, after the highest index given so far for that scenario.
// Output order: scenario order, then candidate index — whatever order the run wrote.
import { DataError, describeValue } from '../data/index.ts';
import { buildRollout, type Rollout, type RolloutScenario } from './rollout.ts';
import { policyRunSchema, readValidated, type Located, type PolicyRun } from './schemas.ts';

export interface FileSourceResult {
  rollouts: Rollout[];
  /** Scenarios of the inputs with no candidate in the run files. */
  missing: string[];
  /** Candidates per scenario: min and max over the scenarios that have any. */
  perScenario: { min: number; max: number };
}

/** Reads the run files (in the order given) and builds their rollouts against the scenarios. */
export async function fileRollouts(
  files: readonly string[],
  scenarios: readonly RolloutScenario[],
  root?: string,
): Promise<FileSourceResult> {
  const byId = new Map(scenarios.map((s) => [s.id, s]));
  const runs: Located<PolicyRun>[] = [];
  for (const f of files) runs.push(...(await readValidated(f, policyRunSchema, root)));
  const taken = new Map<string, Set<number>>();
  const next = new Map<string, number>();
  const built = new Map<string, Rollout[]>();
  for (const { at, value } of runs) {
    const scenario = byId.get(value.scenario_id);
    if (!scenario)
      throw new DataError(
        at,
        'scenario_id',
        'the id of a scenario in the `scenarios` inputs',
        describeValue(value.scenario_id),
      );
    const used = taken.get(scenario.id) ?? new Set<number>();
    const index = value.candidate_index ?? next.get(scenario.id) ?? 0;
    if (used.has(index)) {
      throw new DataError(
        at,
        value.candidate_index === undefined ? '(record)' : 'candidate_index',
        `a candidate index not yet used for scenario ${scenario.id}`,
        `number ${index}`,
      );
    }
    used.add(index);
    taken.set(scenario.id, used);
    next.set(scenario.id, Math.max(next.get(scenario.id) ?? 0, index + 1));
    const list = built.get(scenario.id) ?? [];
    list.push(
      buildRollout(scenario, value.trajectory, { source: 'file', policy: value.policy, candidate_index: index }),
    );
    built.set(scenario.id, list);
  }
  const rollouts: Rollout[] = [];
  const missing: string[] = [];
  let min = Infinity;
  let max = 0;
  for (const s of scenarios) {
    const list = built.get(s.id);
    if (!list) {
      missing.push(s.id);
      continue;
    }
    list.sort((a, b) => a.candidate_index - b.candidate_index);
    rollouts.push(...list);
    min = Math.min(min, list.length);
    max = Math.max(max, list.length);
  }
  return { rollouts, missing, perScenario: { min: Number.isFinite(min) ? min : 0, max } };
}
