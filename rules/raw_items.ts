// raw_items (docs/rc1.md): the raw data files loaded once. Reads, parses and checks every data file
// of the `raw` inputs (.jsonl, .json, .parquet; SOURCE.md and other files are passed over) as
// loadSources does, merging duplicates, and writes the result with each file's path, sha256 and size
// as one JSON document (lib/data/raw-items.ts). shadow_set, seed_pool and pool_validation read it
// instead of loading the raw files each (~0.3–0.4 s apiece). Param `data.on_error`: 'fail' stops at
// the first malformed record, naming its file, line and field; 'skip' leaves it out, counted and
// listed. The output is byte-identical for the same files and params.
import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineRule, RuleError } from 'rc1-build';
import { loadRawItems, rawItemsText } from '../lib/data/index.ts';

export default defineRule({
  name: 'raw_items',
  version: 1,
  params: z.object({ data: z.object({ on_error: z.enum(['fail', 'skip']) }).strict() }),
  async run(ctx) {
    const loaded = await loadRawItems(ctx.inputs('raw'), ctx.params.data.on_error, ctx.root);
    if (loaded.inputs.length === 0)
      throw new RuleError('raw_items: the `raw` inputs hold no .jsonl, .json or .parquet file');
    for (const issue of loaded.issues.slice(0, 5)) ctx.log(`skipped: ${issue.message}`);
    if (loaded.skipped > 5) ctx.log(`skipped ${loaded.skipped - 5} more malformed records`);
    await writeFile(ctx.output('items'), rawItemsText(loaded));
    const tasks = loaded.files.map((f) => `${f.file}: ${f.items}`).join(', ');
    return {
      summary: `${loaded.items.length} items from ${loaded.inputs.length} files (${tasks}); ${loaded.duplicates} duplicates merged, ${loaded.skipped} malformed records skipped`,
    };
  },
});
