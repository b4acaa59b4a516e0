// difficulty_metrics (docs/rc1.md): one line of difficulty metrics per scenario of the
// seed pool, in pool order — id, task, len_tokens (Qwen3 BPE), turns, tool_hops, entities,
// ops_numeric, connector_density, coref_pronouns, clue_overlap, ambiguity_flags,
// needs_clarification; the definitions are METRIC_DEFINITIONS in lib/difficulty/metrics.ts and are
// repeated in the difficulty report. Input groups: `pool`, one scenarios JSONL; `table` (optional;
// the shipped pipeline declares it), Qwen3's BPE table, the tokenizer_table output: the threads count
// with it instead of each loading the tokenizer package, the same counts; without it they load the
// package. Output `metrics` (JSONL). Params: difficulty.metrics. The output is byte-identical for the same pool and params,
// whatever difficulty.metrics.workers is. The pool is streamed; on several threads (this one and
// worker_threads), each source item's scenarios go to one thread (lib/difficulty/metrics-workers.ts).
import { stat } from 'node:fs/promises';
import { defineRule } from 'rc1-build';
import { displayPath } from '../lib/data/index.ts';
import { metricsParams, writeMetrics } from '../lib/difficulty/index.ts';

export default defineRule({
  name: 'difficulty_metrics',
  version: 1,
  params: metricsParams,
  async run(ctx) {
    const pool = ctx.input('pool');
    const { multi_entity_min: multiEntityMin, workers } = ctx.params.difficulty.metrics;

    const t0 = performance.now();
    const size = (await stat(pool)).size;
    const s = await writeMetrics({
      pool,
      file: displayPath(pool, ctx.root),
      out: ctx.output('metrics'),
      multiEntityMin,
      workers,
      ...(ctx.hasInput('table') ? { table: ctx.input('table') } : {}),
      signal: ctx.signal,
      progress: (done) => ctx.progress(done, size, 'bytes'),
    });
    ctx.progress(size, size, 'bytes');
    ctx.log(
      `${s.scenarios} scenarios in ${Math.round(performance.now() - t0)} ms on ${s.workers} thread(s); Qwen3 counting: ${s.mode}`,
    );
    const tasks = Object.keys(s.perTask)
      .sort()
      .map((t) => `${t} ${s.perTask[t]}`)
      .join(', ');
    const mean = s.scenarios === 0 ? 0 : Math.round(s.tokens / s.scenarios);
    return { summary: `${s.scenarios} scenarios (${tasks || 'none'}); mean ${mean} Qwen3 tokens` };
  },
});
