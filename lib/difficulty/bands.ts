// Reasoning difficulty bands and buckets. Each dimension's band (easy / medium / hard) comes from
// two conditions in configs/difficulty.yaml, written as in the planning notes' table ('< 200',
// '>= 5'): easy when the easy condition holds, hard when the hard one holds, medium otherwise.
// A scenario's bucket is the third of [0, 2] that holds the mean band score (easy 0, medium 1,
// hard 2) of the dimensions that vote for its task (difficulty.dimensions): [0, 2/3) easy,
// [2/3, 4/3] medium, (4/3, 2] hard — so two easy votes and one hard one (mean 2/3) are medium,
// and a dimension that no item of a task escapes only shifts the mean, never decides alone.
//
// The need for clarification is NOT a difficulty dimension: it is the second, separate axis
// (the scenario's `needs_clarification`), balanced beside the bucket and gated for association
// with it (balance.ts, gate.ts). The schema refuses it in difficulty.dimensions.
import { z } from 'zod';
import { RuleError } from 'rc1-build';
import type { DifficultyMetrics } from './metrics.ts';

export const BUCKETS = ['easy', 'medium', 'hard'] as const;
export type Bucket = (typeof BUCKETS)[number];

export const NUMERIC_DIMENSIONS = [
  'len_tokens',
  'turns',
  'tool_hops',
  'hops',
  'distractors',
  'ops_numeric',
  'entities',
  'connector_density',
  'clue_overlap',
] as const;
export type NumericDimension = (typeof NUMERIC_DIMENSIONS)[number];
export const DIMENSIONS = NUMERIC_DIMENSIONS;
export type Dimension = (typeof DIMENSIONS)[number];

export const TIE_RULE =
  'mean band score (easy 0, medium 1, hard 2) over the dimensions that vote for the task (null values left out): below 2/3 easy, above 4/3 hard, otherwise (2/3 and 4/3 included) medium; no votes: medium. The need for clarification is a separate axis, never a vote';

const CONDITION = /^\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;

export interface Condition {
  op: '<' | '<=' | '>' | '>=';
  value: number;
  text: string;
}

export function parseCondition(text: string): Condition | null {
  const m = CONDITION.exec(text);
  return m ? { op: m[1] as Condition['op'], value: Number(m[2]), text: text.trim() } : null;
}

function holds(c: Condition, x: number): boolean {
  switch (c.op) {
    case '<':
      return x < c.value;
    case '<=':
      return x <= c.value;
    case '>':
      return x > c.value;
    case '>=':
      return x >= c.value;
  }
}

const conditionText = z
  .string()
  .refine((s) => parseCondition(s) !== null, { message: "expected a condition such as '< 200' or '>= 0.4'" });
const band = z
  .object({ easy: conditionText, hard: conditionText })
  .strict()
  .superRefine((b, ctx) => {
    const easy = parseCondition(b.easy);
    const hard = parseCondition(b.hard);
    if (!easy || !hard) return;
    const rising = easy.op.startsWith('<');
    const touching = easy.value === hard.value && easy.op.endsWith('=') && hard.op.endsWith('=');
    if (
      rising !== hard.op.startsWith('>') ||
      (rising ? easy.value > hard.value : easy.value < hard.value) ||
      touching
    ) {
      ctx.addIssue({
        code: 'custom',
        message: `easy '${b.easy}' and hard '${b.hard}' must point in opposite directions and not overlap`,
      });
    }
  });

/** Schema of difficulty.bands. */
export const bandsSchema = z
  .object(Object.fromEntries(NUMERIC_DIMENSIONS.map((d) => [d, band])) as Record<NumericDimension, typeof band>)
  .strict();
export type BandsConfig = z.infer<typeof bandsSchema>;

const dimensionName = z
  .string()
  .superRefine((d, ctx) => {
    if (d === 'needs_clarification')
      ctx.addIssue({
        code: 'custom',
        message:
          'needs_clarification is the separate clarification axis, not a difficulty dimension (balancing and the association check use it)',
      });
    else if (!(DIMENSIONS as readonly string[]).includes(d))
      ctx.addIssue({ code: 'custom', message: `expected one of ${DIMENSIONS.join(', ')}` });
  })
  .transform((d) => d as Dimension);

/** Schema of difficulty.dimensions: the dimensions that vote, per task. */
export const dimensionsSchema = z.record(
  z.string(),
  z
    .array(dimensionName)
    .min(1)
    .refine((l) => new Set(l).size === l.length, { message: 'a dimension is listed twice' }),
);
export type DimensionsConfig = z.infer<typeof dimensionsSchema>;

/** The band of one dimension's value; null where the value is null (not measured for the task). */
export function bandOf(bands: BandsConfig, dim: Dimension, m: DifficultyMetrics): Bucket | null {
  const x = m[dim];
  if (x === null) return null;
  const [easy, hard] = conditions(bands[dim]);
  if (holds(easy, x)) return 'easy';
  if (holds(hard, x)) return 'hard';
  return 'medium';
}

const parsed = new WeakMap<object, [Condition, Condition]>();

function conditions(b: { easy: string; hard: string }): [Condition, Condition] {
  let c = parsed.get(b);
  if (!c) {
    c = [parseCondition(b.easy)!, parseCondition(b.hard)!];
    parsed.set(b, c);
  }
  return c;
}

export interface Bucketing {
  bucket: Bucket;
  /** The band of every applicable dimension that has a value. */
  votes: Partial<Record<Dimension, Bucket>>;
}

/** The bucket of a scenario from its metrics. Throws for a task with no dimensions configured. */
export function bucketOf(bands: BandsConfig, dims: DimensionsConfig, m: DifficultyMetrics): Bucketing {
  const list = dims[m.task];
  if (!list)
    throw new RuleError(
      `difficulty.dimensions lists no dimensions for task '${m.task}' (scenario ${m.id}); add the task to configs/difficulty.yaml`,
    );
  const votes: Partial<Record<Dimension, Bucket>> = {};
  const count: Record<Bucket, number> = { easy: 0, medium: 0, hard: 0 };
  for (const d of list) {
    const b = bandOf(bands, d, m);
    if (b === null) continue;
    votes[d] = b;
    count[b] += 1;
  }
  return { bucket: meanBand(count), votes };
}

/** The bucket of a vote count: the third of [0, 2] holding the mean score (easy 0, medium 1, hard 2); medium with no votes. Exact in integers. */
export function meanBand(count: Readonly<Record<Bucket, number>>): Bucket {
  const n = count.easy + count.medium + count.hard;
  if (n === 0) return 'medium';
  const sum3 = 3 * (count.medium + 2 * count.hard); // 3·Σscore compared with 2n and 4n: mean < 2/3 ⇔ 3Σ < 2n
  return sum3 < 2 * n ? 'easy' : sum3 > 4 * n ? 'hard' : 'medium';
}
