// The over-clarification ablation (the RC1 specification's overclar_ablation row): best-of-N
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
// Gates (docs/gates.md gives each threshold's source and decision): the relative drop of the
// rate ≥ min_relative_drop on the lower bound of its scenario-level bootstrap interval, and ≥
// min_absolute_drop_pp percentage points (point estimate); turns up by ≤ max_turns_increase
// (point estimate, interval reported); success down by ≤ max_success_drop_pp on the lower bound
// (non-inferiority); and a negative control: the condition labels (with / without the penalty)
// are permuted within each scenario — a seeded swap of the two selections, scenario by scenario,
// the paired permutation test — and the real drop must exceed the 95th percentile of the drops so
// obtained: the drop is the penalty's doing, not selection noise. What this gate cannot see: it
// measures over-clarification on the items LABELLED as not needing clarification, so it does not
// test the labels themselves (shuffled needs_clarification labels leave it passing on the dev
// data, where the penalty never outweighs a correctness difference).
// When no selected rollout over-clarifies even without the penalty, the relative drop and its
// null are n/a (nothing to reduce) and the absolute floor fails: the ablation has shown nothing.
import { check, notApplicable, type Check } from '../api/index.ts';
import { clusterBootstrap, estimateCheck, intervalCheck, nullCheck, nullSummary, permutationNull } from '../stats/index.ts';
import { relativeChange } from './calibration.ts';
import type { OverclarConfig, StatisticsConfig } from './config.ts';
import { byScenario, type EvalItem } from './items.ts';
import { threshold } from './provenance.ts';
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

type Penalised = RewardSettings & { penalty: { alpha: number; cap: number } };

/** Per-scenario figures of a selection: eligible (needs no clarification), over-clarified, turns, success. */
function perScenario(groups: readonly EvalItem[][], selected: readonly EvalItem[]) {
  return groups.map((g, s) => {
    const it = selected[s]!;
    const eligible = g[0]!.needs_clarification ? 0 : 1;
    return { eligible, over: eligible && it.clarifications > 0 ? 1 : 0, turns: it.turns, success: it.success ? 1 : 0 };
  });
}

/** The drop (relative and in pp), turns and success changes from per-scenario figures, over the scenario indices idx. */
function effects(w: ReturnType<typeof perScenario>, wo: ReturnType<typeof perScenario>, idx: ArrayLike<number>) {
  let elig = 0; let ow = 0; let owo = 0; let tw = 0; let two = 0; let sw = 0; let swo = 0;
  for (let t = 0; t < idx.length; t++) {
    const i = idx[t]!;
    elig += w[i]!.eligible; ow += w[i]!.over; owo += wo[i]!.over; tw += w[i]!.turns; two += wo[i]!.turns; sw += w[i]!.success; swo += wo[i]!.success;
  }
  const n = idx.length;
  const rw = elig === 0 ? NaN : ow / elig;
  const rwo = elig === 0 ? NaN : owo / elig;
  return { relative_drop: -relativeChange(rw, rwo), absolute_drop_pp: 100 * (rwo - rw), turns_change: (tw - two) / n, success_change_pp: (100 * (sw - swo)) / n };
}

export function overclarAblation(items: readonly EvalItem[], reward: Penalised, cfg: OverclarConfig, stats: StatisticsConfig): AblationResult {
  const groups = byScenario(items);
  const withP = bestOfN(groups, (it) => newReward(it, reward));
  const withoutP = bestOfN(groups, (it) => newReward(it, { ...reward, penalty: null }));
  const a = summarise(withP);
  const b = summarise(withoutP);
  const pw = perScenario(groups, withP);
  const pwo = perScenario(groups, withoutP);
  const all = Int32Array.from(groups, (_, i) => i);
  const real = effects(pw, pwo, all);
  const task = groups.map((g) => g[0]!.task);

  // Scenario-level bootstrap within task.
  const boot = clusterBootstrap({ members: groups.map((_, i) => Int32Array.of(i)) },
    { resamples: stats.bootstrap_resamples, seed: stats.seed, level: stats.level, strata: task }, (idx) => effects(pw, pwo, idx));
  // Negative control: the two selections of each scenario swapped at random (paired permutation).
  const C = groups.length;
  const cond = Float64Array.from({ length: 2 * C }, (_, i) => (i % 2 === 0 ? 1 : 0));
  const pair = Int32Array.from({ length: 2 * C }, (_, i) => i >> 1);
  const fw = new Array<(typeof pw)[number]>(C);
  const fwo = new Array<(typeof pw)[number]>(C);
  const nul = permutationNull(cond, { permutations: stats.permutations, seed: stats.seed, groups: pair, permuted: 'the with / without penalty labels within each scenario' }, (lab) => {
    for (let c = 0; c < C; c++) {
      const swap = lab[2 * c] === 0;
      fw[c] = swap ? pwo[c]! : pw[c]!;
      fwo[c] = swap ? pw[c]! : pwo[c]!;
    }
    return effects(fw, fwo, all).relative_drop;
  });
  const iv = boot.intervals;
  const nothing = b.overclarified === 0;
  const more = `the pool has ${C} scenarios, ${b.overclarified} of whose selections over-clarify without the penalty: a larger pool (scale.n)`;
  const NOTHING = 'no selected rollout over-clarifies even without the penalty: there is nothing to reduce';
  const relCheck = intervalCheck('overclar_relative_drop', { estimate: real.relative_drop, interval: iv.relative_drop, clusters: C }, '>=', cfg.ablation.min_relative_drop,
    'the penalty does not steer selection away from needless clarifying questions: raise overclar.alpha or check needs_clarification labels', more);
  const nullC = nullCheck('overclar_relative_drop', nul,
    'the drop is within what swapping the two selections at random gives: the penalty\'s effect is not distinguishable from selection noise');
  const checks = [
    nothing ? notApplicable(relCheck, NOTHING) : relCheck,
    nothing ? notApplicable(nullC, NOTHING) : nullC,
    estimateCheck('overclar_absolute_drop_pp', real.absolute_drop_pp, '>=', cfg.ablation.min_absolute_drop_pp,
      nothing ? `${NOTHING}: the candidates need unnecessary clarifications for the ablation to show anything`
        : 'the over-clarification rate hardly moves in absolute terms: a relative drop of a rate near zero is not a finding', iv.absolute_drop_pp),
    estimateCheck('avg_turns_change', real.turns_change, '<=', cfg.ablation.max_turns_increase, 'the penalty made the selected dialogues longer', iv.turns_change),
    intervalCheck('success_change_pp', { estimate: real.success_change_pp, interval: iv.success_change_pp, clusters: C }, '>=', -cfg.ablation.max_success_drop_pp,
      'the penalty costs success: it steers selection away from clarifications that were needed, or α is too high', more),
  ];
  const split = (key: (it: EvalItem) => string): Record<string, { with_penalty: Selection; without_penalty: Selection }> => {
    const keys = [...new Set(withP.map(key))].sort();
    return Object.fromEntries(keys.map((k) => [k, { with_penalty: summarise(withP.filter((it) => key(it) === k)), without_penalty: summarise(withoutP.filter((it) => key(it) === k)) }]));
  };
  const eligible = items.filter((it) => !it.needs_clarification);
  return {
    checks,
    report: {
      data: 'the pool\'s scored rollouts (rollouts_pool joined with scores.jsonl), N candidates per scenario',
      definitions: {
        selection: 'best-of-N by the new reward per scenario, with and without the penalty (ties: lowest candidate index)',
        overclar_rate: 'selected rollouts with ≥ 1 clarifying question / scenarios with needs_clarification = false',
        overclar_relative_drop: '(rate without − rate with) / rate without',
        overclar_absolute_drop_pp: '100·(rate without − rate with)',
        avg_turns_change: 'average turns with − without',
        success_change_pp: '100·(success with − success without)',
        intervals: `${stats.bootstrap_resamples} scenario-level bootstrap resamples within task (both selections on the same scenarios), level ${stats.level}`,
        negative_control: `${stats.permutations} paired permutations: in each, every scenario's with- and without-penalty selections are swapped with probability ½`,
        blind_spot: 'the rate is measured on the items labelled needs_clarification = false: this gate does not test the labels themselves',
      },
      thresholds: {
        overclar_relative_drop: threshold('overclar.ablation.min_relative_drop', cfg.ablation.min_relative_drop),
        overclar_absolute_drop_pp: threshold('overclar.ablation.min_absolute_drop_pp', cfg.ablation.min_absolute_drop_pp),
        avg_turns_change: threshold('overclar.ablation.max_turns_increase', cfg.ablation.max_turns_increase),
        success_change_pp: threshold('overclar.ablation.max_success_drop_pp', cfg.ablation.max_success_drop_pp),
        negative_controls: threshold('statistics.permutations', stats.permutations),
      },
      penalty: reward.penalty,
      beta: reward.beta,
      candidates: items.length,
      candidate_overclar_rate: eligible.length === 0 ? null : eligible.filter((it) => it.clarifications > 0).length / eligible.length,
      with_penalty: a,
      without_penalty: b,
      overclar_relative_drop: real.relative_drop,
      overclar_absolute_drop_pp: real.absolute_drop_pp,
      avg_turns_change: real.turns_change,
      success_change_pp: real.success_change_pp,
      intervals: { unit: `scenario (${C}), resampled within task`, ...iv },
      negative_control: nullSummary(nul),
      by_task: split((it) => it.task),
      by_difficulty: split((it) => it.difficulty ?? 'none'),
    },
  };
}
