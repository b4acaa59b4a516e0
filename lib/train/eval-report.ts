// The ppo_eval gate's comparison: every seed's PPO policy, their mean, and the scripted baselines
// against the SFT policy (PPO's starting point and KL reference), all played the same way on the
// same held-out scenarios (eval-sets.ts) with the same per-scenario seeds. Numbers: eval-compare.ts.
// Checks (thresholds in the `ppo_eval:` config section):
//   needs_clarification_success_gain_pp  seeds' mean, PPO − SFT, pp                        >= +5
//     .vs_null_p95                       beats the negative control: the 95th percentile of the
//                                        gain with PPO and SFT swapped at random per source
//                                        question (one swap for an item and its twin)
//   overclar_rate_relative_change        (PPO − SFT) / SFT                                  <= −0.20
//                                        (n/a when SFT never asks where nothing is missing)
//   avg_turns_change                     PPO − SFT                                          <= 0
//   hard_qa_success_gain_pp              hard-band hotpotqa + strategyqa (the band of the
//                                        question's reasoning, a twin taking its original's), pp
//                                        >= +5, and .vs_null_p95 (n/a with too few items)
//   kl_rollout_max_over_target           the largest KL(π ‖ π_SFT) of a policy that generated a
//                                        training step's batch (metrics kl_rollout: measured on
//                                        the batch's states before the step's projection and
//                                        update), over every step of every seed, / target_kl
//                                        <= kl_bound. The maximum, not a share of steps: one
//                                        step run by a policy beyond the bound breaks "KL held
//                                        within kl_bound × target". (The post-update KL, metrics
//                                        kl, is bounded by the early stop by construction and
//                                        is reported, not gated.)
//   kl_eval_over_target                  mean KL(π ‖ π_SFT) over the states a seed's policy
//                                        visits on the eval set, largest seed, / target_kl <= kl_bound
//   ppo_minus_best_baseline_success_pp   seeds' mean success − the best scripted baseline's  >= 0
//   needs_clarification_items, seeds     enough items and seeds to measure anything
// Every estimate carries a 95 % interval from a cluster bootstrap over source questions (a
// shadow item and its twin are drawn together) and, for the seeds' mean, the t-interval across
// seeds; the report's table lists SFT, each seed, the mean, each baseline and the negative control.
import { z } from 'zod';
import { check, notApplicable, type Check } from 'rc1-build';
import {
  clusterBootstrap,
  clustersOf,
  estimateCheck,
  nullCheck,
  nullSummary,
  permutationNull,
  type Interval,
} from '../stats/index.ts';
import {
  acrossSeeds,
  gains,
  GAIN_KEYS,
  levels,
  LEVEL_KEYS,
  meanRows,
  swappedRows,
  type Gains,
  type Levels,
  type PolicyRows,
  type ScenarioInfo,
} from './eval-compare.ts';

export const ppoEvalSchema = z
  .object({
    /** Seeds the environment's events, sampled actions, the twins' renderings, the bootstrap and the permutations. */
    seed: z.number().int().nonnegative(),
    /** greedy: the argmax action; sampled: actions drawn from the policy, `samples` episodes per scenario. */
    actions: z.enum(['greedy', 'sampled']),
    samples: z.number().int().positive(),
    /** Add the under-specified twins of the shadow items (the needs-clarification items). */
    twins: z.boolean(),
    /** A gated group (needs-clarification items, hard hotpotqa + strategyqa) must hold at least this many items. */
    min_group_n: z.number().int().positive(),
    /** Cluster-bootstrap resamples and negative-control permutations. */
    bootstrap: z.number().int().positive(),
    permutations: z.number().int().positive(),
    min_seeds: z.number().int().positive(),
    thresholds: z
      .object({
        min_needs_clarification_success_gain_pp: z.number(),
        max_overclar_relative_change: z.number(),
        max_avg_turns_increase: z.number(),
        min_hard_qa_success_gain_pp: z.number(),
        /** Realised KL to the SFT policy, as a multiple of ppo.target_kl. */
        max_kl_over_target: z.number().positive(),
        min_ppo_minus_best_baseline_pp: z.number(),
      })
      .strict(),
  })
  .strict();
export type PpoEvalConfig = z.infer<typeof ppoEvalSchema>;

export const PPO_EVAL_DEFINITIONS = {
  success:
    "the task's success metric (lib/rollouts success.ts) on the episode's final answer; an episode that runs out of turns fails",
  overclar_rate: 'share of the items that need no clarification on which the policy asked at least once',
  avg_turns: 'mean rollout turns per episode: clarifying questions + the answer turn (tool calls are not turns)',
  hard_qa:
    'hotpotqa + strategyqa items in the hard band of the difficulty rules; an under-specified twin takes the band of its shadow original, so twin-ness does not make an item hard',
  reference:
    "the SFT policy (the sft target: behaviour cloning of the pool's reference trajectories), PPO's starting point and KL reference",
  ppo_mean: "per scenario, the mean over the seeds' policies of each per-scenario rate; gated",
  intervals:
    '95 % percentile intervals of a cluster bootstrap over source questions; across seeds, mean ± t(0.975, n−1)·sd/√n',
  negative_control:
    "the gains with the PPO (seeds' mean) and SFT rows swapped at random per source question (one draw for a shadow item and its twin): what a policy no different from SFT would show",
  baselines: 'scripted policies over the same observations (lib/train/baselines.ts), played the same way',
} as const;

export interface SeedRun {
  seed: number;
  rows: PolicyRows;
  /** Largest kl_rollout of the seed's training steps (the gated KL). */
  klRolloutMax: number;
  /** Largest post-update kl of the seed's training steps (reported only). */
  klPostUpdateMax: number;
  klEval: number;
}

export interface PpoEvalInput {
  scenarios: readonly ScenarioInfo[];
  sft: PolicyRows;
  seeds: readonly SeedRun[];
  baselines: readonly { name: string; rows: PolicyRows }[];
  cfg: PpoEvalConfig;
  targetKl: number;
}

const r6 = (x: number): number | null => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);
const iv = (i: Interval): [number | null, number | null] => [r6(i.lo), r6(i.hi)];

export interface TableRow {
  policy: string;
  levels: Record<string, number | null>;
  intervals: Record<string, [number | null, number | null]>;
}

function table(
  rows: TableRow[],
  control: { nc: ReturnType<typeof nullSummary>; hard: ReturnType<typeof nullSummary> | null },
): string {
  const f = (v: number | null, d = 3): string => (v === null ? 'n/a' : v.toFixed(d));
  const cell = (r: TableRow, k: string, d = 3): string =>
    `${f(r.levels[k] ?? null, d)} [${f(r.intervals[k]?.[0] ?? null, d)}, ${f(r.intervals[k]?.[1] ?? null, d)}]`;
  const head =
    '| policy | success | needs-clar. success | over-clar. rate | avg turns | hard QA success | reward |\n|---|---|---|---|---|---|---|';
  const body = rows.map(
    (r) =>
      `| ${r.policy} | ${cell(r, 'success')} | ${cell(r, 'nc_success')} | ${cell(r, 'overclar_rate')} | ${cell(r, 'avg_turns', 2)} | ${cell(r, 'hard_qa_success')} | ${cell(r, 'reward')} |`,
  );
  const nc = `| negative control (PPO/SFT swapped per source question) | needs-clar. gain null p50 ${f(control.nc.quantiles.p50, 2)} pp, p95 ${f(control.nc.quantiles.p95, 2)} pp (real ${f(control.nc.real, 2)}, p = ${f(control.nc.p_value, 3)}) | | | | ${control.hard ? `hard gain null p95 ${f(control.hard.quantiles.p95, 2)} pp (real ${f(control.hard.real, 2)}, p = ${f(control.hard.p_value, 3)})` : 'n/a'} | |`;
  return [head, ...body, nc].join('\n');
}

/** The gate's checks, table and numbers (see the head of this file). */
export function comparePolicies(x: PpoEvalInput) {
  const { scenarios: s, cfg } = x;
  const th = cfg.thresholds;
  const all = Int32Array.from(s.keys());
  const ppo = meanRows(x.seeds.map((r) => r.rows));
  const policies: { name: string; rows: PolicyRows }[] = [
    { name: 'SFT (reference)', rows: x.sft },
    ...x.seeds.map((r) => ({ name: `PPO seed ${r.seed}`, rows: r.rows })),
    { name: `PPO mean of ${x.seeds.length} seeds`, rows: ppo },
    ...x.baselines.map((b) => ({ name: `baseline: ${b.name}`, rows: b.rows })),
  ];
  const clusters = clustersOf(s.map((i) => i.cluster));
  const boot = clusterBootstrap(clusters, { resamples: cfg.bootstrap, seed: cfg.seed }, (items) => {
    const out: Record<string, number> = {};
    policies.forEach((p, k) => {
      for (const [key, v] of Object.entries(levels(s, p.rows, items))) out[`${k}.${key}`] = v;
    });
    for (const [key, v] of Object.entries(gains(s, ppo, x.sft, items))) out[`gain.${key}`] = v;
    return out;
  });
  const rows: TableRow[] = policies.map((p, k) => {
    const l = levels(s, p.rows, all);
    return {
      policy: p.name,
      levels: Object.fromEntries(LEVEL_KEYS.map((key) => [key, r6(l[key])])),
      intervals: Object.fromEntries(LEVEL_KEYS.map((key) => [key, iv(boot.intervals[`${k}.${key}`]!)])),
    };
  });
  const point: Gains = gains(s, ppo, x.sft, all);
  const perSeed = x.seeds.map((r) => ({ seed: r.seed, gains: gains(s, r.rows, x.sft, all) }));
  const seedsInterval = Object.fromEntries(GAIN_KEYS.map((k) => [k, acrossSeeds(perSeed.map((p) => p.gains[k]))]));
  const nClusters = clusters.members.length;
  const pairs = Float64Array.from({ length: 2 * nClusters }, (_, i) => (i % 2 === 0 ? 1 : 0));
  const groups = Int32Array.from({ length: 2 * nClusters }, (_, i) => i >> 1);
  const control = (key: 'nc_gain_pp' | 'hard_gain_pp', what: string) =>
    permutationNull(pairs, { permutations: cfg.permutations, seed: cfg.seed, groups, permuted: what }, (labels) => {
      const [a, b] = swappedRows(ppo, x.sft, labels, clusters.of);
      return gains(s, a, b, all)[key];
    });
  const ncNull = control(
    'nc_gain_pp',
    "PPO (seeds' mean) and SFT within each source question (all its scenarios at once)",
  );
  const ncItems = s.filter((i) => i.needsClarification).length;
  const hardItems = s.filter((i) => i.hardQa).length;
  const hardNull =
    hardItems >= cfg.min_group_n
      ? control(
          'hard_gain_pp',
          "PPO (seeds' mean) and SFT within each source question (all its scenarios at once), hard-band QA gain",
        )
      : null;
  const gi = (k: string): Interval => boot.intervals[`gain.${k}`]!;
  const base = x.baselines.map((b) => ({ name: b.name, success: levels(s, b.rows, all).success }));
  const best = base.reduce<{ name: string; success: number } | null>(
    (m, b) => (m === null || b.success > m.success ? b : m),
    null,
  );
  const ppoSuccess = levels(s, ppo, all).success;
  const klTrain = Math.max(...x.seeds.map((r) => r.klRolloutMax)) / x.targetKl;
  const klEval = Math.max(...x.seeds.map((r) => r.klEval)) / x.targetKl;
  const num = (v: number): number | null => (Number.isFinite(v) ? r6(v) : null);
  const hardCheck = estimateCheck(
    'hard_qa_success_gain_pp',
    point.hard_gain_pp,
    '>=',
    th.min_hard_qa_success_gain_pp,
    'hard-band hotpotqa / strategyqa items did not improve over SFT',
    gi('hard_gain_pp'),
  );
  const overclar = estimateCheck(
    'overclar_rate_relative_change',
    point.overclar_rel,
    '<=',
    th.max_overclar_relative_change,
    'PPO still asks about as often as SFT on items that need no clarification: the over-clarification penalty did not move it',
    gi('overclar_rel'),
  );
  const checks: Check[] = [
    estimateCheck(
      'needs_clarification_success_gain_pp',
      point.nc_gain_pp,
      '>=',
      th.min_needs_clarification_success_gain_pp,
      'PPO did not improve success where a detail is missing over the SFT policy it started from',
      gi('nc_gain_pp'),
    ),
    nullCheck('needs_clarification_success_gain_pp', ncNull),
    Number.isFinite(point.overclar_rel)
      ? overclar
      : notApplicable(
          overclar,
          'the SFT policy never asks on items that need no clarification: there is nothing to reduce',
        ),
    estimateCheck(
      'avg_turns_change',
      point.turns_change,
      '<=',
      th.max_avg_turns_increase,
      'PPO takes more turns than the SFT policy',
      gi('turns_change'),
    ),
    hardNull
      ? hardCheck
      : notApplicable(
          hardCheck,
          `only ${hardItems} hard-band hotpotqa + strategyqa items in the eval set (at least ${cfg.min_group_n} needed)`,
        ),
    ...(hardNull ? [nullCheck('hard_qa_success_gain_pp', hardNull)] : []),
    check(
      'kl_rollout_max_over_target',
      num(klTrain),
      '<=',
      th.max_kl_over_target,
      'a policy that generated a training batch was further from the SFT policy than the KL bound (kl_rollout in metrics.jsonl): the policy the agent ran left the bound, whatever the post-update KL shows',
    ),
    check(
      'kl_eval_over_target',
      num(klEval),
      '<=',
      th.max_kl_over_target,
      "on the eval set's states a seed's policy is further from SFT than the KL bound",
    ),
    check(
      'ppo_minus_best_baseline_success_pp',
      best ? num(100 * (ppoSuccess - best.success)) : null,
      '>=',
      th.min_ppo_minus_best_baseline_pp,
      `PPO does not beat the best scripted baseline (${best?.name ?? 'none'}, success ${best?.success.toFixed(3) ?? 'n/a'}): the trained policy is no better than a hand-written rule`,
    ),
    check(
      'needs_clarification_items',
      ncItems,
      '>=',
      cfg.min_group_n,
      'too few needs-clarification items to measure a gain: set ppo_eval.twins: true',
    ),
    check('seeds', x.seeds.length, '>=', cfg.min_seeds, 'list more seeds in ppo.seeds'),
  ];
  const nc = nullSummary(ncNull);
  const hard = hardNull ? nullSummary(hardNull) : null;
  return {
    checks,
    table: rows,
    table_markdown: table(rows, { nc, hard }),
    gains: {
      ppo_mean: Object.fromEntries(
        GAIN_KEYS.map((k) => [
          k,
          {
            estimate: num(point[k]),
            bootstrap_95: iv(gi(k)),
            across_seeds_95: [num(seedsInterval[k]!.lo), num(seedsInterval[k]!.hi)],
          },
        ]),
      ),
      per_seed: perSeed.map((p) => ({
        seed: p.seed,
        ...Object.fromEntries(GAIN_KEYS.map((k) => [k, num(p.gains[k])])),
      })),
      baselines_vs_sft: x.baselines.map((b) => ({
        name: b.name,
        ...Object.fromEntries(GAIN_KEYS.map((k) => [k, num(gains(s, b.rows, x.sft, all)[k])])),
      })),
    },
    negative_control: { needs_clarification_gain: nc, hard_qa_gain: hard },
    best_baseline: best,
    kl: {
      target_kl: x.targetKl,
      per_seed: x.seeds.map((r) => ({
        seed: r.seed,
        train_rollout_max: num(r.klRolloutMax),
        train_post_update_max: num(r.klPostUpdateMax),
        eval_mean: num(r.klEval),
      })),
    },
    items: { scenarios: s.length, clusters: clusters.members.length, needs_clarification: ncItems, hard_qa: hardItems },
  };
}
export type PpoEvalComparison = ReturnType<typeof comparePolicies>;
export type { Levels };

/** One line for the build's summary. */
export function comparisonSummary(c: PpoEvalComparison): string {
  const g = c.gains.ppo_mean;
  const f = (x: number | null | undefined, unit = ''): string =>
    typeof x === 'number' ? `${x >= 0 ? '+' : ''}${Number(x.toFixed(3))}${unit}` : 'n/a';
  return `PPO (mean of ${c.gains.per_seed.length} seeds) vs SFT: needs-clarification success ${f(g.nc_gain_pp!.estimate, ' pp')}, over-clarification ${f(g.overclar_rel!.estimate === null ? null : g.overclar_rel!.estimate * 100, ' %')}, turns ${f(g.turns_change!.estimate)}, hard QA ${f(g.hard_gain_pp!.estimate, ' pp')}; best baseline ${c.best_baseline?.name ?? 'n/a'}`;
}
