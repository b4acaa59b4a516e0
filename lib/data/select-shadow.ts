// The held-aside (shadow) split: a deterministic, task-stratified sample of source items that the
// seed pool must never use. Determinism does not depend on file order: items are sorted by
// (task, source_id) before a seeded shuffle. Each task is shuffled by its own generator, seeded
// from (seed, task), so the sample of one task does not change when another task's pool does.
//
// Quotas use largest-remainder rounding so that they add up to exactly n: each task gets
// floor(n·w/Σw); the seats left go one each to the tasks with the largest fractional parts (ties:
// larger weight first, then task name). For n 245 and hotpotqa .45 / strategyqa .30 / gsm8k .25:
// 110.25, 73.5, 61.25 → 110, 73, 61 (244) → the last seat goes to strategyqa → 110 / 74 / 61.
import { createRng, type Rng } from 'rc1-build';
import { compareSourceItems, isTask, sourceKey, TASKS, type SourceItem, type Task } from './source-item.ts';

export interface ShadowOptions {
  n: number;
  seed: number;
  /** Weight per task; normalised by their sum. Tasks without a weight are not sampled. */
  stratify: Record<string, number>;
  /** The PRNG for a seed (default: createRng from the rule API, as ctx.rng). */
  rng?: (seed: number) => Rng;
}

export interface ShadowSelection {
  /** The selected items, sorted by (task, source_id). */
  items: SourceItem[];
  /** Items selected per task (every task of TASKS, 0 when not stratified). */
  counts: Record<Task, number>;
  /** Items available per task before selection. */
  available: Record<Task, number>;
}

const EPS = 1e-9;

/** Largest-remainder apportionment of n seats by weight; keys in sorted order. */
export function stratifiedQuotas(n: number, weights: Record<string, number>): Record<string, number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`shadow set: n must be a non-negative integer, got ${n}`);
  const keys = Object.keys(weights).sort();
  let total = 0;
  for (const k of keys) {
    const w = weights[k]!;
    if (!Number.isFinite(w) || w < 0)
      throw new RangeError(`shadow set: stratify.${k} must be a non-negative number, got ${w}`);
    total += w;
  }
  if (!(total > 0)) throw new RangeError('shadow set: stratify weights must sum to more than 0');
  const shares = keys.map((k) => {
    const exact = (n * weights[k]!) / total;
    const floor = Math.floor(exact + EPS);
    return { k, w: weights[k]!, floor, rest: Math.max(0, exact - floor) };
  });
  let left = n - shares.reduce((s, x) => s + x.floor, 0);
  const byRemainder = [...shares].sort((a, b) =>
    Math.abs(a.rest - b.rest) > EPS ? b.rest - a.rest : a.w !== b.w ? b.w - a.w : a.k < b.k ? -1 : a.k > b.k ? 1 : 0,
  );
  for (const s of byRemainder) {
    if (left <= 0) break;
    s.floor += 1;
    left -= 1;
  }
  const out: Record<string, number> = {};
  for (const s of shares) out[s.k] = s.floor;
  return out;
}

/** A 32-bit seed for one stream of a run (FNV-1a over `seed:label`). */
export function deriveSeed(seed: number, label: string): number {
  let h = 0x811c9dc5;
  const s = `${seed}:${label}`;
  // Code point by code point (a surrogate pair is one step, a lone surrogate one of its own), as a
  // for…of over the string walks it, without an iterator.
  for (let i = 0; i < s.length; ) {
    const cp = s.codePointAt(i)!;
    h ^= cp;
    h = Math.imul(h, 0x01000193) >>> 0;
    i += cp > 0xffff ? 2 : 1;
  }
  return h >>> 0;
}

function perTask(value: (t: Task) => number): Record<Task, number> {
  const out = {} as Record<Task, number>;
  for (const t of TASKS) out[t] = value(t);
  return out;
}

/** The sources hold fewer items of a task than the requested size needs: a data error, not a bug. */
export class NotEnoughDataError extends Error {
  override readonly name = 'NotEnoughDataError';
  constructor(
    readonly task: Task,
    readonly needed: number,
    readonly available: number,
    readonly n: number,
  ) {
    super(`shadow set: task ${task} needs ${needed} items but the sources have ${available} (shadow.n = ${n})`);
  }
}

/** Selects the shadow set: exactly n items, stratified by task, the same for the same items and seed. */
export function selectShadow(items: readonly SourceItem[], options: ShadowOptions): ShadowSelection {
  const rng = options.rng ?? createRng;
  for (const k of Object.keys(options.stratify)) {
    if (!isTask(k))
      throw new RangeError(`shadow set: stratify names unknown task ${JSON.stringify(k)} (tasks: ${TASKS.join(', ')})`);
  }
  const quotas = stratifiedQuotas(options.n, options.stratify);
  const sorted = [...items].sort(compareSourceItems);
  for (let i = 1; i < sorted.length; i++) {
    if (compareSourceItems(sorted[i - 1]!, sorted[i]!) === 0) {
      throw new RangeError(
        `shadow set: source item ${sourceKey(sorted[i]!)} occurs twice; load items with loadSources, which merges duplicates`,
      );
    }
  }
  const byTask = new Map<Task, SourceItem[]>(TASKS.map((t) => [t, []]));
  for (const item of sorted) byTask.get(item.task)!.push(item);
  const selected: SourceItem[] = [];
  for (const task of TASKS) {
    const quota = quotas[task] ?? 0;
    const pool = byTask.get(task)!;
    if (quota > pool.length) {
      throw new NotEnoughDataError(task, quota, pool.length, options.n);
    }
    if (quota === 0) continue;
    selected.push(...rng(deriveSeed(options.seed, task)).shuffle(pool).slice(0, quota));
  }
  selected.sort(compareSourceItems);
  return {
    items: selected,
    counts: perTask((t) => quotas[t] ?? 0),
    available: perTask((t) => byTask.get(t)!.length),
  };
}
