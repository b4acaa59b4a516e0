// ctx.hasInput(name): a rule with an optional input group asks whether its target declares it,
// instead of catching the contract error ctx.inputs() throws for an undeclared group.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { defineRule } from '../../packages/engine/src/api/index.ts';
import { runRuleUnderContract } from '../helpers/rule-context.ts';

const seen: Record<string, boolean> = {};
const probe = defineRule({
  name: 'probe',
  version: 1,
  run(ctx) {
    for (const g of ['table', 'pool', 'toString', 'constructor']) seen[g] = ctx.hasInput(g);
    assert.throws(() => ctx.inputs('table'), /declares no input group 'table'/);
    fs.writeFileSync(ctx.output('out'), String(ctx.inputs('pool').length));
  },
});

test('hasInput is true exactly for the groups the target declares, including an empty one', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-has-input-'));
  try {
    await runRuleUnderContract(probe, {
      params: {},
      inputs: { pool: [] },
      outputs: { out: 'out.txt' },
      outDir: dir,
      root: dir,
    });
    assert.deepEqual(seen, { table: false, pool: true, toString: false, constructor: false });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
