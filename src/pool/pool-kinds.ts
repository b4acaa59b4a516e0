// How each scenario of a task is rendered, as a function of its index j among the task's scenarios
// only (so the pool stays prefix-stable):
//   clarify  under-specified: the j-th scenario is one iff ⌊(j+1)ρ⌋ > ⌊jρ⌋ (ρ = clarify_rate), so
//            every prefix of m scenarios of a task holds ⌊mρ⌋ of them
//   hint     the user quotes one supporting sentence as context they already have
//   split    the problem statement in one user turn, the question asked in the next (gsm8k)
//   plain    everything else
// The variants (hint, then split) are taken, in that order, from the scenarios left over by the
// earlier choices, at the rate that makes their share of the task's scenarios the configured one:
// of the p-th scenario that is not under-specified, hint iff ⌊(p+1)r⌋ > ⌊pr⌋ with r = η/(1 − ρ),
// and so on for split among the ones left. Every prefix then holds within one scenario of its
// share of each kind.
import type { Task } from '../data/index.ts';

export const KINDS = ['plain', 'clarify', 'hint', 'split'] as const;
export type Kind = (typeof KINDS)[number];
export const VARIANTS = ['hint', 'split'] as const;
export type Variant = (typeof VARIANTS)[number];

const DEN = 1_000_000;

/** Whether position i of a Bresenham sequence of rate `rate` (parts per DEN) is chosen, and how many earlier ones were. */
function step(i: number, rate: number): { chosen: boolean; before: number } {
  const before = Math.floor((i * rate) / DEN);
  return { chosen: Math.floor(((i + 1) * rate) / DEN) > before, before };
}

export interface KindPlan {
  /** ρ in parts per DEN. */
  clarify: number;
  /** Per variant, its rate among the scenarios left when it is chosen, in parts per DEN. */
  variants: { kind: Variant; rate: number }[];
}

/** The plan of one task: clarify_rate and the variants' shares of the task's scenarios. */
export function kindPlan(task: Task, clarifyRate: number, shares: Readonly<Record<Variant, Partial<Record<Task, number>>>>): KindPlan {
  let left = 1 - clarifyRate;
  const variants: KindPlan['variants'] = [];
  for (const kind of VARIANTS) {
    const s = shares[kind][task] ?? 0;
    if (s <= 0) continue;
    if (s > left + 1e-9) throw new RangeError(`pool.variants.${kind}.${task}: ${s} is more than the ${Math.max(0, left).toFixed(4)} of ${task} scenarios left after clarify_rate and the earlier variants`);
    variants.push({ kind, rate: Math.min(DEN, Math.round((s / left) * DEN)) });
    left -= s;
  }
  return { clarify: Math.round(clarifyRate * DEN), variants };
}

/** The kind of the j-th scenario of a task, and its index among the task's scenarios of that kind. */
export function kindAt(j: number, plan: KindPlan): { kind: Kind; index: number } {
  const c = step(j, plan.clarify);
  if (c.chosen) return { kind: 'clarify', index: c.before };
  let i = j - c.before;
  for (const v of plan.variants) {
    const s = step(i, v.rate);
    if (s.chosen) return { kind: v.kind, index: s.before };
    i -= s.before;
  }
  return { kind: 'plain', index: i };
}
