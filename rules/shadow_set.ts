// shadow_set (RC1.md): 245 held-aside evaluation scenarios, stratified by task, drawn with a fixed
// seed from the raw datasets, plus reports/rc1/sample_manifest.json, whose sorted `source_ids`
// are the items the seed pool must never use. Inputs: the `raw` group (data files; other files
// such as SOURCE.md are passed over). Params: `shadow` {n, seed, stratify} and `data` {on_error}.
// Both outputs are byte-identical for the same inputs and params: nothing in them depends on the
// clock, the machine or the order the files are listed in.
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineRule, RuleError } from 'rc1-build';
import {
  buildScenario, dataFileFormat, displayPath, loadSources, NotEnoughDataError, plainRender, selectShadow, shadowScenarioId, stratifiedQuotas,
  toJsonl, TASKS,
} from 'rc1-build/data';

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
  version: 1,
  params: z.object({
    shadow: z.object({
      n: z.number().int().positive(),
      seed: z.number().int(),
      stratify: z.record(z.string(), z.number()),
    }).strict(),
    data: z.object({ on_error: z.enum(['fail', 'skip']) }).strict(),
  }),
  async run(ctx) {
    const { shadow, data } = ctx.params;
    const files = ctx.inputs('raw').filter((f) => dataFileFormat(f) !== null).sort();
    if (files.length === 0) throw new RuleError('shadow_set: the `raw` inputs hold no .jsonl, .json or .parquet file');

    const loaded = await loadSources(files, { onError: data.on_error, root: ctx.root });
    ctx.signal.throwIfAborted();
    for (const issue of loaded.issues.slice(0, 5)) ctx.log(`skipped: ${issue.message}`);
    if (loaded.skipped > 5) ctx.log(`skipped ${loaded.skipped - 5} more malformed records (the first ${ISSUES_LISTED} are listed in ${MANIFEST})`);

    let selection: ReturnType<typeof selectShadow>;
    try {
      selection = selectShadow(loaded.items, { ...shadow, rng: (seed) => ctx.rng(seed) });
    } catch (e) {
      if (!(e instanceof NotEnoughDataError)) throw e;
      const dirs = [...new Set(files.map((f) => displayPath(dirname(f), ctx.root)))].filter((d) => d.includes(e.task));
      throw new RuleError(`${e.message}${loaded.skipped ? ` (${loaded.skipped} malformed records were skipped)` : ''}\n  hint: add ${e.task} records to ${dirs.length ? dirs.join(', ') : `the raw inputs (a ${e.task} file matched by the target's \`raw\` globs)`}, or lower shadow.n (${e.n}) or shadow.stratify.${e.task} in configs/`);
    }
    const scenarios = selection.items.map((item) => buildScenario(item, plainRender(item, shadowScenarioId(item))));
    const jsonl = toJsonl(scenarios);
    await write(ctx.output(SCENARIOS), jsonl);
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
    const manifest = {
      target: 'shadow_set',
      n: shadow.n,
      seed: shadow.seed,
      stratify: Object.fromEntries(Object.keys(shadow.stratify).sort().map((k) => [k, shadow.stratify[k]])),
      rounding: 'largest remainder: floor(n*w/sum(w)) per task, leftover seats to the largest fractional parts (ties: larger weight, then task name)',
      selection: 'items sorted by (task, source_id), shuffled per task with ctx.rng (mulberry32) seeded by FNV-1a("<seed>:<task>"), first quota taken',
      counts: Object.fromEntries(Object.keys(quotas).map((k) => [k, quotas[k]])),
      available: Object.fromEntries(TASKS.map((t) => [t, selection.available[t]])),
      output: { path: SCENARIOS, sha256: sha256(jsonl), scenarios: scenarios.length },
      inputs,
      on_error: data.on_error,
      skipped: loaded.skipped,
      duplicates_merged: loaded.duplicates,
      issues: loaded.issues.slice(0, ISSUES_LISTED).map((i) => i.message),
      source_ids: selection.items.map((i) => i.source_id).sort(),
    };
    await write(ctx.output(MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    ctx.progress(2, 2, 'outputs');

    const counts = TASKS.filter((t) => selection.counts[t] > 0).map((t) => `${t} ${selection.counts[t]}`).join(', ');
    const notes = [`${loaded.skipped} skipped`, `${loaded.duplicates} duplicates merged`].join(', ');
    return { summary: `${scenarios.length} scenarios (${counts}; ${notes})` };
  },
});
