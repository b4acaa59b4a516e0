// The difficulty gate: checks on the balanced pool, overall and per task, each with a one-line
// hint: the bucket shares (easy ≤ 30 %, medium 40–50 %, hard 30–40 %), the ceilings, clue_overlap
// medians, and the association between the reasoning bucket and the need for clarification
// (Cramér's V ≤ max_association) in the whole pool — it says whether the difficulty measure
// itself is the clarification flag in disguise, which balancing would otherwise hide; the
// balanced pool's V, ≈ 0 by construction, is reported as n/a with that reason, not gated. A check that cannot apply is never passed: clue_overlap for a task without
// supporting text is left out and named in the report's `not_applicable` list; an association
// where V is undefined or the scope is smaller than min_association_n is `n/a` with the reason.
import { check, notApplicable, type Check } from 'rc1-build';
import { association } from './association.ts';
import { BUCKETS, type Bucket, type DimensionsConfig } from './bands.ts';
import type { GateConfig } from './config.ts';
import type { DifficultyMetrics } from './metrics.ts';
import { quantileSorted } from './stats.ts';

export interface Scored {
  m: DifficultyMetrics;
  bucket: Bucket;
}

export const HINTS = {
  hard_share:
    'hard share outside [min_hard_share, max_hard_share]: set difficulty.balance.target.hard inside it, and add harder items (more reasoning steps, arithmetic, distractor paragraphs) where a bucket runs short',
  easy_share:
    'easy share too high: lower difficulty.balance.target.easy, or add medium and hard items so fewer easy ones are kept',
  medium_share:
    'medium share outside [min_medium_share, max_medium_share]: set difficulty.balance.target.medium inside it, and add medium items where balancing runs short of them',
  association:
    'the reasoning bucket gives away the need for clarification: take needs_clarification and the features a clarification exchange changes (turns) out of difficulty.dimensions, and render under-specified scenarios with the same variants as the others',
  len_tokens_max:
    "items over the length ceiling: trim long contexts (fewer distractor documents) or raise difficulty.gate.max_len_tokens after checking the base model's max_seq_len",
  turns_max: "dialogues over the turn ceiling: lower the seed pool's max_turns or the clarification exchanges per item",
  tool_hops_max:
    'tool chains over the ceiling: drop or split items whose reference needs more tool calls than difficulty.gate.max_tool_hops',
  clue_overlap_median_hard:
    'clue_overlap too high among hard items: paraphrase questions and draw evidence from more sources, so questions repeat less of the supporting text',
  clue_overlap_median_easy:
    'clue_overlap too low among easy items: easy questions share little wording with their evidence; add direct-lookup items whose question repeats a supporting sentence',
  empty:
    'no items of this task are in the balanced pool: a bucket with a non-zero target is empty, so balancing keeps nothing; add items of that bucket',
} as const;

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

function median(xs: readonly (number | null)[]): number | null {
  const sorted = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  const v = quantileSorted(sorted, 0.5);
  return v === null ? null : round4(v);
}

function maxOf(items: readonly Scored[], key: 'len_tokens' | 'turns' | 'tool_hops'): number | null {
  let best: number | null = null;
  for (const it of items) best = Math.max(best ?? -Infinity, it.m[key]);
  return best;
}

/** Bucket counts and shares of a set of scored items. */
export function bucketShares(items: readonly Scored[]): {
  n: number;
  counts: Record<Bucket, number>;
  shares: Record<Bucket, number | null>;
} {
  const counts: Record<Bucket, number> = { easy: 0, medium: 0, hard: 0 };
  for (const it of items) counts[it.bucket] += 1;
  const n = items.length;
  const shares = Object.fromEntries(BUCKETS.map((b) => [b, n === 0 ? null : round4(counts[b] / n)])) as Record<
    Bucket,
    number | null
  >;
  return { n, counts, shares };
}

/** Median clue_overlap of each bucket (null where no item of the bucket has a value). */
export function clueMedians(items: readonly Scored[]): Record<Bucket, number | null> {
  return Object.fromEntries(
    BUCKETS.map((b) => [b, median(items.filter((it) => it.bucket === b).map((it) => it.m.clue_overlap))]),
  ) as Record<Bucket, number | null>;
}

/** Cramér's V of bucket × needs_clarification (null: not applicable). */
export function clarifyAssociation(items: readonly Scored[]): number | null {
  return association(items.map((it) => ({ bucket: it.bucket, clarify: it.m.needs_clarification }))).cramers_v;
}

/** Checks of one scope ('all' or a task). `clueApplies` is false for a task without supporting text. */
function scopeChecks(
  scope: string,
  items: readonly Scored[],
  pool: readonly Scored[],
  gate: GateConfig,
  clueApplies: boolean,
): Check[] {
  const { n, shares } = bucketShares(items);
  const name = (c: string): string => `${scope}.${c}`;
  const checks = [
    check(name('easy_share'), shares.easy, '<=', gate.max_easy_share, n === 0 ? HINTS.empty : HINTS.easy_share),
    check(
      name('medium_share'),
      shares.medium,
      'in',
      [gate.min_medium_share, gate.max_medium_share],
      n === 0 ? HINTS.empty : HINTS.medium_share,
    ),
    check(
      name('hard_share'),
      shares.hard,
      'in',
      [gate.min_hard_share, gate.max_hard_share],
      n === 0 ? HINTS.empty : HINTS.hard_share,
    ),
    check(
      name('len_tokens_max'),
      maxOf(items, 'len_tokens'),
      '<=',
      gate.max_len_tokens,
      n === 0 ? HINTS.empty : HINTS.len_tokens_max,
    ),
    check(name('turns_max'), maxOf(items, 'turns'), '<=', gate.max_turns, n === 0 ? HINTS.empty : HINTS.turns_max),
    check(
      name('tool_hops_max'),
      maxOf(items, 'tool_hops'),
      '<=',
      gate.max_tool_hops,
      n === 0 ? HINTS.empty : HINTS.tool_hops_max,
    ),
  ];
  const medians = clueMedians(items);
  const hard = check(
    name('clue_overlap_median_hard'),
    medians.hard,
    '<=',
    gate.max_clue_overlap_hard_median,
    HINTS.clue_overlap_median_hard,
  );
  const easy = check(
    name('clue_overlap_median_easy'),
    medians.easy,
    '>=',
    gate.min_clue_overlap_easy_median,
    HINTS.clue_overlap_median_easy,
  );
  // A task without supporting text has no clue_overlap: its two clue checks do not exist (they
  // are listed under `not_applicable` in the report) — neither passed nor waived, so a prod
  // round 2, which refuses every waiver, is not blocked by a check that cannot apply.
  if (clueApplies) checks.push(hard, easy);
  // Association: balanced pool and whole pool. Not applicable (n/a with the reason, never a pass)
  // where V is undefined or the scope holds too few scenarios for V to mean anything.
  const assoc = (c: string, set: readonly Scored[], hint: string): Check => {
    const v = clarifyAssociation(set);
    const made = check(name(c), v, '<=', gate.max_association, hint);
    if (set.length === 0) return made;
    if (v === null) return notApplicable(made, `Cramér's V is undefined: ${undefinedWhy(set)}`);
    if (set.length < gate.min_association_n)
      return notApplicable(
        made,
        `${set.length} scenarios, fewer than difficulty.gate.min_association_n = ${gate.min_association_n}: V is too noisy to judge at this size`,
      );
    return made;
  };
  // The balanced pool splits each bucket's quota between the clarification strata at the pool's
  // rate (balance.ts), so its V is ≈ 0 by construction: reported (the value stays on the check),
  // never gated — a check that cannot fail is no check. The pool's association is the gate.
  const inBalanced = assoc('clarify_association', items, n === 0 ? HINTS.empty : HINTS.association);
  checks.push(inBalanced.status === 'n/a' ? inBalanced : notApplicable(inBalanced, BALANCED_ASSOCIATION));
  checks.push(assoc('clarify_association_pool', pool, HINTS.association));
  return checks;
}

/** Why the balanced pool's association is reported, not gated. */
export const BALANCED_ASSOCIATION =
  "not gated in the balanced pool: balancing splits every bucket between the clarification strata at the pool's rate, so V is about 0 by construction (value reported); the association is gated on the whole pool (clarify_association_pool)";

/**
 * The gate's checks: overall, then per task of the pool (a task missing from the balanced pool
 * fails its checks). clue_overlap applies to a task when its dimensions list clue_overlap and some
 * item of the task has a value.
 */
export function difficultyChecks(
  balanced: readonly Scored[],
  pool: readonly Scored[],
  poolTasks: readonly string[],
  dims: DimensionsConfig,
  gate: GateConfig,
  poolClue: ReadonlySet<string>,
): Check[] {
  const checks = scopeChecks('all', balanced, pool, gate, poolClue.size > 0);
  for (const task of poolTasks) {
    const items = balanced.filter((it) => it.m.task === task);
    const clueApplies = (dims[task] ?? []).includes('clue_overlap') && poolClue.has(task);
    checks.push(
      ...scopeChecks(
        task,
        items,
        pool.filter((it) => it.m.task === task),
        gate,
        clueApplies,
      ),
    );
  }
  return checks;
}

function undefinedWhy(items: readonly Scored[]): string {
  return items.every((it) => !it.m.needs_clarification)
    ? 'no scenario needs clarification'
    : items.every((it) => it.m.needs_clarification)
      ? 'every scenario needs clarification'
      : 'every scenario is in one bucket';
}

/** The clue_overlap checks that do not apply (tasks without supporting text), with the reason. */
export function clueNotApplicable(
  poolTasks: readonly string[],
  dims: DimensionsConfig,
  poolClue: ReadonlySet<string>,
): { check: string; reason: string }[] {
  const out: { check: string; reason: string }[] = [];
  for (const task of poolTasks) {
    if ((dims[task] ?? []).includes('clue_overlap') && poolClue.has(task)) continue;
    for (const c of ['clue_overlap_median_hard', 'clue_overlap_median_easy'])
      out.push({ check: `${task}.${c}`, reason: `clue_overlap does not apply to ${task} (no supporting text)` });
  }
  return out;
}
