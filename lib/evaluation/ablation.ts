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
// rate ≥ min_relative_drop on the lower bound of its bootstrap interval, and ≥
// min_absolute_drop_pp percentage points (point estimate); turns up by ≤ max_turns_increase
// (point estimate, interval reported); success down by ≤ max_success_drop_pp on the lower bound
// (non-inferiority). Intervals resample the SOURCE QUESTION (task/source_id; the pool renders one
// question as several scenarios), within task. Negative control: needs_clarification is permuted
// between source questions within task (whole questions' label vectors change places), the
// penalty is re-applied by the permuted labels, and the drop is measured as before (on the real
// labels); the real drop must exceed the 95th percentile of the drops so obtained — the penalty
// must reduce over-clarification because it lands on the scenarios that need no question, not
// merely because it discourages questions anywhere. What this gate cannot see: it measures
// over-clarification on the items LABELLED as not needing clarification, so wrong labels in the
// data are taken as the truth by the statistic and its null alike.
// When no selected rollout over-clarifies even without the penalty, the relative drop and its
// null are n/a (nothing to reduce) and the absolute floor fails: the ablation has shown nothing.
import { notApplicable, type Check } from 'rc1-build';
import {
  clusterBootstrap,
  clusterRowMap,
  clustersOf,
  estimateCheck,
  intervalCheck,
  nullCheck,
  nullSummary,
  permutationNull,
} from '../stats/index.ts';
import { relativeChange } from './calibration.ts';
import type { OverclarConfig, StatisticsConfig } from './config.ts';
import { byScenario, sourceKey, type EvalItem } from './items.ts';
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
      if (s > top) {
        best = it;
        top = s;
      }
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

export interface AblationResult {
  checks: Check[];
  report: Record<string, unknown>;
}

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
  let elig = 0;
  let ow = 0;
  let owo = 0;
  let tw = 0;
  let two = 0;
  let sw = 0;
  let swo = 0;
  for (let t = 0; t < idx.length; t++) {
    const i = idx[t]!;
    elig += w[i]!.eligible;
    ow += w[i]!.over;
    owo += wo[i]!.over;
    tw += w[i]!.turns;
    two += wo[i]!.turns;
    sw += w[i]!.success;
    swo += wo[i]!.success;
  }
  const n = idx.length;
  const rw = elig === 0 ? NaN : ow / elig;
  const rwo = elig === 0 ? NaN : owo / elig;
  return {
    relative_drop: -relativeChange(rw, rwo),
    absolute_drop_pp: 100 * (rwo - rw),
    turns_change: (tw - two) / n,
    success_change_pp: (100 * (sw - swo)) / n,
  };
}

export function overclarAblation(
  items: readonly EvalItem[],
  reward: Penalised,
  cfg: OverclarConfig,
  stats: StatisticsConfig,
): AblationResult {
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

  // Source-question-level bootstrap within task: a drawn question brings all its scenarios.
  const sources = clustersOf(groups.map((g) => sourceKey(g[0]!)));
  const sourceTask = sources.members.map((m) => task[m[0]!]!);
  const Q = sources.members.length;
  const boot = clusterBootstrap(
    sources,
    { resamples: stats.bootstrap_resamples, seed: stats.seed, level: stats.level, strata: sourceTask },
    (idx) => effects(pw, pwo, idx),
  );
  // Negative control: needs_clarification permuted between source questions within task and the
  // penalty re-applied by it. A scenario labelled false gets the penalised selection, one labelled
  // true the unpenalised one; the identity permutation gives the real selection back.
  const C = groups.length;
  const penalised = perScenario(
    groups,
    bestOfN(groups, (it) => newReward({ ...it, needs_clarification: false }, reward)),
  );
  const needs = Float64Array.from(groups, (g) => (g[0]!.needs_clarification ? 1 : 0));
  const rowMap = new Int32Array(C);
  const fw = new Array<(typeof pw)[number]>(C);
  const nul0 = permutationNull(
    Float64Array.from({ length: Q }, (_, q) => q),
    {
      permutations: stats.permutations,
      seed: stats.seed,
      groups: sourceTask,
      permuted:
        'needs_clarification between source questions within task (the penalty re-applied by the permuted labels)',
    },
    (qperm) => {
      clusterRowMap(sources.members, qperm, rowMap);
      for (let c = 0; c < C; c++) fw[c] = needs[rowMap[c]!] === 1 ? pwo[c]! : penalised[c]!;
      return effects(fw, pwo, all).relative_drop;
    },
  );
  // No permutation can move the labels when they are constant within every task.
  const byTask = new Map<string, Set<number>>();
  task.forEach((t, c) => {
    if (!byTask.has(t)) byTask.set(t, new Set());
    byTask.get(t)!.add(needs[c]!);
  });
  const nul = { ...nul0, degenerate: [...byTask.values()].every((v) => v.size < 2) };
  const iv = boot.intervals;
  const nothing = b.overclarified === 0;
  const more = `the pool has ${C} scenarios from ${Q} source questions, ${b.overclarified} of whose selections over-clarify without the penalty: a larger pool (scale.n)`;
  const unit = { clusters: Q, unit: 'source question' };
  const NOTHING = 'no selected rollout over-clarifies even without the penalty: there is nothing to reduce';
  const relCheck = intervalCheck(
    'overclar_relative_drop',
    { estimate: real.relative_drop, interval: iv.relative_drop, ...unit },
    '>=',
    cfg.ablation.min_relative_drop,
    'the penalty does not steer selection away from needless clarifying questions: raise overclar.alpha or check needs_clarification labels',
    more,
  );
  const nullC = nullCheck(
    'overclar_relative_drop',
    nul,
    'the drop is within what the penalty gives when applied by needs_clarification labels shuffled between source questions: it does not specifically spare the scenarios that need a question',
  );
  const checks = [
    nothing ? notApplicable(relCheck, NOTHING) : relCheck,
    nothing ? notApplicable(nullC, NOTHING) : nullC,
    estimateCheck(
      'overclar_absolute_drop_pp',
      real.absolute_drop_pp,
      '>=',
      cfg.ablation.min_absolute_drop_pp,
      nothing
        ? `${NOTHING}: the candidates need unnecessary clarifications for the ablation to show anything`
        : 'the over-clarification rate hardly moves in absolute terms: a relative drop of a rate near zero is not a finding',
      iv.absolute_drop_pp,
      'source question',
    ),
    estimateCheck(
      'avg_turns_change',
      real.turns_change,
      '<=',
      cfg.ablation.max_turns_increase,
      'the penalty made the selected dialogues longer',
      iv.turns_change,
      'source question',
    ),
    intervalCheck(
      'success_change_pp',
      { estimate: real.success_change_pp, interval: iv.success_change_pp, ...unit },
      '>=',
      -cfg.ablation.max_success_drop_pp,
      'the penalty costs success: it steers selection away from clarifications that were needed, or α is too high',
      more,
    ),
  ];
  const split = (
    key: (it: EvalItem) => string,
  ): Record<string, { with_penalty: Selection; without_penalty: Selection }> => {
    const keys = [...new Set(withP.map(key))].sort();
    return Object.fromEntries(
      keys.map((k) => [
        k,
        {
          with_penalty: summarise(withP.filter((it) => key(it) === k)),
          without_penalty: summarise(withoutP.filter((it) => key(it) === k)),
        },
      ]),
    );
  };
  const eligible = items.filter((it) => !it.needs_clarification);
  return {
    checks,
    report: {
      data: "the pool's scored rollouts (rollouts_pool joined with scores.jsonl), N candidates per scenario",
      definitions: {
        selection:
          'best-of-N by the new reward per scenario, with and without the penalty (ties: lowest candidate index)',
        overclar_rate: 'selected rollouts with ≥ 1 clarifying question / scenarios with needs_clarification = false',
        overclar_relative_drop: '(rate without − rate with) / rate without',
        overclar_absolute_drop_pp: '100·(rate without − rate with)',
        avg_turns_change: 'average turns with − without',
        success_change_pp: '100·(success with − success without)',
        intervals: `${stats.bootstrap_resamples} source-question-level bootstrap resamples within task (a drawn question brings all its scenarios; both selections on the same scenarios), level ${stats.level}`,
        negative_control:
          `${stats.permutations} permutations of needs_clarification between source questions within task (a question's scenarios take another question's labels, scenario j to scenario j); ` +
          "the penalty re-applied by the permuted labels, the drop measured on the real labels; the real drop must exceed the null's 95th percentile",
        blind_spot:
          'the rate is measured on the items labelled needs_clarification = false: wrong labels in the data are taken as the truth by the statistic and its null alike',
      },
      thresholds: {
        overclar_relative_drop: threshold('overclar.ablation.min_relative_drop', cfg.ablation.min_relative_drop),
        overclar_absolute_drop_pp: threshold(
          'overclar.ablation.min_absolute_drop_pp',
          cfg.ablation.min_absolute_drop_pp,
        ),
        avg_turns_change: threshold('overclar.ablation.max_turns_increase', cfg.ablation.max_turns_increase),
        success_change_pp: threshold('overclar.ablation.max_success_drop_pp', cfg.ablation.max_success_drop_pp),
        negative_controls: threshold('statistics.permutations', stats.permutations),
      },
      penalty: reward.penalty,
      beta: reward.beta,
      candidates: items.length,
      candidate_overclar_rate:
        eligible.length === 0 ? null : eligible.filter((it) => it.clarifications > 0).length / eligible.length,
      with_penalty: a,
      without_penalty: b,
      overclar_relative_drop: real.relative_drop,
      overclar_absolute_drop_pp: real.absolute_drop_pp,
      avg_turns_change: real.turns_change,
      success_change_pp: real.success_change_pp,
      intervals: { unit: `source question (${Q}; ${C} scenarios), resampled within task`, ...iv },
      negative_control: nullSummary(nul),
      by_task: split((it) => it.task),
      by_difficulty: split((it) => it.difficulty ?? 'none'),
    },
  };
}
