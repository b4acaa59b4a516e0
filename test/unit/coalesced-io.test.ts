// A build's stdout in batches (packages/engine/src/cli/stdio.ts coalescedIo): the lines of one
// event-loop turn go out in one write, in order, at the end of the turn; stderr never overtakes
// stdout; a large batch goes at once; flush() and the exit of the process write what is left
// (flushOnExit: the builds still in progress, however many).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { coalescedIo } from '../../packages/engine/src/cli/stdio.ts';

function recorder(): { io: { out(s: string): void; err(s: string): void; tty: boolean }; writes: [string, string][] } {
  const writes: [string, string][] = [];
  return {
    io: { out: (s) => writes.push(['out', s]), err: (s) => writes.push(['err', s]), tty: false },
    writes,
  };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('lines written in one turn go out together, in order, once the turn ends', async () => {
  const { io, writes } = recorder();
  const c = coalescedIo(io);
  for (let i = 0; i < 100; i++) c.out(`run t_${i}\n`);
  assert.deepEqual(writes, [], 'nothing written before the turn ends');
  await turn();
  assert.equal(writes.length, 1);
  assert.equal(writes[0]![1], Array.from({ length: 100 }, (_, i) => `run t_${i}\n`).join(''));
  c.out('done t_0\n');
  await turn();
  assert.deepEqual(writes[1], ['out', 'done t_0\n']);
});

test('stderr never overtakes the stdout written before it', () => {
  const { io, writes } = recorder();
  const c = coalescedIo(io);
  c.out('run a\n');
  c.err('warning: b\n');
  c.out('done a\n');
  c.flush();
  assert.deepEqual(writes, [
    ['out', 'run a\n'],
    ['err', 'warning: b\n'],
    ['out', 'done a\n'],
  ]);
});

test('a batch of 16 KiB is written at once, without waiting for the turn', () => {
  const { io, writes } = recorder();
  const c = coalescedIo(io);
  const line = `${'x'.repeat(1023)}\n`;
  for (let i = 0; i < 15; i++) c.out(line);
  assert.equal(writes.length, 0);
  c.out(line);
  assert.equal(writes.length, 1);
  assert.equal(writes[0]![1].length, 16 * 1024);
  c.flush();
  assert.equal(writes.length, 1, 'nothing left to write');
});

test('a process that exits in the middle of a turn still prints what it gathered', () => {
  const stdio = path.resolve('packages/engine/src/cli/stdio.ts');
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import(${JSON.stringify(stdio)}).then(({ coalescedIo, flushOnExit, processIo }) => {
        const ended = coalescedIo(processIo());
        flushOnExit(ended)(); // a build that ended: no longer written at exit
        ended.out('never\\n');
        const builds = Array.from({ length: 12 }, () => coalescedIo(processIo()));
        for (const io of builds) flushOnExit(io); // twelve at once: one listener, no warning
        builds[0].out('run a\\n');
        builds[11].out('done a\\n');
        process.exit(3);
      });`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 3, r.stderr);
  assert.equal(r.stdout, 'run a\ndone a\n');
  assert.doesNotMatch(r.stderr, /MaxListeners/);
});
