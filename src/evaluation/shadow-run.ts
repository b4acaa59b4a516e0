// The shadow run's computation (RC1.md row shadow_run; seeds/000 Phase 2 A): the old score vs
// the new reward (reward.ts) on the shadow set's scored rollouts. The gated new reward is the
// one RC1.md names for this row — calibrated weights and the over-clarification penalty — BEFORE
// the difficulty factor: the factor (RC1.md row train, seeds/002 §4.2) moves every easy scenario
// down and every hard one up by β on purpose, so with it the top 10 % would measure the shadow
// set's bucket mix, not the reward's judgement (on fixture data it took the top-10 % overlap from
// .83 to .28). Within one bucket the factor is a constant, so the split by difficulty is the same
// with or without it; the overall figures with the factor are reported beside, not gated.
// Unit: the SCENARIO (245 in RC1). A scenario's old score and new reward are the means over its
// N candidate rollouts, each rollout weighted by its item weight (unstable .5), and its success
// is the share of its candidates that succeeded. Why not single rollouts: with N candidates per
// scenario many rollouts are error-free and score 1 on every dimension up to the judge's sampling
// noise, so the top 10 % of rollouts is picked by that noise; the report shows it with the
// judge's test-retest overlap (the same scoring from judge sample 0 vs sample 1), which at the
// rollout level is far below any threshold, while the scenario means are reproducible. The
// rollout-level figures are reported beside the gated ones.
// Figures: Spearman ρ and Kendall τ-b of old vs new, top-p overlap (src/stats topKOverlap: ties
// at the cut-off shared out), Spearman ρ, Kendall τ-b and Pearson r of each with success, and the
// new reward's relative gain (ρ_new − ρ_old)/|ρ_old| in Spearman ρ with success.
import { check, type Check } from '../api/index.ts';
import type { DimScores } from '../scoring/types.ts';
import { pearson, rankCorrelations, topKOverlap } from '../stats/index.ts';
import { relativeChange } from './calibration.ts';
import type { ShadowRunConfig } from './config.ts';
import { byScenario, type EvalItem } from './items.ts';
import { newReward, oldScore, type RewardSettings, type Weights } from './reward.ts';

export interface Comparison {
  n: number;
  spearman_old_new: number;
  kendall_old_new: number;
  /** Top-p overlap by fraction, keyed "top10" for .10. */
  top_overlap: Record<string, number>;
  success: {
    old: { spearman: number; kendall: number; pearson: number };
    new: { spearman: number; kendall: number; pearson: number };
    /** (ρ_new − ρ_old)/|ρ_old|, Spearman with success. */
    rank_corr_gain: number;
  };
}

export const topKey = (p: number): string => `top${Math.round(p * 100)}`;

const nan = (n: number, min: number, f: () => number): number => (n < min ? NaN : f());

/** The figures of one comparison of two scorings of the same units (see the module comment). */
export function compare(oldS: Float64Array, newS: Float64Array, success: Float64Array, fractions: readonly number[]): Comparison {
  const n = oldS.length;
  const rc = (a: Float64Array, b: Float64Array) => (n < 2 ? { spearman: NaN, kendall: NaN } : rankCorrelations(a, b));
  const on = rc(oldS, newS);
  const os = rc(oldS, success);
  const ns = rc(newS, success);
  return {
    n,
    spearman_old_new: on.spearman,
    kendall_old_new: on.kendall,
    top_overlap: Object.fromEntries(fractions.map((p) => [topKey(p), nan(n, 1, () => topKOverlap(oldS, newS, p))])),
    success: {
      old: { ...os, pearson: nan(n, 2, () => pearson(oldS, success)) },
      new: { ...ns, pearson: nan(n, 2, () => pearson(newS, success)) },
      rank_corr_gain: relativeChange(ns.spearman, os.spearman),
    },
  };
}

/**
 * A scenario: the weighted means of its candidates' old score, new reward (before the difficulty
 * factor) and new reward with the factor, its success share, and the first two means again from
 * judge samples 0 and 1.
 */
interface ScenarioRow {
  first: EvalItem; old: number; new: number; withFactor: number; success: number;
  retest: { old: [number, number]; new: [number, number] } | null;
}

/** Item-weighted mean of f over a scenario's candidates. */
function wmean(g: readonly EvalItem[], f: (it: EvalItem) => number): number {
  let u = 0; let s = 0;
  for (const it of g) { u += it.weight; s += it.weight * f(it); }
  return s / u;
}

const f64 = <T>(xs: readonly T[], f: (x: T) => number): Float64Array => Float64Array.from(xs, f);

export interface ShadowRunResult { checks: Check[]; report: Record<string, unknown> }

export function shadowRun(items: readonly EvalItem[], old: Weights, reward: RewardSettings, cfg: ShadowRunConfig): ShadowRunResult {
  const p = cfg.top_overlap.fraction;
  const tk = topKey(p);
  const fractions = [p, ...cfg.top_overlap_reported.filter((q) => q !== p)];
  const oldOf = (it: EvalItem, m: DimScores = it.scores): number => oldScore(it, old, m);
  // Gated: the new reward before the difficulty factor (β = 0), as RC1.md defines the shadow run's.
  const newOf = (it: EvalItem, m: DimScores = it.scores): number => newReward(it, { ...reward, beta: 0 }, m);
  const hasRetest = items.every((it) => it.samples.length >= 2);
  const rows: ScenarioRow[] = byScenario(items).filter((g) => g.some((it) => it.weight > 0)).map((g) => ({
    first: g[0]!,
    old: wmean(g, (it) => oldOf(it)),
    new: wmean(g, (it) => newOf(it)),
    withFactor: wmean(g, (it) => newReward(it, reward)),
    success: g.filter((it) => it.success).length / g.length,
    retest: hasRetest ? {
      old: [wmean(g, (it) => oldOf(it, it.samples[0]!)), wmean(g, (it) => oldOf(it, it.samples[1]!))],
      new: [wmean(g, (it) => newOf(it, it.samples[0]!)), wmean(g, (it) => newOf(it, it.samples[1]!))],
    } : null,
  }));
  /** The comparison of a set of scenarios, with the judge's test-retest top-p overlap of each scoring. */
  const cmp = (xs: readonly ScenarioRow[]) => ({
    ...compare(f64(xs, (s) => s.old), f64(xs, (s) => s.new), f64(xs, (s) => s.success), fractions),
    judge_test_retest: hasRetest && xs.length > 0 ? {
      old: topKOverlap(f64(xs, (s) => s.retest!.old[0]), f64(xs, (s) => s.retest!.old[1]), p),
      new: topKOverlap(f64(xs, (s) => s.retest!.new[0]), f64(xs, (s) => s.retest!.new[1]), p),
    } : null,
  });
  const overall = cmp(rows);
  const withFactor = compare(f64(rows, (s) => s.old), f64(rows, (s) => s.withFactor), f64(rows, (s) => s.success), fractions);
  const live = items.filter((it) => it.weight > 0);
  const rolloutLevel = {
    ...compare(f64(live, (it) => oldOf(it)), f64(live, (it) => newOf(it)), f64(live, (it) => (it.success ? 1 : 0)), fractions),
    judge_test_retest: hasRetest && live.length > 0 ? {
      old: topKOverlap(f64(live, (it) => oldOf(it, it.samples[0]!)), f64(live, (it) => oldOf(it, it.samples[1]!)), p),
      new: topKOverlap(f64(live, (it) => newOf(it, it.samples[0]!)), f64(live, (it) => newOf(it, it.samples[1]!)), p),
    } : null,
    note: 'not gated: single rollouts, success 0/1 (Pearson = point-biserial)',
  };
  const splitBy = (key: (s: ScenarioRow) => string) => {
    const groups = new Map<string, ScenarioRow[]>();
    for (const s of rows) groups.set(key(s), [...(groups.get(key(s)) ?? []), s]);
    return Object.fromEntries([...groups.keys()].sort().map((k) => [k, cmp(groups.get(k)!)]));
  };
  const splits = { task: splitBy((s) => s.first.task), difficulty: splitBy((s) => s.first.difficulty ?? 'none') };

  const gated = (prefix: string, c: Comparison): Check[] => [
    check(`${prefix}spearman_old_new`, c.spearman_old_new, '>=', cfg.min_spearman_old_new,
      'the new reward reorders scenarios far from the old score: check the weights file and the score-to-rollout join'),
    check(`${prefix}${tk}_overlap`, c.top_overlap[tk], '>=', cfg.top_overlap.min, 'the new reward picks different best scenarios than the old score'),
    check(`${prefix}success_rank_corr_gain`, c.success.rank_corr_gain, '>=', cfg.min_success_rank_corr_gain,
      'the new reward does not rank by success better than the old score: recalibrate (weights) or review the penalty and β'),
  ];
  const checks = [
    check('scenarios', overall.n, '>', 0, 'no scored shadow rollouts: build rollouts_shadow and scores'),
    ...gated('', overall),
    ...(cfg.gate_splits ? Object.entries(splits).flatMap(([by, g]) => Object.entries(g).flatMap(([k, c]) => gated(`${by}.${k}.`, c))) : []),
  ];
  return {
    checks,
    report: {
      new_reward: 'r_new before the difficulty factor: Σ w_cal·median − penalty (RC1.md: calibrated weights and the over-clarification penalty)',
      unit: 'scenario: the item-weighted mean of its candidates\' old scores and new rewards; success = the share of its candidates that succeeded',
      judge_test_retest_definition: `${tk} overlap of each scoring computed from judge sample 0 vs from sample 1 (same unit): the agreement the judge's own sampling noise allows`,
      splits_gated: cfg.gate_splits,
      rollouts: items.length,
      unstable_rollouts: items.filter((it) => it.unstable).length,
      scenarios: overall.n,
      buckets: Object.fromEntries(['easy', 'medium', 'hard'].map((b) => [b, rows.filter((s) => s.first.difficulty === b).length])),
      overall,
      with_difficulty_factor: {
        ...withFactor, beta: reward.beta,
        note: 'not gated: the new reward times 1 + β(I[hard] − I[easy]), which re-ranks across buckets on purpose (within a bucket it changes nothing: see splits.difficulty)',
      },
      rollout_level: rolloutLevel,
      splits,
    },
  };
}
