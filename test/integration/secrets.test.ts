// Secrets (API keys) declared with `secrets:` reach the rule but never a log, the console, the
// trace, the manifest or a report, and rotating one rebuilds nothing.
//   (none) --> uses_key
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TestRig } from '../helpers/rig.ts';

function allFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

test('a secret reaches the rule but never a file the build writes or its output, and rotating it rebuilds nothing', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'uses_key', rule: 'rules/k.ts', outputs: ['out/k.txt'], secrets: ['JUDGE_API_KEY'] })] });
`,
    'rules/k.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'k', version: 1, run(ctx) {
  const key = ctx.env.JUDGE_API_KEY ?? '';
  ctx.log('calling the judge with key ' + key);
  console.log('stdout also mentions ' + key);
  fs.writeFileSync(ctx.output('out/k.txt'), 'key length ' + key.length + '\\n');
  if (process.env.FAIL_WITH_KEY) throw new Error('401 for key ' + key);
  return { summary: 'used ' + key };
}});
`,
  });
  const KEY = 'sk-test-1234567890abcdef';
  try {
    const r = rig.run(['-v'], { JUDGE_API_KEY: KEY });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/k.txt'), `key length ${KEY.length}\n`);
    assert.match(r.stdout, /calling the judge with key \*\*\*/);
    const f = rig.run([], { JUDGE_API_KEY: KEY, FAIL_WITH_KEY: '1' });
    assert.equal(f.code, 0, 'FAIL_WITH_KEY is not declared, so it changes nothing');
    const rotated = rig.run(['--json'], { JUDGE_API_KEY: 'sk-another-key-000000' });
    assert.ok(rotated.events.every((e) => e.event !== 'start'), 'rotating a secret rebuilds nothing');
    rig.run(['--force', 'uses_key'], { JUDGE_API_KEY: KEY, FAIL_WITH_KEY: '1' });
    const failed = rig.run(['--force', 'uses_key'], { JUDGE_API_KEY: KEY, FAIL_WITH_KEY: '1' });
    for (const out of [r.stdout, r.stderr, failed.stdout, failed.stderr]) assert.ok(!out.includes(KEY));
    for (const file of allFiles(rig.dir)) assert.ok(!fs.readFileSync(file).includes(KEY), `${file} holds the key`);
  } finally { rig.cleanup(); }
});
