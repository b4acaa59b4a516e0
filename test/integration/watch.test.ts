// `rc1-build watch`: edit an input, save, and exactly its dependents rebuild; a rule error is
// survived; Ctrl-C leaves the workspace consistent.
//   src/a.txt --> a --> b --> g (gate) --> after_gate
//   src/c.txt --> c
//   src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestRig, standardRig, collectEvents } from '../helpers/rig.ts';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';

interface Ev {
  event: string;
  target?: string;
  state?: string;
  ok?: boolean;
}

test('watch rebuilds exactly what an edit affects, survives a rule error, and stops cleanly on Ctrl-C', async () => {
  const rig = standardRig();
  const child = rig.spawn(['watch', '--json', '-j', '1']);
  const events = collectEvents<Ev>(child);
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  const waitForWaiting = async (count: number): Promise<void> => {
    for (let i = 0; i < 2400; i++) {
      if (events.filter((e) => e.event === 'watch' && e.state === 'waiting').length >= count) return;
      await sleep(25);
    }
    throw new Error(`watch did not settle (${count}); events: ${JSON.stringify(events.slice(-10))}`);
  };
  const startsSince = (from: number): string[] =>
    events
      .slice(from)
      .filter((e) => e.event === 'start')
      .map((e) => e.target!)
      .sort();
  try {
    await waitForWaiting(1);
    assert.equal(rig.runs().length, 7);
    let mark = events.length;
    rig.write('src/c.txt', 'changed c\n');
    await waitForWaiting(2);
    assert.deepEqual(startsSince(mark), ['c']);
    assert.deepEqual(rig.runs(), ['c']);
    assert.equal(rig.read('out/c.txt'), 'changed c\n!');

    mark = events.length;
    rig.write(
      'rules/squeeze.ts',
      rig.read('rules/squeeze.ts').replace('run(ctx) {', "run(ctx) { throw new Error('broken on purpose');"),
    );
    await waitForWaiting(3);
    assert.ok(events.slice(mark).some((e) => e.event === 'fail' && e.target === 'sq'));

    mark = events.length;
    rig.write('rules/squeeze.ts', rig.read('rules/squeeze.ts').replace("throw new Error('broken on purpose');", ''));
    await waitForWaiting(4);
    assert.ok(
      events.slice(mark).some((e) => e.event === 'end' && e.ok === true),
      JSON.stringify(events.slice(mark)),
    );

    mark = events.length;
    rig.write('out/unrelated-note.txt', 'not an input');
    await sleep(600);
    assert.equal(events.slice(mark).filter((e) => e.event === 'start').length, 0);

    child.kill('SIGINT');
    assert.equal(await exited, 130);
    assert.equal(currentHolder(path.join(rig.dir, '.rc1/lock')), null, 'the lock was released');
    const st = rig.run(['status', '--json']);
    assert.ok(
      (JSON.parse(st.stdout) as { targets: { state: string }[] }).targets.every((t) => t.state === 'up-to-date'),
    );
  } finally {
    child.kill('SIGKILL');
    rig.cleanup();
  }
});

test("a watch whose glob covers the whole workspace is not woken by the engine's own writes (logs, ERROR reports, manifest, sidecars)", async () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'all', rule: 'rules/all.ts', inputs: { any: '**/*.{txt,log,json,sha256,md}' }, outputs: ['out/all.bin'] })] });
`,
    'rules/all.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'all', version: 1, run(ctx) {
  const files = ctx.inputs('any');
  ctx.log('read ' + files.length + ' files');
  if (fs.readFileSync('src/a.txt', 'utf8').includes('fail')) throw new Error('failing on purpose');
  fs.writeFileSync(ctx.output('out/all.bin'), files.join('\\n'));
}});
`,
    'src/a.txt': 'one\n',
    'notes.md': 'hello\n',
  });
  const child = rig.spawn(['watch', '--json']);
  const events = collectEvents<Ev>(child);
  const count = (pred: (e: Ev) => boolean): number => events.filter(pred).length;
  const waiting = (e: Ev): boolean => e.event === 'watch' && e.state === 'waiting';
  const waitFor = async (n: number): Promise<void> => {
    for (let i = 0; i < 2400 && count(waiting) < n; i++) await sleep(25);
    assert.ok(count(waiting) >= n, `watch did not settle (${n}); events: ${JSON.stringify(events.slice(-10))}`);
  };
  try {
    await waitFor(1);
    assert.ok(rig.exists('logs/all.log') && rig.exists('out/all.bin'));
    await sleep(1200);
    assert.equal(
      count((e) => e.event === 'start'),
      1,
      `rebuilt from its own writes: ${JSON.stringify(events)}`,
    );
    rig.write('src/a.txt', 'fail\n');
    await waitFor(2);
    assert.ok(fs.readdirSync(path.join(rig.dir, 'reports')).some((f) => f.startsWith('ERROR_')));
    await sleep(1200);
    assert.equal(
      count((e) => e.event === 'start'),
      2,
      `rebuilt from its own writes: ${JSON.stringify(events.slice(-8))}`,
    );
    assert.equal(count(waiting), 2);
  } finally {
    child.kill('SIGKILL');
    rig.cleanup();
  }
});
