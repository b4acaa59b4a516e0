// Resampling of the seed pool over its two axes: the reasoning bucket (easy / medium / hard, to the
// target shares: easy .25 / medium .45 / hard .30) and the need for clarification (kept at the
// pool's own rate, task by task), by downsampling only: no scenario is duplicated. Per task, the
// kept size starts at N = min over the clarification strata (needs_clarification true / false) of
// floor(N_max(stratum) / share of the stratum), N_max(stratum) = min over buckets of
// floor(available / bucket share). The task's quotas round toward the harder buckets (hard =
// ceil(N·s_hard), medium = ceil(N·(s_hard + s_medium)) − hard, easy = the rest: each within one
// scenario of its exact share, hard never below its target, easy never above), and each bucket's
// quota is split between the strata by the pool's clarification share ρ (round(N·ρ) in all, by
// largest remainder), so every bucket holds the same share of scenarios that need clarification
// and the bucket says nothing about it; N shrinks until every part fits its cell.
// Within a (task, stratum, bucket) the kept scenarios are the first `quota` of a seeded shuffle of
// that cell's scenarios in pool order; the balanced pool keeps the pool's order.
import { z } from 'zod';
import type { Rng } from 'rc1-build';
import { deriveSeed } from '../data/select-shadow.ts';
import { BUCKETS, type Bucket } from './bands.ts';

export const BALANCE_METHOD =
  "per task, downsampling only, over both axes: N = min over clarification strata (needs_clarification true / false) of floor(N_max / stratum share), N_max = min over buckets of floor(available / bucket share); task quotas round toward harder buckets (hard = ceil(N*s_hard), medium = ceil(N*(s_hard+s_medium)) - hard, easy = N - hard - medium); each bucket's quota split between the strata by the pool's clarification share (round(N*rate) in all, largest remainder); N shrinks until every part fits; kept items: the first quota of a shuffle (ctx.rng seeded by FNV-1a(\"<seed>:<task>/<stratum>/<bucket>\")) of the cell's items in pool order; output in pool order";

const share = z.number().min(0).max(1);
export const balanceSchema = z
  .object({
    seed: z.number().int(),
    target: z
      .object({ easy: share, medium: share, hard: share })
      .strict()
      .refine((t) => t.easy + t.medium + t.hard > 0, { message: 'the target shares must not all be 0' }),
  })
  .strict();
export type BalanceConfig = z.infer<typeof balanceSchema>;

export type BucketCounts = Record<Bucket, number>;

const EPS = 1e-9;

export interface TaskPlan {
  available: BucketCounts;
  kept: BucketCounts;
  dropped: BucketCounts;
}

/** Normalised target shares (the configured values divided by their sum). */
export function normaliseShares(target: Readonly<BucketCounts>): BucketCounts {
  const sum = target.easy + target.medium + target.hard;
  return { easy: target.easy / sum, medium: target.medium / sum, hard: target.hard / sum };
}

/** Quotas of a stratum of size `size`, rounded toward the harder buckets. */
export function quotasFor(size: number, target: Readonly<BucketCounts>): BucketCounts {
  const s = normaliseShares(target);
  const hard = Math.max(0, Math.ceil(size * s.hard - EPS));
  const medium = Math.max(0, Math.ceil(size * (s.hard + s.medium) - EPS)) - hard;
  return { easy: size - hard - medium, medium, hard };
}

/** The largest size whose quotas fit the bucket counts (the scarcest bucket relative to its share decides). */
export function maxSize(
  available: Readonly<BucketCounts>,
  target: Readonly<BucketCounts>,
): { size: number; limitedBy: Bucket[] } {
  const s = normaliseShares(target);
  const limits = BUCKETS.filter((b) => s[b] > 0).map((b) => [b, Math.floor(available[b] / s[b] + EPS)] as const);
  const size = Math.min(...limits.map(([, n]) => n));
  return { size, limitedBy: limits.filter(([, n]) => n === size).map(([b]) => b) };
}

/** The kept size and quotas for one set of bucket counts. */
export function taskQuotas(
  available: Readonly<BucketCounts>,
  target: Readonly<BucketCounts>,
): { size: number; quota: BucketCounts; limitedBy: Bucket[] } {
  const { size, limitedBy } = maxSize(available, target);
  return { size, quota: checkedQuotas(size, available, target), limitedBy };
}

function checkedQuotas(size: number, available: Readonly<BucketCounts>, target: Readonly<BucketCounts>): BucketCounts {
  const quota = quotasFor(size, target);
  for (const b of BUCKETS) {
    if (quota[b] < 0 || quota[b] > available[b]) {
      throw new Error(
        `internal error: balance quota ${b} ${quota[b]} outside [0, ${available[b]}] for size ${size}; please report`,
      );
    }
  }
  return quota;
}

const zero = (): BucketCounts => ({ easy: 0, medium: 0, hard: 0 });

export const STRATA = ['needs_clarification', 'no_clarification'] as const;
export type Stratum = (typeof STRATA)[number];

export interface StratumPlan {
  available: BucketCounts;
  kept: BucketCounts;
  dropped: BucketCounts;
  size: number;
  /** The largest size this stratum alone would allow, and the buckets that set it. */
  max_size: number;
  limited_by: Bucket[];
}

export interface TaskPlan {
  available: BucketCounts;
  kept: BucketCounts;
  dropped: BucketCounts;
  /** Kept size N. */
  size: number;
  /** Kept shares (0 when nothing is kept). */
  shares: BucketCounts;
  /** The pool's and the kept share of scenarios that need clarification. */
  clarify_rate: { pool: number; kept: number | null };
  /** The stratum whose supply set N (the scarcest relative to its share). */
  limited_by: Stratum[];
  strata: Record<Stratum, StratumPlan>;
}

export interface BalancePlan {
  /** Per task, sorted by task name. */
  tasks: Record<string, TaskPlan>;
  /** Whether each pool item (by position) is kept. */
  keep: boolean[];
}

export interface BalanceItem {
  task: string;
  bucket: Bucket;
  clarify: boolean;
}

const sum = (c: Readonly<BucketCounts>): number => c.easy + c.medium + c.hard;

/** Splits bucket quotas between the strata: `clarify` of them to needs_clarification, apportioned over the buckets by largest remainder. */
function splitStrata(quota: Readonly<BucketCounts>, clarify: number): Record<Stratum, BucketCounts> {
  const total = sum(quota);
  const c = zero();
  if (total > 0 && clarify > 0) {
    const exact = BUCKETS.map((b) => ({ b, x: (quota[b] * clarify) / total }));
    for (const e of exact) c[e.b] = Math.floor(e.x + EPS);
    let left = clarify - sum(c);
    for (const e of [...exact].sort(
      (p, q) =>
        q.x - Math.floor(q.x + EPS) - (p.x - Math.floor(p.x + EPS)) || BUCKETS.indexOf(q.b) - BUCKETS.indexOf(p.b),
    )) {
      if (left <= 0) break;
      c[e.b] += 1;
      left -= 1;
    }
  }
  return {
    needs_clarification: c,
    no_clarification: { easy: quota.easy - c.easy, medium: quota.medium - c.medium, hard: quota.hard - c.hard },
  };
}

/** Chooses the kept items of a pool, given each item's task, bucket and need for clarification, in pool order. */
export function planBalance(
  items: readonly BalanceItem[],
  config: BalanceConfig,
  rng: (seed: number) => Rng,
): BalancePlan {
  const groups = new Map<string, Record<Stratum, Record<Bucket, number[]>>>();
  items.forEach((it, i) => {
    let g = groups.get(it.task);
    if (!g) {
      g = {
        needs_clarification: { easy: [], medium: [], hard: [] },
        no_clarification: { easy: [], medium: [], hard: [] },
      };
      groups.set(it.task, g);
    }
    g[it.clarify ? 'needs_clarification' : 'no_clarification'][it.bucket].push(i);
  });
  const keep = items.map(() => false);
  const tasks: Record<string, TaskPlan> = {};
  for (const task of [...groups.keys()].sort()) {
    const g = groups.get(task)!;
    const avail = Object.fromEntries(
      STRATA.map((st) => [st, { easy: g[st].easy.length, medium: g[st].medium.length, hard: g[st].hard.length }]),
    ) as Record<Stratum, BucketCounts>;
    const pool = STRATA.reduce((a, st) => a + sum(avail[st]), 0);
    const rate = sum(avail.needs_clarification) / pool;
    const max = Object.fromEntries(STRATA.map((st) => [st, maxSize(avail[st], config.target)])) as Record<
      Stratum,
      ReturnType<typeof maxSize>
    >;
    const share: Record<Stratum, number> = { needs_clarification: rate, no_clarification: 1 - rate };
    const present = STRATA.filter((st) => share[st] > 0);
    const limits = present.map((st) => [st, Math.floor(max[st].size / share[st] + EPS)] as const);
    // Task-level quotas (rounded toward the harder buckets), each bucket's split between the strata
    // by the clarification share (largest remainder); N shrinks until every part fits its cell.
    let size = Math.min(...limits.map(([, n]) => n));
    let parts: Record<Stratum, BucketCounts>;
    for (;;) {
      parts = splitStrata(quotasFor(size, config.target), Math.round(size * rate));
      if (size === 0 || STRATA.every((st) => BUCKETS.every((b) => parts[st][b] <= avail[st][b]))) break;
      size -= 1;
    }
    const strata = {} as Record<Stratum, StratumPlan>;
    const kept = zero();
    for (const st of STRATA) {
      const quota = parts[st];
      const dropped = zero();
      for (const b of BUCKETS) {
        const chosen = rng(deriveSeed(config.seed, `${task}/${st}/${b}`))
          .shuffle(g[st][b])
          .slice(0, quota[b]);
        for (const i of chosen) keep[i] = true;
        dropped[b] = avail[st][b] - quota[b];
        kept[b] += quota[b];
      }
      strata[st] = {
        available: avail[st],
        kept: quota,
        dropped,
        size: sum(quota),
        max_size: max[st].size,
        limited_by: max[st].limitedBy,
      };
    }
    const available = zero();
    for (const b of BUCKETS) available[b] = avail.needs_clarification[b] + avail.no_clarification[b];
    const shares = zero();
    for (const b of BUCKETS) shares[b] = size === 0 ? 0 : kept[b] / size;
    tasks[task] = {
      available,
      kept,
      dropped: {
        easy: available.easy - kept.easy,
        medium: available.medium - kept.medium,
        hard: available.hard - kept.hard,
      },
      size,
      shares,
      clarify_rate: { pool: rate, kept: size === 0 ? null : strata.needs_clarification.size / size },
      limited_by: limits.filter(([, n]) => n === Math.min(...limits.map(([, m]) => m))).map(([st]) => st),
      strata,
    };
  }
  return { tasks, keep };
}
