// How each scenario of a task is rendered, as a function of its index j among the task's scenarios
// only (so the pool stays prefix-stable). Two independent choices:
//   clarify   under-specified or not: the j-th scenario is one iff ⌊(j+1)ρ⌋ > ⌊jρ⌋ (ρ = clarify_rate),
//             so every prefix of m scenarios of a task holds ⌊mρ⌋ of them
//   variants  how the (full or under-specified) request is put, each a yes/no flag, the same share
//             in BOTH clarification strata, so no variant — and no difficulty it brings — goes
//             with the need for clarification:
//     hint    the user quotes one supporting sentence as context they already have
//     gold    the wiki tool holds only the supporting paragraphs (HotpotQA's gold-paragraph
//             setting) instead of every paragraph with its distractors
//     split   the problem statement in one user turn, the question asked in the next (gsm8k)
// The flags are chosen nested, each by the same Bresenham rule on the scenario's index within the
// cell the earlier choices put it in (clarify, then hint, gold, split): the p-th scenario of a
// cell takes the flag iff ⌊(p+1)η⌋ > ⌊pη⌋, η the variant's share. Every cell of every prefix then
// holds its share of the next flag within one scenario, and the returned index is the scenario's
// position among the scenarios of its exact kind.
import type { Task } from '../data/index.ts';

/** The template sets a kind renders with (pool.user_turns keys). */
export const KINDS = ['plain', 'clarify', 'hint', 'split'] as const;
export type FrameKind = (typeof KINDS)[number];
export const VARIANTS = ['hint', 'gold', 'split'] as const;
export type Variant = (typeof VARIANTS)[number];

/** A scenario's kind: under-specified or not, and its variant flags. */
export interface Kind {
  clarify: boolean;
  hint: boolean;
  gold: boolean;
  split: boolean;
}

const DEN = 1_000_000;

/** Whether position i of a Bresenham sequence of rate `rate` (parts per DEN) is chosen, and how many earlier ones were. */
function step(i: number, rate: number): { chosen: boolean; before: number } {
  const before = Math.floor((i * rate) / DEN);
  return { chosen: Math.floor(((i + 1) * rate) / DEN) > before, before };
}

export interface KindPlan {
  /** ρ in parts per DEN. */
  clarify: number;
  /** Per variant in use, its share of every cell, in parts per DEN. */
  variants: { kind: Variant; rate: number }[];
}

/** The plan of one task: clarify_rate and each variant's share (of each clarification stratum, hence of the task). */
export function kindPlan(
  task: Task,
  clarifyRate: number,
  shares: Readonly<Partial<Record<Variant, Partial<Record<Task, number>>>>>,
): KindPlan {
  const variants: KindPlan['variants'] = [];
  for (const kind of VARIANTS) {
    const s = shares[kind]?.[task] ?? 0;
    if (!(s >= 0 && s <= 1))
      throw new RangeError(`pool.variants.${kind}.${task}: expected a share in [0, 1], got ${s}`);
    if (s > 0) variants.push({ kind, rate: Math.round(s * DEN) });
  }
  return { clarify: Math.round(clarifyRate * DEN), variants };
}

/** The name of a kind: its flags joined by '+' ('clarify+hint'), 'plain' for none. */
export function kindKey(k: Kind): string {
  // Called several times per rendered scenario: each of the 16 keys is built once.
  const mask = (k.clarify ? 1 : 0) | (k.hint ? 2 : 0) | (k.gold ? 4 : 0) | (k.split ? 8 : 0);
  let key = KIND_KEYS[mask];
  if (key === undefined) {
    const parts = [k.clarify && 'clarify', ...VARIANTS.filter((v) => k[v])].filter(Boolean);
    KIND_KEYS[mask] = key = parts.length ? parts.join('+') : 'plain';
  }
  return key;
}
const KIND_KEYS: (string | undefined)[] = [];

/** Which templates (pool.user_turns, category) a kind renders with: clarify's when under-specified, else the first variant's with its own set, else plain. */
export function frameKind(k: Kind): FrameKind {
  return k.clarify ? 'clarify' : k.hint ? 'hint' : k.split ? 'split' : 'plain';
}

/** The kind of the j-th scenario of a task, and its index among the task's scenarios of that kind. */
export function kindAt(j: number, plan: KindPlan): { kind: Kind; index: number } {
  const c = step(j, plan.clarify);
  const kind: Kind = { clarify: c.chosen, hint: false, gold: false, split: false };
  let i = c.chosen ? c.before : j - c.before;
  for (const v of plan.variants) {
    const s = step(i, v.rate);
    kind[v.kind] = s.chosen;
    i = s.chosen ? s.before : i - s.before;
  }
  return { kind, index: i };
}

/** Every kind a plan can produce (clarify only when ρ > 0, each variant in use on or off). */
export function planKinds(plan: KindPlan): Kind[] {
  let out: Kind[] = [{ clarify: false, hint: false, gold: false, split: false }];
  if (plan.clarify > 0) out = [...out, ...out.map((k) => ({ ...k, clarify: true }))];
  for (const v of plan.variants) out = [...out, ...out.map((k) => ({ ...k, [v.kind]: true }))];
  return out;
}
