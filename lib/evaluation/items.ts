// The unit every evaluation gate works on: a scored rollout (EvalItem), the join of a rollouts
// JSONL written by the rollouts target (what happened: task, difficulty, success, turns,
// clarifications, needs_clarification) with its score record from scores.jsonl (the judge's
// medians, the item weight, the K samples). Both files are this project's own outputs, so lines
// are parsed and the fields used are type-checked, not schema-validated field by field (as
// readScores does). Items whose score record failed (every sample not obtained) carry no scores
// and are counted and left out; a rollout without any score record is an error: the scores
// target must cover every rollout an evaluation gate reads.
import { createReadStream } from 'node:fs';
import { relative } from 'node:path';
import { createInterface } from 'node:readline';
import { RuleError } from 'rc1-build';
import type { Difficulty } from '../rollouts/rollout.ts';
import { readScores, type ScoreRecord } from '../scoring/score-record.ts';
import { DIMENSIONS, type DimScores } from '../scoring/types.ts';

export interface EvalItem {
  rollout_id: string;
  scenario_id: string;
  /** The scenario's source question: the pool renders one question as several scenarios, so the
   * independent unit of the pool's gates is the source question of a task, `${task}/${source_id}` (sourceKey). */
  source_id: string;
  task: string;
  /** The scenario's bucket: from the balanced pool, or computed for the shadow set (shadow-buckets.ts). */
  difficulty: Difficulty | null;
  candidate_index: number;
  success: boolean;
  needs_clarification: boolean;
  /** Clarifying questions the trajectory asked (c of the penalty). */
  clarifications: number;
  /** Assistant turns: one per clarifying question plus the answer turn. */
  turns: number;
  /** The judge's median per dimension. */
  scores: DimScores;
  /** The item's weight from the scores target: 1 stable, scoring.aggregate.unstable_weight unstable. */
  weight: number;
  unstable: boolean;
  /** Each judge sample's scores, by sample index (for the judge's test-retest figures). */
  samples: DimScores[];
}

export interface ItemSet {
  items: EvalItem[];
  /** Rollouts whose score record has status failed (no scores): left out. */
  failed: string[];
}

/** The fields of a rollout line the evaluation uses. */
interface RolloutFields {
  rollout_id: string;
  scenario_id: string;
  source_id: string;
  task: string;
  difficulty: Difficulty | null;
  candidate_index: number;
  success: boolean;
  needs_clarification: boolean;
  clarifications: number;
  turns: number;
}

function rolloutFields(v: Record<string, unknown>, where: string): RolloutFields {
  const want = (k: string, type: string): unknown => {
    const x = v[k];
    if (typeof x !== type)
      throw new RuleError(`${where}: field ${k}: expected ${type}, got ${x === null ? 'null' : typeof x}`);
    return x;
  };
  const d = v.difficulty;
  if (d !== null && d !== 'easy' && d !== 'medium' && d !== 'hard')
    throw new RuleError(`${where}: field difficulty: expected easy, medium, hard or null`);
  return {
    rollout_id: want('rollout_id', 'string') as string,
    scenario_id: want('scenario_id', 'string') as string,
    source_id: want('source_id', 'string') as string,
    task: want('task', 'string') as string,
    difficulty: d,
    candidate_index: want('candidate_index', 'number') as number,
    success: want('success', 'boolean') as boolean,
    needs_clarification: want('needs_clarification', 'boolean') as boolean,
    clarifications: want('clarifications', 'number') as number,
    turns: want('turns', 'number') as number,
  };
}

/** The rollouts of JSONL files written by the rollouts target, in file and line order (streamed). */
export async function readRolloutFields(files: readonly string[], root: string): Promise<RolloutFields[]> {
  const out: RolloutFields[] = [];
  for (const file of files) {
    let line = 0;
    for await (const raw of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
      line++;
      if (raw.trim() === '') continue;
      const where = `${relative(root, file)}:${line}`;
      let v: unknown;
      try {
        v = JSON.parse(raw);
      } catch (e) {
        throw new RuleError(`${where}: not JSON (${(e as Error).message})`);
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw new RuleError(`${where}: expected a rollout object`);
      out.push(rolloutFields(v as Record<string, unknown>, where));
    }
  }
  return out;
}

function dimScores(s: unknown, where: string): DimScores {
  const o = s as Record<string, unknown> | null;
  for (const d of DIMENSIONS) {
    if (typeof o?.[d] !== 'number' || !Number.isFinite(o[d]))
      throw new RuleError(`${where}: scores.${d}: expected a number`);
  }
  return o as DimScores;
}

/**
 * Joins rollouts (in their order) with the score records of scoresFile by rollout_id. Score
 * records of other rollouts (the scores target scores the shadow set and the pool together) are
 * passed over.
 */
export async function readItems(rolloutFiles: readonly string[], scoresFile: string, root: string): Promise<ItemSet> {
  const rollouts = await readRolloutFields(rolloutFiles, root);
  const byId = new Map<string, ScoreRecord>();
  for (const r of await readScores(scoresFile)) byId.set(r.rollout_id, r);
  const items: EvalItem[] = [];
  const failed: string[] = [];
  const seen = new Set<string>();
  for (const r of rollouts) {
    if (seen.has(r.rollout_id)) throw new RuleError(`rollout ${r.rollout_id} appears twice in the rollouts inputs`);
    seen.add(r.rollout_id);
    const s = byId.get(r.rollout_id);
    if (!s)
      throw new RuleError(
        `rollout ${r.rollout_id} has no score record in ${relative(root, scoresFile)}: the scores target must score every rollout this gate reads`,
      );
    if (s.status === 'failed' || s.scores === null) {
      failed.push(r.rollout_id);
      continue;
    }
    const where = `${relative(root, scoresFile)}: ${r.rollout_id}`;
    const samples = s.samples.flatMap((x) => (x.ok ? [dimScores(x.scores, `${where} sample ${x.index}`)] : []));
    items.push({ ...r, scores: dimScores(s.scores, where), weight: s.weight, unstable: s.unstable, samples });
  }
  return { items, failed };
}

/** The items grouped by scenario, in first-appearance order; each group in candidate order. */
export function byScenario<T extends Pick<EvalItem, 'scenario_id' | 'candidate_index'>>(items: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const it of items) {
    let g = groups.get(it.scenario_id);
    if (!g) groups.set(it.scenario_id, (g = []));
    g.push(it);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.candidate_index - b.candidate_index));
}

/** The independent unit of the pool's gates: the source question of a task (its renderings share it). */
export const sourceKey = (it: Pick<EvalItem, 'task' | 'source_id'>): string => `${it.task}/${it.source_id}`;
