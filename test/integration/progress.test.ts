// Progress of long rules: events under --json, plain lines every 10 % when not a terminal.
//   (none) --> long
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRig } from '../helpers/rig.ts';

const rig = (): TestRig =>
  new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'long', rule: 'rules/long.ts', outputs: ['out/long.txt'] })] });
`,
    'rules/long.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
export default defineRule({ name: 'long', version: 1, async run(ctx) {
  for (let i = 1; i <= 20; i++) { await pause(15); ctx.progress(i, 20, 'steps'); ctx.log('step ' + i); }
  fs.writeFileSync(ctx.output('out/long.txt'), 'ok');
}});
`,
  });

test('ctx.progress becomes progress events under --json, throttled, ending at the total', () => {
  const r = rig();
  try {
    const res = r.run(['--json']);
    assert.equal(res.code, 0, res.stderr);
    const prog = res.events.filter((e) => e.event === 'progress') as {
      target: string;
      done: number;
      total: number;
      unit: string;
    }[];
    assert.ok(prog.length >= 2 && prog.length <= 20, `${prog.length} progress events`);
    assert.deepEqual(prog.at(-1), { event: 'progress', target: 'long', done: 20, total: 20, unit: 'steps' });
    assert.equal(res.events.filter((e) => e.event === 'log').length, 20);
    assert.equal(r.read('logs/long.log').split('\n').filter(Boolean).length, 20);
  } finally {
    r.cleanup();
  }
});

test('without a terminal, progress is printed as plain lines, at most one per 10 % step', () => {
  const r = rig();
  try {
    const res = r.run([]);
    assert.equal(res.code, 0);
    const lines = res.stdout.split('\n').filter((l) => l.startsWith('progress long'));
    assert.ok(lines.length >= 3 && lines.length <= 11, lines.join('\n'));
    const pcts = lines.map((l) => Number(/ (\d+)% /.exec(l)![1]));
    assert.deepEqual(
      pcts,
      [...new Set(pcts)].sort((a, b) => a - b),
      'strictly increasing',
    );
    assert.ok(pcts.every((p) => p % 10 === 0));
    assert.equal(lines.at(-1), 'progress long 100% (20/20 steps)');
    assert.doesNotMatch(res.stdout + res.stderr, /\x1b\[/, 'no terminal escapes when not a TTY');
  } finally {
    r.cleanup();
  }
});
