// shadow_set: 245 held-aside evaluation scenarios, stratified by task (shadow.stratify), by the
// need for clarification (the pool's clarify_rate) and by reasoning difficulty band (the balanced
// pool's target shares), rendered by the seed pool's generator from source items the seed pool
// then never uses (lib/pool/shadow-set.ts says how). Outputs:
//   data/shadow_eval_245.jsonl   one scenario per line, sorted by (task, source_id). Record fields
//       a consumer (shadow run, ppo_eval) reads, beside the scenario's own:
//         difficulty           "easy" | "medium" | "hard": the reasoning band (the pool's band rules)
//         needs_clarification  true for an under-specified rendering (a detail left out, revealed
//                              in `clarification` when asked); false otherwise
//   reports/rc1/sample_manifest.json   the held-out `source_ids` (sorted) and `content_keys` (the
//       normalised questions' hashes) the seed pool must never use; per-cell quotas; the counts
//       of every split evaluation reports, with `n/a` for a split below shadow.min_split_n.
// Inputs: `raw` (data files), `v2` (pack_v2), `table` (optional; the shipped pipeline declares it:
// Qwen3's BPE table, the tokenizer_table output, to count tokens with instead of loading the
// tokenizer package; the same counts). Params: shadow, data, pool, templates, and the
// difficulty bands, dimensions, balance target and metrics settings. Both outputs are
// byte-identical for the same inputs and params (nothing depends on the clock or the file order).
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineRule, RuleError } from 'rc1-build';
import {
  dataFileFormat,
  displayPath,
  loadSources,
  NotEnoughDataError,
  questionKey,
  stratifiedQuotas,
  TASKS,
} from '../lib/data/index.ts';
import {
  balanceSchema,
  bandsSchema,
  dimensionsSchema,
  loadQwen3,
  loadQwen3Table,
  metricsSchema,
  MetricsComputer,
  NeedsQwen3Package,
  type Qwen3TableCounter,
} from '../lib/difficulty/index.ts';
import { loadPack, TemplatesParamsSchema } from '../lib/templates/index.ts';
import {
  buildShadowSet,
  PoolBuilder,
  PoolParamsSchema,
  poolConfig,
  shadowSplits,
  SPLITS_DEFINITION,
} from '../lib/pool/index.ts';

const SCENARIOS = 'data/shadow_eval_245.jsonl';
const MANIFEST = 'reports/rc1/sample_manifest.json';
/** Issues listed in the manifest; the count always covers all of them. */
const ISSUES_LISTED = 50;

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

export default defineRule({
  name: 'shadow_set',
  version: 2,
  params: z.object({
    shadow: z
      .object({
        n: z.number().int().positive(),
        seed: z.number().int(),
        stratify: z.record(z.string(), z.number()),
        /** A split of the set with fewer scenarios is reported as n/a by evaluation. */
        min_split_n: z.number().int().positive(),
      })
      .strict(),
    data: z.object({ on_error: z.enum(['fail', 'skip']) }).strict(),
    pool: PoolParamsSchema,
    templates: TemplatesParamsSchema,
    difficulty: z
      .object({ bands: bandsSchema, dimensions: dimensionsSchema, balance: balanceSchema, metrics: metricsSchema })
      .strict(),
  }),
  async run(ctx) {
    const { shadow, data, pool, templates, difficulty } = ctx.params;
    const files = ctx
      .inputs('raw')
      .filter((f) => dataFileFormat(f) !== null)
      .sort();
    if (files.length === 0) throw new RuleError('shadow_set: the `raw` inputs hold no .jsonl, .json or .parquet file');

    const loaded = await loadSources(files, { onError: data.on_error, root: ctx.root });
    ctx.signal.throwIfAborted();
    for (const issue of loaded.issues.slice(0, 5)) ctx.log(`skipped: ${issue.message}`);
    if (loaded.skipped > 5)
      ctx.log(
        `skipped ${loaded.skipped - 5} more malformed records (the first ${ISSUES_LISTED} are listed in ${MANIFEST})`,
      );
    const pack = await loadPack(ctx.inputs('v2'), ctx.root);
    if (pack.name !== templates.pack)
      throw new RuleError(
        `shadow_set: the v2 inputs are pack ${JSON.stringify(pack.name)}, but templates.pack is ${JSON.stringify(templates.pack)}`,
      );

    const config = { ...poolConfig(pool), seed: shadow.seed, idPrefix: 'shadow' };
    const counter: Qwen3TableCounter = ctx.hasInput('table')
      ? await loadQwen3Table(ctx.input('table'))
      : { ...(await loadQwen3()), async attachPackage() {} };
    // A pure function of the inputs: where the table counter meets a text only the package counts
    // (an added token, a piece outside the table), it is built again, from scratch, with the package attached.
    const select = () =>
      buildShadowSet(
        loaded.items,
        new PoolBuilder(loaded.items, new Set(), pack, config, (seed) => ctx.rng(seed)),
        new MetricsComputer(counter, { multiEntityMin: difficulty.metrics.multi_entity_min }),
        {
          n: shadow.n,
          seed: shadow.seed,
          stratify: shadow.stratify,
          clarifyRate: pool.clarify_rate,
          bandShares: difficulty.balance.target,
          variants: config.variants ?? {},
          bands: difficulty.bands,
          dims: difficulty.dimensions,
        },
        (seed) => ctx.rng(seed),
      );
    let result: ReturnType<typeof select>;
    try {
      try {
        result = select();
      } catch (e) {
        if (!(e instanceof NeedsQwen3Package)) throw e;
        await counter.attachPackage();
        result = select();
      }
    } catch (e) {
      if (e instanceof NotEnoughDataError) {
        const dirs = [...new Set(files.map((f) => displayPath(dirname(f), ctx.root)))].filter((d) =>
          d.includes(e.task),
        );
        throw new RuleError(
          `${e.message}${loaded.skipped ? ` (${loaded.skipped} malformed records were skipped)` : ''}\n  hint: add ${e.task} records to ${dirs.length ? dirs.join(', ') : `the raw inputs (a ${e.task} file matched by the target's \`raw\` globs)`}, or lower shadow.n (${e.n}) or shadow.stratify.${e.task} in configs/`,
        );
      }
      if (e instanceof RangeError) throw new RuleError(e.message);
      throw e;
    }
    const jsonl = result.scenarios.map((s) => `${JSON.stringify(s)}\n`).join('');
    await write(ctx.output('scenarios'), jsonl);
    ctx.progress(1, 2, 'outputs');

    const inputs = [];
    for (const file of files) {
      const bytes = await readFile(file);
      const summary = loaded.files.find((s) => s.file === displayPath(file, ctx.root));
      inputs.push({
        path: displayPath(file, ctx.root),
        sha256: sha256(bytes),
        bytes: bytes.length,
        task: summary?.task ?? null,
        records: summary?.records ?? 0,
        items: summary?.items ?? 0,
        skipped: summary?.skipped ?? 0,
      });
    }
    const quotas = stratifiedQuotas(shadow.n, shadow.stratify);
    const byId = new Map(loaded.items.map((i) => [`${i.task}/${i.source_id}`, i]));
    const tasks = TASKS.filter((t) => (quotas[t] ?? 0) > 0);
    const splits = shadowSplits(result.scenarios, tasks, shadow.min_split_n);
    const manifest = {
      target: 'shadow_set',
      n: shadow.n,
      seed: shadow.seed,
      stratify: Object.fromEntries(
        Object.keys(shadow.stratify)
          .sort()
          .map((k) => [k, shadow.stratify[k]]),
      ),
      clarify_rate: pool.clarify_rate,
      band_shares: difficulty.balance.target,
      rounding:
        'largest remainder: task quotas of n by stratify; per task round(quota * clarify_rate) need clarification; bands of each stratum by largest remainder over band_shares',
      selection:
        'per task, items in a shuffle seeded by FNV-1a("<seed>:<task>"); each rendered by the seed pool generator for a stratum with room (clarification first with probability clarify_rate, variants at pool.variants shares, rng seeded by "<seed>:<task>/<source_id>") and kept when its band\'s cell has room; every source item at most once',
      counts: Object.fromEntries(Object.keys(quotas).map((k) => [k, quotas[k]])),
      cells: result.quotas,
      items_tried: result.tried,
      available: result.available,
      splits: { min_split_n: shadow.min_split_n, definition: SPLITS_DEFINITION, counts: splits },
      output: { path: SCENARIOS, sha256: sha256(jsonl), scenarios: result.scenarios.length },
      inputs,
      on_error: data.on_error,
      skipped: loaded.skipped,
      duplicates_merged: loaded.duplicates,
      duplicates: loaded.duplicateRecords.slice(0, ISSUES_LISTED),
      issues: loaded.issues.slice(0, ISSUES_LISTED).map((i) => i.message),
      source_ids: result.scenarios.map((s) => s.source_id).sort(),
      content_keys: result.scenarios.map((s) => questionKey(byId.get(`${s.task}/${s.source_id}`)!)).sort(),
    };
    await write(ctx.output('manifest'), `${JSON.stringify(manifest, null, 2)}\n`);
    ctx.progress(2, 2, 'outputs');

    const counts = tasks.map((t) => `${t} ${quotas[t]}`).join(', ');
    const clarify = result.scenarios.filter((s) => s.needs_clarification).length;
    const bands = ['easy', 'medium', 'hard']
      .map((b) => `${b} ${result.scenarios.filter((s) => s.difficulty === b).length}`)
      .join(' / ');
    const na = splits.filter((s) => s.status === 'n/a').length;
    return {
      summary: `${result.scenarios.length} scenarios (${counts}; ${bands}; ${clarify} need clarification; ${na} of ${splits.length} splits below ${shadow.min_split_n}; ${loaded.duplicates} duplicates merged)`,
    };
  },
});
