// difficulty_report, a gate: on the balanced pool, overall and per task — bucket shares (easy ≤
// max_easy_share, medium and hard within their ranges), len_tokens / turns / tool_hops at most
// their ceilings, clue_overlap medians of hard and easy items (left out, with the reason, for a
// task without supporting text), and the association between the reasoning bucket and the need
// for clarification (Cramér's V ≤ max_association) in the balanced pool and in the whole pool.
// Inputs: `metrics` (the metrics JSONL) and `balanced` (the balanced pool JSONL: one file, or
// target('balanced_pool', 'pool')). Output: the report, written by the engine from the returned checks and report: definitions,
// histograms and p10/p50/p90 of every metric, bucket counts per task and per clarification
// stratum, the association tables, for the pool and the balanced pool.
// Params: difficulty.bands, difficulty.dimensions, difficulty.gate.
import { defineRule } from 'rc1-build';
import { DataError, describeValue, displayPath, type Location } from '../lib/data/index.ts';
import {
  balancedEntryOf,
  blankRange,
  bucketOf,
  clueNotApplicable,
  difficultyChecks,
  difficultyReport,
  readLineRanges,
  readMetrics,
  reportParams,
  tasksOf,
  type DifficultyMetrics,
  type Scored,
} from '../lib/difficulty/index.ts';

export default defineRule({
  name: 'difficulty_report',
  version: 1,
  params: reportParams,
  async run(ctx) {
    const { bands, dimensions, gate } = ctx.params.difficulty;
    const metricsFile = ctx.input('metrics');
    const balancedFile = ctx.input('balanced');

    const metrics = await readMetrics(metricsFile, ctx.root);
    const byId = new Map<string, DifficultyMetrics>(metrics.map((m) => [m.id, m]));
    const pool: Scored[] = metrics.map((m) => ({ m, bucket: bucketOf(bands, dimensions, m).bucket }));
    const poolBucket = new Map(pool.map((s) => [s.m.id, s.bucket]));
    ctx.progress(1, 3, 'steps');

    const file = displayPath(balancedFile, ctx.root);
    const balanced: Scored[] = [];
    const seen = new Set<string>();
    for await (const { buf, start, end, line } of readLineRanges(balancedFile)) {
      if (blankRange(buf, start, end)) continue;
      const at: Location = { file, line, unit: 'line' };
      const { id, bucket } = balancedEntryOf(buf, start, end, at);
      const m = byId.get(id);
      if (m === undefined)
        throw new DataError(at, 'id', `an id of ${displayPath(metricsFile, ctx.root)}`, describeValue(id));
      if (seen.has(id)) throw new DataError(at, 'id', 'an id not used before in the balanced pool', describeValue(id));
      if (poolBucket.get(id) !== bucket) {
        throw new DataError(
          at,
          'difficulty',
          `${poolBucket.get(id)} (the bucket its metrics give with the configured bands; rebuild balanced_pool)`,
          describeValue(bucket),
        );
      }
      seen.add(id);
      balanced.push({ m, bucket });
    }
    ctx.progress(2, 3, 'steps');

    const tasks = tasksOf(metrics);
    const withClue = new Set(metrics.filter((m) => m.clue_overlap !== null).map((m) => m.task));
    const checks = difficultyChecks(balanced, pool, tasks, dimensions, gate, withClue);
    const report = {
      inputs: { metrics: displayPath(metricsFile, ctx.root), balanced: file },
      thresholds: gate,
      not_applicable: clueNotApplicable(tasks, dimensions, withClue),
      ...difficultyReport({ pool, balanced, tasks, bands, dims: dimensions }),
    };
    ctx.progress(3, 3, 'steps');
    const failed = checks.filter((c) => c.status === 'fail').length;
    const na = checks.filter((c) => c.status === 'n/a').length;
    return {
      checks,
      report,
      summary: `${balanced.length} balanced of ${metrics.length} scenarios; ${failed} of ${checks.length} checks failed, ${na} n/a`,
    };
  },
});
