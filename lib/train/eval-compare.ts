// The ppo_eval comparison's numbers: every policy's episodes reduced to one row per held-out
// scenario (means over its sampled episodes), and the gated quantities of a policy against the SFT
// policy computed from any multiset of scenarios — so the same function gives the point estimate,
// each cluster-bootstrap replicate (scenarios drawn by source question: a shadow item and its
// under-specified twin share one, so they are drawn together) and each permutation replicate of
// the negative control (PPO and SFT swapped at random per source question: one draw for all its
// scenarios).
//   nc_gain_pp        success on needs-clarification items, policy − SFT, percentage points
//   overclar_rel      (policy − SFT) / SFT of the share of no-clarification-needed items asked on
//   turns_change      mean rollout turns, policy − SFT
//   hard_gain_pp      success on hard-band hotpotqa + strategyqa items, pp
//   success_gain_pp   success on every item, pp
import type { EvalEpisode } from './eval-summary.ts';

export interface ScenarioInfo {
  id: string;
  cluster: string;
  needsClarification: boolean;
  hardQa: boolean;
}

/** Per-scenario means of one policy, in the order of the scenario list. */
export interface PolicyRows {
  success: Float64Array;
  asked: Float64Array;
  turns: Float64Array;
  reward: Float64Array;
}

export const GAIN_KEYS = ['nc_gain_pp', 'overclar_rel', 'turns_change', 'hard_gain_pp', 'success_gain_pp'] as const;
export type GainKey = (typeof GAIN_KEYS)[number];
export type Gains = Record<GainKey, number>;

export const LEVEL_KEYS = ['success', 'nc_success', 'overclar_rate', 'avg_turns', 'hard_qa_success', 'reward'] as const;
export type Levels = Record<(typeof LEVEL_KEYS)[number], number>;

export function policyRows(scenarios: readonly ScenarioInfo[], episodes: readonly EvalEpisode[]): PolicyRows {
  const at = new Map(scenarios.map((s, i) => [s.id, i]));
  const n = scenarios.length;
  const rows: PolicyRows = {
    success: new Float64Array(n),
    asked: new Float64Array(n),
    turns: new Float64Array(n),
    reward: new Float64Array(n),
  };
  const count = new Float64Array(n);
  for (const e of episodes) {
    const i = at.get(e.scenario_id);
    if (i === undefined)
      throw new Error(`internal error: episode of unknown scenario ${e.scenario_id}; please report this`);
    count[i] = count[i]! + 1;
    rows.success[i] = rows.success[i]! + (e.success ? 1 : 0);
    rows.asked[i] = rows.asked[i]! + (e.clarifications > 0 ? 1 : 0);
    rows.turns[i] = rows.turns[i]! + e.turns;
    rows.reward[i] = rows.reward[i]! + e.reward;
  }
  for (let i = 0; i < n; i++) {
    if (count[i] === 0)
      throw new Error(`internal error: no episode of scenario ${scenarios[i]!.id}; please report this`);
    for (const k of ['success', 'asked', 'turns', 'reward'] as const) rows[k][i] = rows[k][i]! / count[i]!;
  }
  return rows;
}

/** The mean of several policies' rows (the seeds' mean policy). */
export function meanRows(list: readonly PolicyRows[]): PolicyRows {
  const n = list[0]!.success.length;
  const out: PolicyRows = {
    success: new Float64Array(n),
    asked: new Float64Array(n),
    turns: new Float64Array(n),
    reward: new Float64Array(n),
  };
  for (const r of list)
    for (const k of ['success', 'asked', 'turns', 'reward'] as const)
      for (let i = 0; i < n; i++) out[k][i] = out[k][i]! + r[k][i]! / list.length;
  return out;
}

/** Levels of one policy over a multiset of scenario indices (NaN for an empty group). */
export function levels(s: readonly ScenarioInfo[], r: PolicyRows, items: ArrayLike<number>): Levels {
  const acc = { n: 0, succ: 0, ncN: 0, nc: 0, noN: 0, asked: 0, turns: 0, hardN: 0, hard: 0, reward: 0 };
  for (let j = 0; j < items.length; j++) {
    const i = items[j]!;
    const x = s[i]!;
    acc.n += 1;
    acc.succ += r.success[i]!;
    acc.turns += r.turns[i]!;
    acc.reward += r.reward[i]!;
    if (x.needsClarification) {
      acc.ncN += 1;
      acc.nc += r.success[i]!;
    } else {
      acc.noN += 1;
      acc.asked += r.asked[i]!;
    }
    if (x.hardQa) {
      acc.hardN += 1;
      acc.hard += r.success[i]!;
    }
  }
  const d = (a: number, b: number): number => (b === 0 ? NaN : a / b);
  return {
    success: d(acc.succ, acc.n),
    nc_success: d(acc.nc, acc.ncN),
    overclar_rate: d(acc.asked, acc.noN),
    avg_turns: d(acc.turns, acc.n),
    hard_qa_success: d(acc.hard, acc.hardN),
    reward: d(acc.reward, acc.n),
  };
}

/** The gated quantities of `a` against `b` over a multiset of scenario indices. */
export function gains(s: readonly ScenarioInfo[], a: PolicyRows, b: PolicyRows, items: ArrayLike<number>): Gains {
  const la = levels(s, a, items);
  const lb = levels(s, b, items);
  return {
    nc_gain_pp: 100 * (la.nc_success - lb.nc_success),
    overclar_rel: lb.overclar_rate === 0 ? NaN : (la.overclar_rate - lb.overclar_rate) / lb.overclar_rate,
    turns_change: la.avg_turns - lb.avg_turns,
    hard_gain_pp: 100 * (la.hard_qa_success - lb.hard_qa_success),
    success_gain_pp: 100 * (la.success - lb.success),
  };
}

/**
 * The negative control's arms: for a label array over 2 slots per cluster (source question; slot
 * 2c holds the label of `a`'s rows of cluster c, slot 2c + 1 `b`'s) and each scenario's cluster
 * index `clusterOf`, the rows each arm gets. With the real labels [1, 0, 1, 0, …] this is (a, b); a
 * permutation within slot pairs swaps a and b for every scenario of a cluster at once (a shadow
 * item and its twin share a source question, so they are not independent units).
 */
export function swappedRows(
  a: PolicyRows,
  b: PolicyRows,
  labels: ArrayLike<number>,
  clusterOf: ArrayLike<number>,
): [PolicyRows, PolicyRows] {
  const n = a.success.length;
  const x: PolicyRows = {
    success: new Float64Array(n),
    asked: new Float64Array(n),
    turns: new Float64Array(n),
    reward: new Float64Array(n),
  };
  const y: PolicyRows = {
    success: new Float64Array(n),
    asked: new Float64Array(n),
    turns: new Float64Array(n),
    reward: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    const keep = labels[2 * clusterOf[i]!] === 1;
    for (const k of ['success', 'asked', 'turns', 'reward'] as const) {
      x[k][i] = keep ? a[k][i]! : b[k][i]!;
      y[k][i] = keep ? b[k][i]! : a[k][i]!;
    }
  }
  return [x, y];
}

/** Mean and a t-interval (95 %) across seeds of per-seed estimates; the half-width is NaN with one seed. */
export function acrossSeeds(values: readonly number[]): {
  mean: number;
  lo: number;
  hi: number;
  sd: number;
  n: number;
} {
  const n = values.length;
  const mean = values.reduce((p, v) => p + v, 0) / n;
  const sd = n > 1 ? Math.sqrt(values.reduce((p, v) => p + (v - mean) ** 2, 0) / (n - 1)) : NaN;
  const T975 = [NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262];
  const t = T975[n - 1] ?? 1.96;
  const half = (t * sd) / Math.sqrt(n);
  return { mean, lo: mean - half, hi: mean + half, sd, n };
}
