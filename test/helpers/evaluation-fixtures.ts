// Fixtures for the evaluation tests (test/unit/evaluation-*.test.ts): a rule runner with a fake
// RuleContext that takes the profile and args (the evaluation gates depend on both), the shipped
// configs/evaluation.yaml and ppo_scale.yaml as params, and synthetic scored rollouts written in
// the formats of the rollouts and scores targets (only the fields the evaluation reads, plus the
// ones readScores requires). Rules are compiled the way the engine compiles them (rule-harness).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { createRng, type Check, type Rule, type RuleResult } from '../../packages/engine/src/api/index.ts';
import { DIMENSIONS, type DimScores } from '../../lib/scoring/types.ts';
import { ROOT } from '../fixtures/difficulty/rule-harness.ts';
import { runRuleUnderContract } from './rule-context.ts';

export { ROOT, compileRule } from '../fixtures/difficulty/rule-harness.ts';

/** The shipped config files merged (each key set in one file), as the engine's tree holds them. */
export function shippedConfig(): Record<string, any> {
  const out: Record<string, any> = {};
  for (const f of ['evaluation.yaml', 'ppo_scale.yaml', 'pool.yaml', 'difficulty.yaml'])
    Object.assign(out, parse(readFileSync(join(ROOT, 'configs', f), 'utf8')));
  return out;
}

export interface EvalRun {
  result: RuleResult;
  checks: Map<string, Check>;
  logs: string[];
}

export async function runEvalRule(
  rule: Rule,
  o: {
    params: unknown;
    inputs: Record<string, string[]>;
    outputs: Record<string, string> | string[];
    root: string;
    profile?: string;
    args?: Record<string, unknown>;
  },
): Promise<EvalRun> {
  // Every evaluation rule run here is a gate: its report is its `report` output, or its one output.
  const gate = Array.isArray(o.outputs)
    ? o.outputs.length === 1
      ? { gate: o.outputs[0]! }
      : {}
    : 'report' in o.outputs
      ? { gate: 'report' }
      : {};
  const r = await runRuleUnderContract(rule, { ...o, outDir: join(o.root, 'out'), ...gate });
  return { result: r.result, checks: r.checks, logs: r.logs };
}

export interface SynthOptions {
  scenarios: number;
  candidates?: number;
  seed?: number;
  /** Bucket of scenario s; null for none (a shadow set). Default: easy, medium, hard in turn. */
  difficulty?: (s: number) => 'easy' | 'medium' | 'hard' | null;
  /** Share of needs_clarification = false candidates that ask a needless question. */
  overclarRate?: number;
  /** Success of a needless asker (default: like the others), to make the penalty cost success. */
  overclarSucceeds?: boolean;
  /** A candidate of a scenario that needs clarification and asks nothing fails (the missing detail decides the answer). */
  needsMatter?: boolean;
  /** Scenarios per source question (renderings of one question: consecutive scenarios of a task). Default 1. */
  renderings?: number;
}

const TASKS = ['hotpotqa', 'strategyqa', 'gsm8k'] as const;

/**
 * Synthetic scored rollouts: correctness and reasoning follow success, the other five dimensions
 * are noise; a needless clarifying question lowers the clarification dimension a little. Writes
 * <dir>/<name>_rollouts.jsonl and <dir>/<name>_scores.jsonl; returns their paths.
 */
export function writeSynthetic(dir: string, name: string, o: SynthOptions): { rollouts: string; scores: string } {
  const rng = createRng(o.seed ?? 7);
  const n = o.candidates ?? 4;
  const rollouts: string[] = [];
  const scores: string[] = [];
  const jitter = (x: number): number =>
    Math.min(1, Math.max(0, Math.round((x + 0.02 * (rng.next() - 0.5)) * 1e4) / 1e4));
  for (let s = 0; s < o.scenarios; s++) {
    const skill = rng.next();
    // Every fourth scenario needs clarification: across tasks (task = s mod 3), so a label permuted within task can move.
    const needs = s % 4 === 3;
    const difficulty = o.difficulty ? o.difficulty(s) : (['easy', 'medium', 'hard'] as const)[s % 3]!;
    for (let c = 0; c < n; c++) {
      const over = !needs && rng.next() < (o.overclarRate ?? 0.25);
      const drawn = over && o.overclarSucceeds !== undefined ? o.overclarSucceeds : rng.next() < 0.3 + 0.6 * skill;
      const clarifications = needs ? (rng.next() < 0.7 ? 1 : 0) : over ? 1 : 0;
      const success = o.needsMatter && needs && clarifications === 0 ? false : drawn;
      const m = {} as DimScores;
      for (const d of DIMENSIONS) m[d] = jitter(rng.next());
      m.correctness = jitter(success ? 1 : 0.1 * rng.next());
      m.reasoning = jitter(success ? 0.7 + 0.3 * rng.next() : 0.5 * rng.next());
      if (over) m.clarification = jitter(0.85);
      const id = `${name}-${s}#${c}`;
      rollouts.push(
        JSON.stringify({
          rollout_id: id,
          scenario_id: `${name}-${s}`,
          source_id: `q${Math.floor(Math.floor(s / 3) / (o.renderings ?? 1))}`,
          task: TASKS[s % 3],
          difficulty,
          candidate_index: c,
          success,
          needs_clarification: needs,
          clarifications,
          turns: clarifications + 1,
        }),
      );
      const samples = [0, 1, 2].map((index) => ({
        index,
        ok: true,
        provider: 'test',
        model: 'synthetic',
        live: false,
        billable: false,
        cached: false,
        scores: Object.fromEntries(DIMENSIONS.map((d) => [d, jitter(m[d])])),
      }));
      scores.push(JSON.stringify({ rollout_id: id, status: 'scored', scores: m, weight: 1, unstable: false, samples }));
    }
  }
  const paths = { rollouts: join(dir, `${name}_rollouts.jsonl`), scores: join(dir, `${name}_scores.jsonl`) };
  mkdirSync(dir, { recursive: true });
  writeFileSync(paths.rollouts, `${rollouts.join('\n')}\n`);
  writeFileSync(paths.scores, `${scores.join('\n')}\n`);
  return paths;
}

/** A weights file in the weights target's format with the given weights. */
export function writeWeights(path: string, weights: Record<string, number>): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ version: 1, dimensions: DIMENSIONS, weights }, null, 2)}\n`);
  return path;
}

/** A metrics line per scenario of a synthetic set whose bands make it `bucket` (every dimension votes alike). */
export function writeMetrics(
  path: string,
  ids: readonly string[],
  bucket: (i: number) => 'easy' | 'medium' | 'hard',
): string {
  const values = {
    easy: {
      len_tokens: 100,
      turns: 2,
      tool_hops: 0,
      hops: 1,
      distractors: 0,
      entities: 2,
      ops_numeric: 0,
      connector_density: 1,
      clue_overlap: 0.6,
      needs_clarification: false,
    },
    medium: {
      len_tokens: 400,
      turns: 3,
      tool_hops: 2,
      hops: 3,
      distractors: 5,
      entities: 5,
      ops_numeric: 2,
      connector_density: 4,
      clue_overlap: 0.3,
      needs_clarification: false,
    },
    hard: {
      len_tokens: 900,
      turns: 6,
      tool_hops: 5,
      hops: 5,
      distractors: 8,
      entities: 9,
      ops_numeric: 5,
      connector_density: 8,
      clue_overlap: 0.1,
      needs_clarification: false,
    },
  };
  const lines = ids.map((id, i) =>
    JSON.stringify({ id, task: 'hotpotqa', ...values[bucket(i)], coref_pronouns: 0, ambiguity_flags: [] }),
  );
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}
