// Summaries of evaluation episodes (policy.ts evaluatePolicy): overall, by task, by difficulty,
// by clarification need, and the two groups the ppo_eval gate reads directly — items that need a
// clarification, and the hard bucket of hotpotqa + strategyqa. Rates are shares in [0, 1]; a
// group with no episode has n = 0 and null rates (never a silent 0).
import type { Task } from '../data/index.ts';
import type { Difficulty } from '../rollouts/index.ts';

export interface EvalEpisode {
  scenario_id: string;
  task: Task;
  difficulty: Difficulty | null;
  needs_clarification: boolean;
  success: boolean;
  reward: number;
  clarifications: number;
  /** Rollout turns: clarifying questions + the answer turn. */
  turns: number;
  /** Assistant actions, tool calls included. */
  actions: number;
  tool_calls: number;
  answered: boolean;
  /** The actions taken, in order (ask / wiki / calc / answer). */
  trace: string[];
}

export interface GroupStats {
  n: number;
  success: number | null;
  reward: number | null;
  /** Share of the group's no-clarification-needed items where the policy asked at least once. */
  overclar_rate: number | null;
  avg_turns: number | null;
  avg_actions: number | null;
  avg_tool_calls: number | null;
  /** Share of the group's episodes that ended with an answer (not by running out of turns). */
  answered: number | null;
}

export interface EvalSummary {
  overall: GroupStats;
  by_task: Record<string, GroupStats>;
  by_difficulty: Record<string, GroupStats>;
  needs_clarification: GroupStats;
  no_clarification_needed: GroupStats;
  /** hotpotqa + strategyqa, hard bucket (the ppo_eval gate's hard-bucket check). */
  hard_qa: GroupStats;
}

const mean = (xs: readonly number[]): number | null =>
  xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;

export function groupStats(eps: readonly EvalEpisode[]): GroupStats {
  const noNeed = eps.filter((e) => !e.needs_clarification);
  return {
    n: eps.length,
    success: mean(eps.map((e) => (e.success ? 1 : 0))),
    reward: mean(eps.map((e) => e.reward)),
    overclar_rate: mean(noNeed.map((e) => (e.clarifications > 0 ? 1 : 0))),
    avg_turns: mean(eps.map((e) => e.turns)),
    avg_actions: mean(eps.map((e) => e.actions)),
    avg_tool_calls: mean(eps.map((e) => e.tool_calls)),
    answered: mean(eps.map((e) => (e.answered ? 1 : 0))),
  };
}

function groupBy(eps: readonly EvalEpisode[], key: (e: EvalEpisode) => string): Record<string, GroupStats> {
  const groups = new Map<string, EvalEpisode[]>();
  for (const e of eps) groups.set(key(e), [...(groups.get(key(e)) ?? []), e]);
  return Object.fromEntries([...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, groupStats(v)]));
}

export function summarizeEval(eps: readonly EvalEpisode[]): EvalSummary {
  return {
    overall: groupStats(eps),
    by_task: groupBy(eps, (e) => e.task),
    by_difficulty: groupBy(eps, (e) => e.difficulty ?? 'none'),
    needs_clarification: groupStats(eps.filter((e) => e.needs_clarification)),
    no_clarification_needed: groupStats(eps.filter((e) => !e.needs_clarification)),
    hard_qa: groupStats(
      eps.filter((e) => e.difficulty === 'hard' && (e.task === 'hotpotqa' || e.task === 'strategyqa')),
    ),
  };
}
