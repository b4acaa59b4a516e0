// The task of each position of the seed pool, chosen so the pool is prefix-stable: position k's
// task depends on k and the mix only, never on the pool size n, so the pool at 1 000 is the first
// 1 000 items of the pool at 30 000. Every prefix of length m holds the largest-remainder quotas of
// m (the same rounding as the shadow set's stratifiedQuotas): position k takes the task whose
// quota grows from m = k to m = k + 1. Largest remainder is not always house-monotone (the
// Alabama paradox: a quota can shrink as m grows); where that happens the position goes to the
// task furthest below its exact share m·w (then by larger weight, then name), so every prefix
// stays within one item of its exact share and the sequence never changes what it has emitted.
import { stratifiedQuotas, TASKS, type Task } from '../data/index.ts';

export interface TaskSequence {
  /** tasks[k]: the task of position k. */
  tasks: Task[];
  /** index[k]: how many earlier positions have the same task (the position within its task). */
  index: number[];
  /** Positions whose prefix deviates from the largest-remainder quotas (0 for house-monotone mixes). */
  deviations: number;
}

/** Validates a task mix: known tasks, non-negative finite weights, positive sum. */
export function checkMix(mix: Readonly<Record<string, number>>): Record<Task, number> {
  const out = {} as Record<Task, number>;
  let total = 0;
  for (const [k, w] of Object.entries(mix)) {
    if (!(TASKS as readonly string[]).includes(k))
      throw new RangeError(`pool.mix: unknown task ${JSON.stringify(k)} (tasks: ${TASKS.join(', ')})`);
    if (!Number.isFinite(w) || w < 0) throw new RangeError(`pool.mix.${k}: expected a non-negative number, got ${w}`);
    total += w;
  }
  if (!(total > 0)) throw new RangeError('pool.mix: the weights must sum to more than 0');
  for (const t of TASKS) out[t] = (mix[t] ?? 0) / total;
  return out;
}

export function taskSequence(n: number, mix: Readonly<Record<string, number>>): TaskSequence {
  const weights = checkMix(mix);
  const active = TASKS.filter((t) => weights[t] > 0);
  const counts = Object.fromEntries(TASKS.map((t) => [t, 0])) as Record<Task, number>;
  const tasks: Task[] = [];
  const index: number[] = [];
  let deviations = 0;
  for (let k = 0; k < n; k++) {
    const quotas = stratifiedQuotas(k + 1, Object.fromEntries(active.map((t) => [t, weights[t]])));
    const grow = active.filter((t) => (quotas[t] ?? 0) > counts[t]);
    let pick: Task;
    if (grow.length === 1) pick = grow[0]!;
    else {
      const deficit = (t: Task): number => (k + 1) * weights[t] - counts[t];
      pick = (grow.length > 0 ? grow : active)
        .slice()
        .sort((a, b) => deficit(b) - deficit(a) || weights[b] - weights[a] || (a < b ? -1 : 1))[0]!;
    }
    tasks.push(pick);
    index.push(counts[pick]);
    counts[pick] += 1;
    if (active.some((t) => counts[t] !== (quotas[t] ?? 0))) deviations += 1;
  }
  return { tasks, index, deviations };
}
