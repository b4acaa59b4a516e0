// Difficulty bands and buckets (seeds/002 §二). Each dimension's band (easy / medium / hard) comes
// from two conditions in configs/difficulty.yaml, written as in the seeds' table ('< 200',
// '>= 5'): easy when the easy condition holds, hard when the hard one holds, medium otherwise.
// needs_clarification is easy when false, hard when true with turns >= hard_min_turns, and medium
// ("mixed") when true with fewer turns. A scenario's bucket is the strict plurality of the bands of
// the dimensions that apply to its task (configs: difficulty.dimensions); any tie is medium.
import { z } from 'zod';
import { RuleError } from '../api/index.ts';
import type { DifficultyMetrics } from './metrics.ts';

export const BUCKETS = ['easy', 'medium', 'hard'] as const;
export type Bucket = (typeof BUCKETS)[number];

export const NUMERIC_DIMENSIONS = ['len_tokens', 'turns', 'tool_hops', 'ops_numeric', 'entities', 'connector_density', 'clue_overlap'] as const;
export type NumericDimension = (typeof NUMERIC_DIMENSIONS)[number];
export const DIMENSIONS = [...NUMERIC_DIMENSIONS, 'needs_clarification'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export const TIE_RULE = 'strict plurality of the applicable dimensions\' bands; any tie (e.g. 3 easy, 3 hard, 1 medium) is medium';

const CONDITION = /^\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;

export interface Condition { op: '<' | '<=' | '>' | '>='; value: number; text: string }

export function parseCondition(text: string): Condition | null {
  const m = CONDITION.exec(text);
  return m ? { op: m[1] as Condition['op'], value: Number(m[2]), text: text.trim() } : null;
}

function holds(c: Condition, x: number): boolean {
  switch (c.op) {
    case '<': return x < c.value;
    case '<=': return x <= c.value;
    case '>': return x > c.value;
    case '>=': return x >= c.value;
  }
}

const conditionText = z.string().refine((s) => parseCondition(s) !== null, { message: "expected a condition such as '< 200' or '>= 0.4'" });
const band = z.object({ easy: conditionText, hard: conditionText }).strict().superRefine((b, ctx) => {
  const easy = parseCondition(b.easy);
  const hard = parseCondition(b.hard);
  if (!easy || !hard) return;
  const rising = easy.op.startsWith('<');
  const touching = easy.value === hard.value && easy.op.endsWith('=') && hard.op.endsWith('=');
  if (rising !== hard.op.startsWith('>') || (rising ? easy.value > hard.value : easy.value < hard.value) || touching) {
    ctx.addIssue({ code: 'custom', message: `easy '${b.easy}' and hard '${b.hard}' must point in opposite directions and not overlap` });
  }
});

/** Schema of difficulty.bands. */
export const bandsSchema = z.object({
  ...Object.fromEntries(NUMERIC_DIMENSIONS.map((d) => [d, band])) as Record<NumericDimension, typeof band>,
  needs_clarification: z.object({ hard_min_turns: z.number().int().nonnegative() }).strict(),
}).strict();
export type BandsConfig = z.infer<typeof bandsSchema>;

/** Schema of difficulty.dimensions: the dimensions that vote, per task. */
export const dimensionsSchema = z.record(z.string(), z.array(z.enum(DIMENSIONS)).min(1)
  .refine((l) => new Set(l).size === l.length, { message: 'a dimension is listed twice' }));
export type DimensionsConfig = z.infer<typeof dimensionsSchema>;

/** The band of one dimension's value; null where the value is null (not measured for the task). */
export function bandOf(bands: BandsConfig, dim: Dimension, m: DifficultyMetrics): Bucket | null {
  if (dim === 'needs_clarification') {
    if (!m.needs_clarification) return 'easy';
    return m.turns >= bands.needs_clarification.hard_min_turns ? 'hard' : 'medium';
  }
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
  if (!list) throw new RuleError(`difficulty.dimensions lists no dimensions for task '${m.task}' (scenario ${m.id}); add the task to configs/difficulty.yaml`);
  const votes: Partial<Record<Dimension, Bucket>> = {};
  const count: Record<Bucket, number> = { easy: 0, medium: 0, hard: 0 };
  for (const d of list) {
    const b = bandOf(bands, d, m);
    if (b === null) continue;
    votes[d] = b;
    count[b] += 1;
  }
  return { bucket: plurality(count), votes };
}

/** The band with strictly the most votes; medium on any tie (and with no votes). */
export function plurality(count: Readonly<Record<Bucket, number>>): Bucket {
  const top = Math.max(count.easy, count.medium, count.hard);
  const leaders = BUCKETS.filter((b) => count[b] === top);
  return leaders.length === 1 ? leaders[0]! : 'medium';
}
