// The ppo_eval gate's comparison (RC1.md row ppo_eval; seeds/000 Phase 3): the trained policy
// against the policy before training, both played the same way on the same held-out scenarios
// (eval-sets.ts), compared by task, by difficulty and on the four gated quantities:
//   needs_clarification_success_gain_pp   success on items that need a clarification, trained −
//                                         reference, in percentage points            >= +5
//   overclar_rate_relative_change         (trained − reference) / reference of the share of
//                                         no-clarification-needed items where the policy asked
//                                                                                    <= −0.20
//   avg_turns_change                      mean rollout turns (clarifying questions + the answer
//                                         turn) over all items, trained − reference   <= 0
//   hard_qa_success_gain_pp               success on hard-bucket hotpotqa + strategyqa items, pp
//                                                                                    >= +5
// plus two size checks (each gated group holds at least min_group_n distinct scenarios), so a gain measured
// on a handful of items never passes. Thresholds come from the `ppo_eval:` config section.
import { z } from 'zod';
import { check, waive, type Check } from '../api/index.ts';
import type { EvalSummary, GroupStats } from './eval-summary.ts';

export const ppoEvalSchema = z.object({
  /** Seeds the environment's guesses (per scenario) and the twins' renderings. */
  seed: z.number().int().nonnegative(),
  /** greedy: the argmax action; sampled: actions drawn from the policy, `samples` episodes per scenario. */
  actions: z.enum(['greedy', 'sampled']),
  samples: z.number().int().positive(),
  /** Add the under-specified twins of the shadow items (the needs-clarification items). */
  twins: z.boolean(),
  /** A gated group (needs-clarification items, hard hotpotqa + strategyqa) must hold at least this many items. */
  min_group_n: z.number().int().positive(),
  thresholds: z.object({
    min_needs_clarification_success_gain_pp: z.number(),
    max_overclar_relative_change: z.number(),
    max_avg_turns_increase: z.number(),
    min_hard_qa_success_gain_pp: z.number(),
  }).strict(),
}).strict();
export type PpoEvalConfig = z.infer<typeof ppoEvalSchema>;

export const PPO_EVAL_DEFINITIONS = {
  success: 'the task\'s success metric (src/rollouts success.ts) on the episode\'s final answer; an episode that runs out of turns fails',
  overclar_rate: 'share of the items that need no clarification on which the policy asked at least once',
  avg_turns: 'mean rollout turns per episode: clarifying questions + the answer turn (tool calls are not turns)',
  hard_qa: 'hotpotqa + strategyqa items in the hard bucket',
  policies: 'both played the same way (ppo_eval.actions: greedy = the argmax action; sampled = actions drawn from the policy, ppo_eval.samples episodes per scenario), in simulated-dialogue-v1, on the same scenarios with the same per-scenario seeds',
  reference: 'the policy before training: initial/ of the checkpoint dir (step 0, the frozen reference of the KL penalty)',
} as const;

const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;
const pp = (t: number | null, r: number | null): number | null => (t === null || r === null ? null : r6((t - r) * 100));

export interface GroupComparison { trained: GroupStats; reference: GroupStats; success_gain_pp: number | null; avg_turns_change: number | null }

export function compareGroup(trained: GroupStats, reference: GroupStats): GroupComparison {
  return {
    trained, reference,
    success_gain_pp: pp(trained.success, reference.success),
    avg_turns_change: trained.avg_turns === null || reference.avg_turns === null ? null : r6(trained.avg_turns - reference.avg_turns),
  };
}

function compareBy(t: Record<string, GroupStats>, r: Record<string, GroupStats>): Record<string, GroupComparison> {
  const keys = [...new Set([...Object.keys(t), ...Object.keys(r)])].sort();
  const empty: GroupStats = { n: 0, success: null, reward: null, overclar_rate: null, avg_turns: null, avg_actions: null, avg_tool_calls: null, answered: null };
  return Object.fromEntries(keys.map((k) => [k, compareGroup(t[k] ?? empty, r[k] ?? empty)]));
}

export interface PpoEvalComparison {
  checks: Check[];
  overall: GroupComparison;
  needs_clarification: GroupComparison;
  no_clarification_needed: GroupComparison;
  hard_qa: GroupComparison;
  by_task: Record<string, GroupComparison>;
  by_difficulty: Record<string, GroupComparison>;
}

/** Distinct held-out scenarios in the two gated groups (with sampled actions a group has several episodes per scenario). */
export interface GroupItems { needs_clarification: number; hard_qa: number }

/** The gate's checks and the by-task / by-difficulty comparison. */
export function comparePolicies(trained: EvalSummary, reference: EvalSummary, c: PpoEvalConfig, items: GroupItems): PpoEvalComparison {
  const th = c.thresholds;
  const nc = compareGroup(trained.needs_clarification, reference.needs_clarification);
  const hard = compareGroup(trained.hard_qa, reference.hard_qa);
  const ovT = trained.no_clarification_needed.overclar_rate;
  const ovR = reference.no_clarification_needed.overclar_rate;
  let overclar = check('overclar_rate_relative_change', ovT === null || ovR === null || ovR === 0 ? null : r6((ovT - ovR) / ovR), '<=', th.max_overclar_relative_change,
    'the trained policy still asks on items that need no clarification: raise train.reward.alpha (the over-clarification penalty) or train longer');
  if (ovR === 0 && ovT === 0) overclar = waive(overclar, 'neither policy ever asks on items that need no clarification: there is nothing to reduce');
  const turnsChange = trained.overall.avg_turns === null || reference.overall.avg_turns === null ? null : r6(trained.overall.avg_turns - reference.overall.avg_turns);
  const checks = [
    check('needs_clarification_success_gain_pp', nc.success_gain_pp, '>=', th.min_needs_clarification_success_gain_pp,
      'the trained policy does not ask (or not early enough) where a detail is missing: check the reward\'s clarification dimension weight and train longer'),
    overclar,
    check('avg_turns_change', turnsChange, '<=', th.max_avg_turns_increase,
      'the trained policy takes more turns than before: it asks more often; raise train.reward.alpha or lower train.ppo.ent_coef'),
    check('hard_qa_success_gain_pp', hard.success_gain_pp, '>=', th.min_hard_qa_success_gain_pp,
      'hard hotpotqa / strategyqa items did not improve: raise the hard share of train.sampling.by_difficulty or train longer'),
    check('needs_clarification_items', items.needs_clarification, '>=', c.min_group_n,
      'too few needs-clarification items to measure a gain: set ppo_eval.twins: true'),
    check('hard_qa_items', items.hard_qa, '>=', c.min_group_n,
      'too few hard hotpotqa + strategyqa items among the held-out scenarios to measure a gain'),
  ];
  return {
    checks,
    overall: compareGroup(trained.overall, reference.overall),
    needs_clarification: nc,
    no_clarification_needed: compareGroup(trained.no_clarification_needed, reference.no_clarification_needed),
    hard_qa: hard,
    by_task: compareBy(trained.by_task, reference.by_task),
    by_difficulty: compareBy(trained.by_difficulty, reference.by_difficulty),
  };
}

/** One line for the build's summary: the four gated numbers. */
export function comparisonSummary(c: PpoEvalComparison): string {
  const f = (x: unknown, unit = ''): string => (typeof x === 'number' ? `${x >= 0 ? '+' : ''}${Number(x.toFixed(3))}${unit}` : 'n/a');
  const v = (name: string): unknown => c.checks.find((k) => k.name === name)?.value;
  return `needs-clarification success ${f(v('needs_clarification_success_gain_pp'), ' pp')}, over-clarification ${f(typeof v('overclar_rate_relative_change') === 'number' ? (v('overclar_rate_relative_change') as number) * 100 : null, ' %')}, turns ${f(v('avg_turns_change'))}, hard QA success ${f(v('hard_qa_success_gain_pp'), ' pp')}`;
}
