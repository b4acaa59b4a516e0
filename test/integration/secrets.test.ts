// Secrets (API keys) declared with `secrets:` reach the rule but never a log, the console, the
// trace, the manifest or a report, and rotating one rebuilds nothing.
//   (none) --> uses_key
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { TestRig } from '../helpers/rig.ts';
import { secretForms } from '../../packages/engine/src/util/redact-secrets.ts';

function allFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
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
    assert.ok(
      rotated.events.every((e) => e.event !== 'start'),
      'rotating a secret rebuilds nothing',
    );
    rig.run(['--force', 'uses_key'], { JUDGE_API_KEY: KEY, FAIL_WITH_KEY: '1' });
    const failed = rig.run(['--force', 'uses_key'], { JUDGE_API_KEY: KEY, FAIL_WITH_KEY: '1' });
    for (const out of [r.stdout, r.stderr, failed.stdout, failed.stderr]) assert.ok(!out.includes(KEY));
    for (const file of allFiles(rig.dir)) assert.ok(!fs.readFileSync(file).includes(KEY), `${file} holds the key`);
  } finally {
    rig.cleanup();
  }
});

test('a key with quotes, backslashes, + / = is redacted in every encoding from the console, trace, logs, error report and failpack', () => {
  const KEY = 'sk-"q"\\b+p/s=e-0123456789abcdef';
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'leaky', rule: 'rules/leaky.ts', outputs: ['out/l.txt'], secrets: ['JUDGE_API_KEY'] })] });
`,
    'rules/leaky.ts': `import { defineRule } from 'rc1-build';
export default defineRule({ name: 'leaky', version: 1, run(ctx) {
  const key = ctx.env.JUDGE_API_KEY ?? '';
  ctx.log('json ' + JSON.stringify({ authorization: 'Bearer ' + key }));
  ctx.log('url https://judge.example/v1?key=' + encodeURIComponent(key));
  ctx.log('form ' + new URLSearchParams({ key }).toString());
  ctx.log('basic Authorization: Basic ' + Buffer.from('user:' + key).toString('base64'));
  console.error('stderr ' + Buffer.from(key).toString('base64url'));
  throw new Error('401 from the judge: ' + JSON.stringify({ error: { message: 'Incorrect API key provided: ' + key } }));
}});
`,
  });
  try {
    const r = rig.run(['-v'], { JUDGE_API_KEY: KEY });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /Basic \S*\*\*\*/);
    const pack = rig.run(['failpack'], { JUDGE_API_KEY: KEY });
    assert.equal(pack.code, 0, pack.stdout + pack.stderr);
    const tgz = /(reports\/build\/FAIL_\S+\.tgz)/.exec(pack.stdout)![1]!;
    const unpacked = path.join(rig.dir, 'unpacked');
    fs.mkdirSync(unpacked);
    assert.equal(spawnSync('tar', ['xzf', path.join(rig.dir, tgz), '-C', unpacked]).status, 0);
    const files = allFiles(rig.dir).filter((f) => !f.endsWith('.tgz'));
    assert.ok(
      files.some((f) => f.endsWith('trace.log')) &&
        files.some((f) => /ERROR_.*\.json$/.test(f)) &&
        files.some((f) => f.includes('unpacked/logs/leaky.log')),
      files.join('\n'),
    );
    for (const form of secretForms(KEY)) {
      for (const out of [r.stdout, r.stderr, pack.stdout])
        assert.ok(!out.includes(form), `the console holds ${JSON.stringify(form)}`);
      for (const f of files) assert.ok(!fs.readFileSync(f).includes(form), `${f} holds ${JSON.stringify(form)}`);
    }
  } finally {
    rig.cleanup();
  }
});
