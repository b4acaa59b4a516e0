// The held-aside (shadow) evaluation set, stratified by what it is used to evaluate: task, the
// need for clarification and the reasoning difficulty band. Every split that the shadow run and
// ppo_eval report (by task, by band, needing clarification or not, and their crossings) then has
// its share of the 245 items, instead of the few a plain sample happens to hold.
//
//   task quotas   largest remainder of n over shadow.stratify (110 / 74 / 61 for 245)
//   cells         within a task: round(quota·ρ) scenarios that need clarification (ρ = the pool's
//                 clarify_rate), the rest not; within each, the bands by largest remainder over
//                 the balanced pool's target shares (difficulty.balance.target)
//   renderings    the seed pool's generator (lib/pool/build-pool.ts), so the set looks like what
//                 the policy is trained on: templates, roles, styles, the hint / gold / split
//                 variants drawn at their configured shares, and under-specified renderings (a
//                 detail left out, revealed when asked) for the cells that need clarification
//   selection     per task, the items in a seeded shuffle; each is rendered for a stratum that
//                 still has room (which one first: seeded) and taken when the cell of its band
//                 does; each source item is used at most once; stops when every cell is full
//   bands         the pool's band rules (bucketOf over the scenario's difficulty metrics)
// A cell the items cannot fill is an error naming the cell and what to add. The same items,
// configs and seed give the same set, whatever order the files are listed in.
import type { Rng } from 'rc1-build';
import {
  compareSourceItems,
  deriveSeed,
  NotEnoughDataError,
  stratifiedQuotas,
  TASKS,
  type SourceItem,
  type Task,
} from '../data/index.ts';
import {
  BUCKETS,
  bucketOf,
  type BandsConfig,
  type Bucket,
  type DimensionsConfig,
  type MetricsComputer,
} from '../difficulty/index.ts';
import type { PoolBuilder, PoolScenario } from './build-pool.ts';
import { VARIANTS, type Kind, type Variant } from './pool-kinds.ts';

export interface ShadowSetOptions {
  n: number;
  seed: number;
  stratify: Readonly<Record<string, number>>;
  clarifyRate: number;
  bandShares: Readonly<Record<Bucket, number>>;
  variants: Readonly<Partial<Record<Variant, Partial<Record<Task, number>>>>>;
  bands: BandsConfig;
  dims: DimensionsConfig;
}

/** A shadow scenario: a pool-style rendering of a held-out item, with its band. */
export type ShadowScenario = PoolScenario & { difficulty: Bucket };

export type Stratum = 'clarify' | 'plain';
export type CellCounts = Record<Stratum, Record<Bucket, number>>;

export interface ShadowSetResult {
  /** Sorted by (task, source_id). */
  scenarios: ShadowScenario[];
  quotas: Record<Task, CellCounts>;
  /** Items tried per task before every cell was full. */
  tried: Record<Task, number>;
  available: Record<Task, number>;
}

const zeroCells = (): CellCounts => ({
  clarify: { easy: 0, medium: 0, hard: 0 },
  plain: { easy: 0, medium: 0, hard: 0 },
});

/** The cell quotas of one task's quota. */
export function shadowCells(
  quota: number,
  clarifyRate: number,
  bandShares: Readonly<Record<Bucket, number>>,
): CellCounts {
  const clarify = Math.round(quota * clarifyRate);
  const split = (m: number): Record<Bucket, number> =>
    m === 0 ? { easy: 0, medium: 0, hard: 0 } : (stratifiedQuotas(m, bandShares) as Record<Bucket, number>);
  return { clarify: split(clarify), plain: split(quota - clarify) };
}

/** Selects and renders the shadow set. `builder` holds every item (nothing held aside). */
export function buildShadowSet(
  items: readonly SourceItem[],
  builder: PoolBuilder,
  metrics: MetricsComputer,
  o: ShadowSetOptions,
  rng: (seed: number) => Rng,
): ShadowSetResult {
  const taskQuotas = stratifiedQuotas(o.n, o.stratify);
  const scenarios: ShadowScenario[] = [];
  const quotas = {} as ShadowSetResult['quotas'];
  const tried = {} as ShadowSetResult['tried'];
  const available = {} as ShadowSetResult['available'];
  for (const task of TASKS) {
    const pool = items.filter((i) => i.task === task).sort(compareSourceItems);
    available[task] = pool.length;
    if ((taskQuotas[task] ?? 0) > pool.length) throw new NotEnoughDataError(task, taskQuotas[task]!, pool.length, o.n);
    const cells = shadowCells(taskQuotas[task] ?? 0, o.clarifyRate, o.bandShares);
    quotas[task] = cells;
    const filled = zeroCells();
    const room = (st: Stratum): boolean => BUCKETS.some((b) => filled[st][b] < cells[st][b]);
    let n = 0;
    for (const item of rng(deriveSeed(o.seed, task)).shuffle(pool)) {
      if (!room('clarify') && !room('plain')) break;
      n += 1;
      const r = rng(deriveSeed(o.seed, `${task}/${item.source_id}`));
      const order: Stratum[] = r.next() < o.clarifyRate ? ['clarify', 'plain'] : ['plain', 'clarify'];
      for (const st of order.filter(room)) {
        const kind: Kind = { clarify: st === 'clarify', hint: false, gold: false, split: false };
        for (const v of VARIANTS) kind[v] = r.next() < (o.variants[v]?.[task] ?? 0);
        const s = builder.renderItem(item, kind, `shadow-${task}-${item.source_id}`, r);
        if (!s) continue;
        const band = bucketOf(o.bands, o.dims, metrics.compute(s)).bucket;
        if (filled[st][band] >= cells[st][band]) continue;
        filled[st][band] += 1;
        scenarios.push({ ...s, difficulty: band });
        break;
      }
    }
    tried[task] = n;
    for (const st of ['clarify', 'plain'] as const) {
      for (const b of BUCKETS) {
        if (filled[st][b] < cells[st][b]) {
          throw new RangeError(
            `shadow set: ${task} has ${filled[st][b]} of the ${cells[st][b]} ${b} scenarios ${st === 'clarify' ? 'needing' : 'not needing'} clarification it needs, after trying all ${pool.length} ${task} items: add ${task} source questions (e.g. a Hugging Face Parquet or JSONL export in data/raw/${task}/) or lower shadow.n`,
          );
        }
      }
    }
  }
  scenarios.sort((a, b) =>
    a.task !== b.task ? (a.task < b.task ? -1 : 1) : a.source_id < b.source_id ? -1 : a.source_id > b.source_id ? 1 : 0,
  );
  return { scenarios, quotas, tried, available };
}
