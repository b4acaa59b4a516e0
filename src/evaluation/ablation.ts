// The over-clarification ablation (RC1.md row overclar_ablation; seeds/000 Phase 2 C): best-of-N
// selection over each scenario's N candidate rollouts by the new reward WITH the penalty
// α·min(c, cap) (on needs_clarification = false items) and WITHOUT it (same calibrated weights,
// same β), then, over the selected rollouts (one per scenario):
//   over-clarification rate  selected rollouts that asked ≥ 1 clarifying question / scenarios
//                            with needs_clarification = false
//   average turns            mean assistant turns of the selected rollouts
//   success                  share of the selected rollouts that succeeded
// Ties in the reward go to the lowest candidate index. Selection is an argmax within one
// scenario, so item weights and the difficulty factor (constant within a scenario, > 0) change
// nothing; both are applied anyway so the reward is the one training uses.
// Gates: relative drop of the rate ≥ min_relative_drop, turns up by ≤ max_turns_increase,
// success down by ≤ max_success_drop_pp percentage points.
import { check, type Check } from '../api/index.ts';
import { relativeChange } from './calibration.ts';
import type { OverclarConfig } from './config.ts';
import { byScenario, type EvalItem } from './items.ts';
import { newReward, type RewardSettings } from './reward.ts';

export interface Selection {
  scenarios: number;
  not_needing_clarification: number;
  overclarified: number;
  overclar_rate: number;
  avg_turns: number;
  success: number;
}

/** The best candidate of each scenario group by a scoring (ties: lowest candidate index). */
export function bestOfN(groups: readonly EvalItem[][], score: (it: EvalItem) => number): EvalItem[] {
  return groups.map((g) => {
    let best = g[0]!;
    let top = score(best);
    for (const it of g.slice(1)) {
      const s = score(it);
      if (s > top) { best = it; top = s; }
    }
    return best;
  });
}

export function summarise(selected: readonly EvalItem[]): Selection {
  const eligible = selected.filter((it) => !it.needs_clarification);
  const over = eligible.filter((it) => it.clarifications > 0).length;
  const n = selected.length;
  return {
    scenarios: n,
    not_needing_clarification: eligible.length,
    overclarified: over,
    overclar_rate: eligible.length === 0 ? NaN : over / eligible.length,
    avg_turns: n === 0 ? NaN : selected.reduce((a, it) => a + it.turns, 0) / n,
    success: n === 0 ? NaN : selected.filter((it) => it.success).length / n,
  };
}

export interface AblationResult { checks: Check[]; report: Record<string, unknown> }

export function overclarAblation(items: readonly EvalItem[], reward: RewardSettings & { penalty: { alpha: number; cap: number } }, cfg: OverclarConfig): AblationResult {
  const groups = byScenario(items);
  const withP = bestOfN(groups, (it) => newReward(it, reward));
  const withoutP = bestOfN(groups, (it) => newReward(it, { ...reward, penalty: null }));
  const a = summarise(withP);
  const b = summarise(withoutP);
  const drop = -relativeChange(a.overclar_rate, b.overclar_rate);
  const turns = a.avg_turns - b.avg_turns;
  const successPp = 100 * (a.success - b.success);
  const split = (key: (it: EvalItem) => string): Record<string, { with_penalty: Selection; without_penalty: Selection }> => {
    const keys = [...new Set(withP.map(key))].sort();
    return Object.fromEntries(keys.map((k) => [k, { with_penalty: summarise(withP.filter((it) => key(it) === k)), without_penalty: summarise(withoutP.filter((it) => key(it) === k)) }]));
  };
  const eligible = items.filter((it) => !it.needs_clarification);
  return {
    checks: [
      check('overclar_relative_drop', drop, '>=', cfg.ablation.min_relative_drop,
        b.overclarified === 0
          ? 'no selected rollout over-clarifies even without the penalty: nothing to measure (the candidates need unnecessary clarifications)'
          : 'the penalty does not steer selection away from needless clarifying questions: raise overclar.alpha or check needs_clarification labels'),
      check('avg_turns_change', turns, '<=', cfg.ablation.max_turns_increase, 'the penalty made the selected dialogues longer'),
      check('success_change_pp', successPp, '>=', -cfg.ablation.max_success_drop_pp, 'the penalty costs success: it steers selection away from clarifications that were needed, or α is too high'),
    ],
    report: {
      data: 'the pool\'s scored rollouts (rollouts_pool joined with scores.jsonl), N candidates per scenario',
      definitions: {
        selection: 'best-of-N by the new reward per scenario, with and without the penalty (ties: lowest candidate index)',
        overclar_rate: 'selected rollouts with ≥ 1 clarifying question / scenarios with needs_clarification = false',
        overclar_relative_drop: '(rate without − rate with) / rate without',
        avg_turns_change: 'average turns with − without',
        success_change_pp: '100·(success with − success without)',
      },
      penalty: reward.penalty,
      beta: reward.beta,
      candidates: items.length,
      candidate_overclar_rate: eligible.length === 0 ? null : eligible.filter((it) => it.clarifications > 0).length / eligible.length,
      with_penalty: a,
      without_penalty: b,
      overclar_relative_drop: drop,
      avg_turns_change: turns,
      success_change_pp: successPp,
      by_task: split((it) => it.task),
      by_difficulty: split((it) => it.difficulty ?? 'none'),
    },
  };
}
