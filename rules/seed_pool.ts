// seed_pool (docs/rc1.md): n scenarios rendered from templates/pack_v2 over the raw datasets, never
// from a source item the shadow set holds aside, written as JSONL to the target's one output.
// n is the stage size (ctx.args.n); scenario k is a pure function of (pool params, k, sources),
// so a smaller stage is a prefix of a larger one. See lib/pool/build-pool.ts for how each
// scenario's task, kind (plain / under-specified), item, template, role and style are chosen.
// Inputs: `raw` (data files), `v2` (pack_v2 JSON), `shadow` (the shadow_set outputs; the manifest's
// source_ids and content_keys are excluded), `gates` (earlier gate reports: the engine blocks this target when one
// failed; the rule does not read them). Params: `pool`, `templates`, `data`.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineRule, RuleError } from 'rc1-build';
import { dataFileFormat, loadSources, questionKey, TASKS } from '../lib/data/index.ts';
import { loadPack, TemplatesParamsSchema } from '../lib/templates/index.ts';
import { PoolBuilder, PoolLines, PoolParamsSchema, poolConfig, readShadowSourceIds } from '../lib/pool/index.ts';

const PROGRESS_EVERY = 1000;

export default defineRule({
  name: 'seed_pool',
  version: 1,
  params: z.object({
    pool: PoolParamsSchema,
    templates: TemplatesParamsSchema,
    data: z.object({ on_error: z.enum(['fail', 'skip']) }).strict(),
  }),
  async run(ctx) {
    const { pool, templates, data } = ctx.params;
    const n = ctx.args.n;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
      throw new RuleError(`seed_pool: args.n must be a positive integer (the stage size), got ${JSON.stringify(n)}`);
    }

    const files = ctx
      .inputs('raw')
      .filter((f) => dataFileFormat(f) !== null)
      .sort();
    if (files.length === 0) throw new RuleError('seed_pool: the `raw` inputs hold no .jsonl, .json or .parquet file');
    const loaded = await loadSources(files, { onError: data.on_error, root: ctx.root });
    if (loaded.skipped > 0) ctx.log(`skipped ${loaded.skipped} malformed records (data.on_error: skip)`);
    const pack = await loadPack(ctx.inputs('v2'), ctx.root);
    if (pack.name !== templates.pack)
      throw new RuleError(
        `seed_pool: the v2 inputs are pack ${JSON.stringify(pack.name)}, but templates.pack is ${JSON.stringify(templates.pack)}`,
      );
    const shadow = await readShadowSourceIds(ctx.inputs('shadow'));
    ctx.signal.throwIfAborted();

    // Held aside by id and by content: a shadow question read again under another id is still held aside.
    const excluded = new Set(shadow.ids);
    for (const item of loaded.items) if (shadow.contentKeys.has(questionKey(item))) excluded.add(item.source_id);
    const builder = new PoolBuilder(loaded.items, excluded, pack, poolConfig(pool), (seed) => ctx.rng(seed));
    for (const t of TASKS) {
      const e = builder.stats.eligible[t];
      ctx.log(
        `${t}: ${e.items} items after the shadow set; renderable per kind: ${Object.entries(e.kinds)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
      );
    }

    const path = ctx.output('pool');
    mkdirSync(dirname(path), { recursive: true });
    const lines = new PoolLines(path);
    const counts: Record<string, number> = {};
    let clarify = 0;
    try {
      let k = 0;
      for (const { item, render } of builder.renderings(n)) {
        lines.write(item, render);
        counts[item.task] = (counts[item.task] ?? 0) + 1;
        if (render.needs_clarification) clarify += 1;
        k += 1;
        if (k % PROGRESS_EVERY === 0) {
          ctx.progress(k, n, 'scenarios');
          ctx.signal.throwIfAborted();
        }
      }
    } finally {
      lines.close();
    }
    ctx.progress(n, n, 'scenarios');
    if (builder.stats.fallbacks > 0)
      ctx.log(`${builder.stats.fallbacks} scenarios took another gap or item because the detail showed in the turns`);
    const mix = TASKS.filter((t) => counts[t])
      .map((t) => `${t} ${counts[t]}`)
      .join(', ');
    return {
      summary: `${n} scenarios (${mix}; ${clarify} under-specified; ${builder.stats.excluded} shadow items excluded)`,
    };
  },
});
