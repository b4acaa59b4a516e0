// balanced_pool: buckets every scenario easy / medium / hard by its REASONING features (the mean
// band score of the dimensions that vote for its task: lib/difficulty/bands.ts; the need for
// clarification is never a vote) and downsamples each task over both axes — the buckets to the
// target shares (difficulty.balance.target) within each clarification stratum, the strata in the
// pool's clarification share — with no duplication (BALANCE_METHOD in lib/difficulty/balance.ts).
// Inputs: `pool` (the scenarios JSONL) and `metrics` (its metrics JSONL, same order).
//
// Outputs in order: [0] the balanced pool JSONL — the kept scenario lines in pool order, each
// with `"difficulty"` appended. Record fields a consumer (training, evaluation) reads:
//   difficulty           "easy" | "medium" | "hard": the reasoning band (hops, arithmetic steps,
//                        distractor paragraphs, clue overlap, Qwen3 length — per task, see
//                        configs/difficulty.yaml difficulty.dimensions)
//   needs_clarification  true | false: the separate clarification axis (the scenario is an
//                        under-specified rendering; `clarification` holds what the user reveals)
// [1] a JSON report of what was kept and dropped per task, stratum and bucket.
// Params: difficulty.bands, difficulty.dimensions, difficulty.balance.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import { DataError, describeValue, displayPath, type Location } from '../lib/data/index.ts';
import {
  BALANCE_METHOD,
  BUCKETS,
  ByteWriter,
  TIE_RULE,
  balanceParams,
  bucketOf,
  blankRange,
  lineIdOf,
  normaliseShares,
  planBalance,
  readLineRanges,
  readMetrics,
  withDifficulty,
  withDifficultyBytes,
  type Bucket,
} from '../lib/difficulty/index.ts';

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

export default defineRule({
  name: 'balanced_pool',
  version: 1,
  params: balanceParams,
  async run(ctx) {
    const { bands, dimensions, balance } = ctx.params.difficulty;
    const pool = ctx.input('pool');
    const metricsFile = ctx.input('metrics');

    const metrics = await readMetrics(metricsFile, ctx.root);
    const buckets: Bucket[] = metrics.map((m) => bucketOf(bands, dimensions, m).bucket);
    const plan = planBalance(
      metrics.map((m, i) => ({ task: m.task, bucket: buckets[i]!, clarify: m.needs_clarification })),
      balance,
      ctx.rng,
    );
    ctx.progress(1, 3, 'steps');

    const file = displayPath(pool, ctx.root);
    // Lines are copied as bytes (the kept ones with the bucket appended); withDifficulty() on the
    // decoded text where the bytes cannot be used as they are (withDifficultyBytes says which).
    const writer = new ByteWriter(ctx.output('pool'));
    const nl = Buffer.from('\n');
    let i = 0;
    try {
      for await (const { buf, start, end, line } of readLineRanges(pool)) {
        if (blankRange(buf, start, end)) continue;
        const at: Location = { file, line, unit: 'line' };
        const id = lineIdOf(buf, start, end, at);
        const m = metrics[i];
        if (m === undefined || m.id !== id) {
          throw new DataError(
            at,
            'id',
            `the id of line ${i + 1} of ${displayPath(metricsFile, ctx.root)} (the metrics must be of this pool, in its order)`,
            describeValue(m?.id ?? '(no more metrics lines)'),
          );
        }
        if (plan.keep[i]) {
          const bytes = withDifficultyBytes(buf, start, end, buckets[i]!);
          if (bytes) for (const b of bytes) writer.write(b);
          else writer.write(withDifficulty(buf.toString('utf8', start, end), buckets[i]!, at));
          writer.write(nl);
        }
        i += 1;
        if (i % 5000 === 0) ctx.signal.throwIfAborted();
      }
    } finally {
      writer.close();
    }
    if (i !== metrics.length)
      throw new RuleError(
        `balanced_pool: ${displayPath(metricsFile, ctx.root)} has ${metrics.length} lines but the pool has ${i} scenarios; rebuild the metrics`,
      );
    ctx.progress(2, 3, 'steps');

    const total = (key: 'available' | 'kept' | 'dropped') =>
      Object.fromEntries(BUCKETS.map((b) => [b, Object.values(plan.tasks).reduce((a, t) => a + t[key][b], 0)]));
    const kept = plan.keep.filter(Boolean).length;
    const report = {
      target: 'balanced_pool',
      pool: file,
      metrics: displayPath(metricsFile, ctx.root),
      output: ctx.outputPath('pool'),
      method: BALANCE_METHOD,
      bucket_rule: TIE_RULE,
      dimensions,
      seed: balance.seed,
      target_shares: normaliseShares(balance.target),
      scenarios: { pool: metrics.length, kept, dropped: metrics.length - kept, duplicated: 0 },
      totals: { available: total('available'), kept: total('kept'), dropped: total('dropped') },
      task_shares: Object.fromEntries(
        Object.entries(plan.tasks).map(([t, p]) => {
          const before = p.available.easy + p.available.medium + p.available.hard;
          return [t, { pool: round4(before / metrics.length), kept: kept === 0 ? null : round4(p.size / kept) }];
        }),
      ),
      tasks: plan.tasks,
    };
    await mkdir(dirname(ctx.output('report')), { recursive: true });
    await writeFile(ctx.output('report'), `${JSON.stringify(report, null, 2)}\n`);
    ctx.progress(3, 3, 'steps');

    const perTask = Object.entries(plan.tasks)
      .map(([t, p]) => `${t} ${p.size}/${p.available.easy + p.available.medium + p.available.hard}`)
      .join(', ');
    return { summary: `kept ${kept} of ${metrics.length} scenarios (${perTask || 'none'}), none duplicated` };
  },
});
