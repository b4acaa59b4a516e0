// The body of reports/rc1/difficulty_report.json (the engine adds target, profile, pass, checks):
// the definitions, and for the pool (every scenario's metrics) and the balanced pool: bucket counts
// and shares overall and per task, the task mix, each metric's n/min/p10/p50/p90/max/mean and
// histogram, the clue_overlap median per bucket and the ambiguity flag counts.
import { ASSOCIATION_DEFINITION, association } from './association.ts';
import { BUCKETS, NUMERIC_DIMENSIONS, TIE_RULE, type BandsConfig, type DimensionsConfig, DIMENSIONS } from './bands.ts';
import { bucketShares, clueMedians, type Scored } from './gate.ts';
import { AMBIGUITY_FLAGS, METRIC_DEFINITIONS, type DifficultyMetrics } from './metrics.ts';
import { histogram, summarise, type Histogram, type Summary } from './stats.ts';

const REPORTED = [
  'len_tokens',
  'turns',
  'tool_hops',
  'hops',
  'distractors',
  'entities',
  'ops_numeric',
  'connector_density',
  'coref_pronouns',
  'clue_overlap',
] as const;
type Reported = (typeof REPORTED)[number];

/** Why configs/difficulty.yaml leaves a dimension out of a task's vote (reported with the definitions). */
export const NOT_APPLICABLE_REASONS: Record<string, string> = {
  '*.needs_clarification':
    'the separate clarification axis: balanced beside the bucket and gated for association with it, never a vote',
  '*.turns / entities / connector_density / coref_pronouns':
    "what a clarification exchange (two turns) or a template's wording changes, not the reasoning the item needs",
  'gsm8k.len_tokens':
    'every GSM8K scenario is under 200 Qwen3 tokens: the band is easy for all and would only shift the mean',
  'gsm8k.distractors, gsm8k.clue_overlap': 'no context documents (clue_overlap is null)',
  'hotpotqa.hops': 'every HotpotQA question needs its two supporting paragraphs: 2 for all',
  'hotpotqa.ops_numeric':
    'answers are read from two articles (a span, or yes/no); no calculator is offered and the reference computes nothing, so only comparison words would be counted',
  'hotpotqa.tool_hops': 'the wiki look-ups of the supporting paragraphs: the same count as hops',
  'strategyqa.len_tokens': 'under 200 Qwen3 tokens for all but a few items (no context beyond its facts)',
  'strategyqa.distractors': 'every fact supports the answer: 0 for all',
  'strategyqa.ops_numeric': 'no calculator: only comparison and date words in the decomposition would be counted',
  'strategyqa.tool_hops':
    'the reference answers from its facts without any tool call, so the count is 0 by construction, not a property of the item',
};

/** Histogram bin width per metric. */
export const BIN_WIDTH: Record<Reported, number> = {
  len_tokens: 100,
  turns: 1,
  tool_hops: 1,
  hops: 1,
  distractors: 1,
  entities: 1,
  ops_numeric: 1,
  connector_density: 1,
  coref_pronouns: 1,
  clue_overlap: 0.05,
};

/** Each reported metric's values over the items, in item order, read in one pass (each property read at its own site). */
function columns(items: readonly Scored[]): Record<Reported, (number | null)[]> {
  const c: Record<Reported, (number | null)[]> = {
    len_tokens: [],
    turns: [],
    tool_hops: [],
    hops: [],
    distractors: [],
    entities: [],
    ops_numeric: [],
    connector_density: [],
    coref_pronouns: [],
    clue_overlap: [],
  };
  for (const { m } of items) {
    c.len_tokens.push(m.len_tokens);
    c.turns.push(m.turns);
    c.tool_hops.push(m.tool_hops);
    c.hops.push(m.hops);
    c.distractors.push(m.distractors);
    c.entities.push(m.entities);
    c.ops_numeric.push(m.ops_numeric);
    c.connector_density.push(m.connector_density);
    c.coref_pronouns.push(m.coref_pronouns);
    c.clue_overlap.push(m.clue_overlap);
  }
  return c;
}

function distribution(items: readonly Scored[]): Record<string, unknown> {
  const metrics: Record<string, { summary: Summary; histogram: Histogram }> = {};
  const values = columns(items);
  for (const k of REPORTED)
    metrics[k] = { summary: summarise(values[k]), histogram: histogram(values[k], BIN_WIDTH[k]) };
  const flagged = new Map<string, number>(AMBIGUITY_FLAGS.map((f) => [f, 0]));
  let clarify = 0;
  for (const { m } of items) {
    for (const f of AMBIGUITY_FLAGS) if (m.ambiguity_flags.includes(f)) flagged.set(f, flagged.get(f)! + 1);
    if (m.needs_clarification) clarify += 1;
  }
  const flags = Object.fromEntries(flagged);
  const assoc = association(items.map((it) => ({ bucket: it.bucket, clarify: it.m.needs_clarification })));
  return {
    ...bucketShares(items),
    clue_overlap_median_by_bucket: clueMedians(items),
    needs_clarification: clarify,
    clarify_association: assoc,
    ambiguity_flags: flags,
    metrics,
  };
}

function byTask(items: readonly Scored[], tasks: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(tasks.map((t) => [t, distribution(items.filter((it) => it.m.task === t))]));
}

/** Each task's share of a population (balancing per task changes the task mix; not a gate check). */
export function taskShares(
  items: readonly { m: { task: string } }[],
  tasks: readonly string[],
): Record<string, number | null> {
  return Object.fromEntries(
    tasks.map((t) => [
      t,
      items.length === 0 ? null : Math.round((items.filter((it) => it.m.task === t).length / items.length) * 1e4) / 1e4,
    ]),
  );
}

/** The band table as text, per dimension. */
export function bandTable(bands: BandsConfig): Record<string, { easy: string; medium: string; hard: string }> {
  const table: Record<string, { easy: string; medium: string; hard: string }> = {};
  for (const d of NUMERIC_DIMENSIONS)
    table[d] = { easy: bands[d].easy, medium: 'neither easy nor hard', hard: bands[d].hard };
  return table;
}

export interface ReportInput {
  pool: readonly Scored[];
  balanced: readonly Scored[];
  tasks: readonly string[];
  bands: BandsConfig;
  dims: DimensionsConfig;
}

export function difficultyReport(r: ReportInput): Record<string, unknown> {
  const notApplicable = Object.fromEntries(
    r.tasks.map((t) => [t, DIMENSIONS.filter((d) => !(r.dims[t] ?? []).includes(d))]),
  );
  return {
    definitions: {
      metrics: METRIC_DEFINITIONS,
      bands: bandTable(r.bands),
      bucket: TIE_RULE,
      clarify_association: ASSOCIATION_DEFINITION,
      dimensions_per_task: Object.fromEntries(r.tasks.map((t) => [t, r.dims[t] ?? []])),
      not_applicable: notApplicable,
      not_applicable_rule:
        "a dimension left out of a task's list does not vote for that task's buckets; its metric is still measured and reported (clue_overlap is null for a task without supporting text)",
      not_applicable_reasons: NOT_APPLICABLE_REASONS,
      quantiles: 'linear interpolation between order statistics (numpy default); null values left out',
      histograms:
        'fixed-width bins [from, to), only non-empty bins listed; widths: ' +
        REPORTED.map((k) => `${k} ${BIN_WIDTH[k]}`).join(', '),
      populations:
        'pool: every scenario of the metrics file, bucketed with the configured bands; balanced: the scenarios of the balanced pool with the bucket written on each',
    },
    buckets: BUCKETS,
    pool: { all: distribution(r.pool), task_shares: taskShares(r.pool, r.tasks), by_task: byTask(r.pool, r.tasks) },
    balanced: {
      all: distribution(r.balanced),
      task_shares: taskShares(r.balanced, r.tasks),
      by_task: byTask(r.balanced, r.tasks),
    },
  };
}

/** Tasks in order of first appearance, then sorted (stable, locale-free). */
export function tasksOf(metrics: readonly DifficultyMetrics[]): string[] {
  return [...new Set(metrics.map((m) => m.task))].sort();
}
