// Per-task resampling of the seed pool to the target bucket shares (seeds/002 §二: easy .25 /
// medium .45 / hard .30), by downsampling only: no scenario is duplicated. For each task the kept
// size N is the largest the scarcest bucket allows, N = min over buckets of floor(available / share);
// the quotas round toward the harder buckets (hard = ceil(N·s_hard), medium = ceil(N·(s_hard +
// s_medium)) − hard, easy = the rest), so each is within one scenario of its exact share, the hard
// share is never below its target and the easy share never above; every quota fits its bucket.
// Within a (task, bucket) the kept scenarios are the first `quota` of a seeded shuffle of that
// bucket's scenarios in pool order; the balanced pool keeps the pool's order.
import { z } from 'zod';
import type { Rng } from '../api/index.ts';
import { deriveSeed } from '../data/select-shadow.ts';
import { BUCKETS, type Bucket } from './bands.ts';

export const BALANCE_METHOD = 'downsample per task to N = min over buckets of floor(available / share), no duplication; quotas round toward harder buckets (hard = ceil(N*s_hard), medium = ceil(N*(s_hard+s_medium)) - hard, easy = N - hard - medium); kept items: the first quota of a shuffle (ctx.rng seeded by FNV-1a("<seed>:<task>/<bucket>")) of the bucket\'s items in pool order; output in pool order';

const share = z.number().min(0).max(1);
export const balanceSchema = z.object({
  seed: z.number().int(),
  target: z.object({ easy: share, medium: share, hard: share }).strict()
    .refine((t) => t.easy + t.medium + t.hard > 0, { message: 'the target shares must not all be 0' }),
}).strict();
export type BalanceConfig = z.infer<typeof balanceSchema>;

export type BucketCounts = Record<Bucket, number>;

const EPS = 1e-9;

export interface TaskPlan {
  available: BucketCounts;
  kept: BucketCounts;
  dropped: BucketCounts;
  /** Kept size N. */
  size: number;
  /** The buckets whose supply set N (the scarcest relative to their share). */
  limited_by: Bucket[];
  /** Kept shares (0 when nothing is kept). */
  shares: BucketCounts;
}

/** Normalised target shares (the configured values divided by their sum). */
export function normaliseShares(target: Readonly<BucketCounts>): BucketCounts {
  const sum = target.easy + target.medium + target.hard;
  return { easy: target.easy / sum, medium: target.medium / sum, hard: target.hard / sum };
}

/** The kept size and quotas for one task's bucket counts. */
export function taskQuotas(available: Readonly<BucketCounts>, target: Readonly<BucketCounts>): { size: number; quota: BucketCounts; limitedBy: Bucket[] } {
  const s = normaliseShares(target);
  const limits = BUCKETS.filter((b) => s[b] > 0).map((b) => [b, Math.floor(available[b] / s[b] + EPS)] as const);
  const size = Math.min(...limits.map(([, n]) => n));
  const hard = Math.max(0, Math.ceil(size * s.hard - EPS));
  const medium = Math.max(0, Math.ceil(size * (s.hard + s.medium) - EPS)) - hard;
  const quota: BucketCounts = { easy: size - hard - medium, medium, hard };
  for (const b of BUCKETS) {
    if (quota[b] < 0 || quota[b] > available[b]) {
      throw new Error(`internal error: balance quota ${b} ${quota[b]} outside [0, ${available[b]}] for size ${size}; please report`);
    }
  }
  return { size, quota, limitedBy: limits.filter(([, n]) => n === size).map(([b]) => b) };
}

const zero = (): BucketCounts => ({ easy: 0, medium: 0, hard: 0 });

export interface BalancePlan {
  /** Per task, sorted by task name. */
  tasks: Record<string, TaskPlan>;
  /** Whether each pool item (by position) is kept. */
  keep: boolean[];
}

/** Chooses the kept items of a pool, given each item's task and bucket in pool order. */
export function planBalance(items: readonly { task: string; bucket: Bucket }[], config: BalanceConfig, rng: (seed: number) => Rng): BalancePlan {
  const groups = new Map<string, Record<Bucket, number[]>>();
  items.forEach((it, i) => {
    let g = groups.get(it.task);
    if (!g) { g = { easy: [], medium: [], hard: [] }; groups.set(it.task, g); }
    g[it.bucket].push(i);
  });
  const keep = items.map(() => false);
  const tasks: Record<string, TaskPlan> = {};
  for (const task of [...groups.keys()].sort()) {
    const g = groups.get(task)!;
    const available: BucketCounts = { easy: g.easy.length, medium: g.medium.length, hard: g.hard.length };
    const { size, quota, limitedBy } = taskQuotas(available, config.target);
    const dropped = zero();
    for (const b of BUCKETS) {
      const chosen = rng(deriveSeed(config.seed, `${task}/${b}`)).shuffle(g[b]).slice(0, quota[b]);
      for (const i of chosen) keep[i] = true;
      dropped[b] = available[b] - quota[b];
    }
    const shares = zero();
    for (const b of BUCKETS) shares[b] = size === 0 ? 0 : quota[b] / size;
    tasks[task] = { available, kept: quota, dropped, size, limited_by: limitedBy, shares };
  }
  return { tasks, keep };
}
