// Killed and interrupted builds, and the workspace lock:
//   src/v.txt --> pair (writes out/p1.txt and out/p2.txt, slowly) --> chain (out/c.txt)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestRig } from '../helpers/rig.ts';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';

const PIPELINE = `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['chain'],
  targets: [
    defineTarget({ name: 'pair', rule: 'rules/pair.ts', inputs: { v: 'src/v.txt' }, outputs: ['out/p1.txt', 'out/p2.txt', 'out/dir/'] }),
    defineTarget({ name: 'chain', rule: 'rules/chain.ts', inputs: { p: target('pair') }, outputs: ['out/c.txt'] }),
    defineTarget({ name: 'slow', rule: 'rules/slow.ts', inputs: { v: 'src/v.txt' }, outputs: ['out/slow.txt'] }),
  ],
});
`;

// Writes p1, then ~1 MiB of dir files, then p2, with pauses, so kills land in the middle.
const PAIR = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
export default defineRule({ name: 'pair', version: 1, async run(ctx) {
  const v = fs.readFileSync(ctx.inputs('v')[0], 'utf8').trim();
  const pad = 'x'.repeat(256 * 1024);
  fs.writeFileSync(ctx.output('out/p1.txt'), v + '\\n' + pad);
  await pause(15);
  const dir = ctx.output('out/dir');
  for (let i = 0; i < 4; i++) { fs.writeFileSync(path.join(dir, 'f' + i + '.txt'), v + '\\n' + pad); await pause(5); }
  fs.writeFileSync(ctx.output('out/p2.txt'), v + '\\n' + pad);
}});
`;

const CHAIN = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'chain', version: 1, run(ctx) {
  const vs = ctx.inputs('p').filter((p) => p.endsWith('.txt')).map((p) => fs.readFileSync(p, 'utf8').split('\\n')[0]);
  fs.writeFileSync(ctx.output('out/c.txt'), vs.join(',') + '\\n');
}});
`;

// Spawns a long child process tied to ctx.signal, and records its pid.
const SLOW = `import { defineRule } from 'rc1-build';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
export default defineRule({ name: 'slow', version: 1, async run(ctx) {
  const child = spawn('sleep', ['30'], { signal: ctx.signal, stdio: 'ignore' });
  child.on('error', () => {});
  fs.writeFileSync(process.env.SLOW_PID_FILE, String(child.pid));
  await new Promise((resolve) => child.on('exit', resolve));
  fs.writeFileSync(ctx.output('out/slow.txt'), 'done');
}});
`;

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/pair.ts': PAIR,
    'rules/chain.ts': CHAIN,
    'rules/slow.ts': SLOW,
    'src/v.txt': '0\n',
  });
}

async function readPid(file: string): Promise<number> {
  for (let i = 0; i < 1200; i++) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (/^\d+$/.test(text)) return Number(text);
    await sleep(25);
  }
  throw new Error(`no pid in ${file}`);
}

function firstLine(r: TestRig, p: string): string {
  return r.read(p).split('\n')[0]!;
}

/** Every target that status calls up-to-date must hold outputs of the current input version. */
function assertNoStaleTakenForFresh(r: TestRig, v: string, round: number): void {
  const st = r.run(['status', '--json']);
  assert.equal(st.code, 0, `round ${round}: status failed (corrupt state?): ${st.stderr}`);
  const { targets } = JSON.parse(st.stdout) as { targets: { name: string; state: string }[] };
  const fresh = new Set(targets.filter((t) => t.state === 'up-to-date').map((t) => t.name));
  if (fresh.has('pair')) {
    for (const p of ['out/p1.txt', 'out/p2.txt', 'out/dir/f0.txt', 'out/dir/f3.txt'])
      assert.equal(firstLine(r, p), v, `round ${round}: ${p} taken for fresh`);
  }
  if (fresh.has('chain')) assert.equal(r.read('out/c.txt'), `${v},${v}\n`, `round ${round}: out/c.txt taken for fresh`);
}

test('a build killed with SIGKILL at random moments never leaves a stale output taken for fresh or a corrupt .rc1', async () => {
  const r = rig();
  try {
    let seed = 12345;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 1; i <= 24; i++) {
      r.write('src/v.txt', `${i}\n`);
      const child = r.spawn(['chain', '-j', '2']);
      const exited = new Promise((res) => child.on('exit', res));
      await sleep(40 + Math.floor(rand() * 260));
      child.kill('SIGKILL');
      await exited;
      assertNoStaleTakenForFresh(r, String(i), i);
    }
    const done = r.run(['chain']);
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.equal(r.read('out/c.txt'), '24,24\n');
    assert.equal(firstLine(r, 'out/dir/f2.txt'), '24');
    assert.equal(r.run(['audit']).code, 0);
    const noop = r.run(['chain', '--json']);
    assert.ok(noop.events.every((e) => e.event !== 'start'));
  } finally {
    r.cleanup();
  }
});

test("a second concurrent build is refused with the holder named, and a dead holder's lock is broken", async () => {
  const r = rig();
  const pidFile = path.join(r.dir, '..', path.basename(r.dir) + '.pid');
  try {
    const first = r.spawn(['slow'], { SLOW_PID_FILE: pidFile });
    const exited = new Promise((res) => first.on('exit', res));
    await readPid(pidFile);
    const second = r.run(['chain']);
    assert.equal(second.code, 64);
    assert.match(second.stderr, new RegExp(`another build holds this workspace: pid ${first.pid} on .*, started `));
    assert.match(second.stderr, /command: rc1-build slow/);
    first.kill('SIGKILL');
    await exited;
    process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 'SIGKILL');
    assert.ok(currentHolder(path.join(r.dir, '.rc1/lock')), 'the killed build left its lock');
    const third = r.run(['chain']);
    assert.equal(third.code, 0, third.stderr);
  } finally {
    r.cleanup();
    fs.rmSync(pidFile, { force: true });
  }
});

test('SIGINT stops the running rule and its child processes, records nothing half-done, and releases the lock', async () => {
  const r = rig();
  const pidFile = path.join(r.dir, '..', path.basename(r.dir) + '.pid');
  try {
    assert.equal(r.run(['chain']).code, 0);
    const child = r.spawn(['slow', 'chain', '--json'], { SLOW_PID_FILE: pidFile });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const sleeper = await readPid(pidFile);
    child.kill('SIGINT');
    assert.equal(await exited, 130);
    await sleep(100);
    const ps = (await import('node:child_process')).spawnSync(
      'ps',
      ['-o', 'pid,ppid,stat,cmd', '-p', String(sleeper)],
      { encoding: 'utf8' },
    ).stdout;
    assert.throws(() => process.kill(sleeper, 0), "the rule's child process was stopped: " + ps);
    const end = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .at(-1);
    assert.equal(end.event, 'end');
    assert.equal(end.interrupted, true);
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'the lock was released');
    assert.ok(!r.exists('out/slow.txt'));
    const st = JSON.parse(r.run(['status', '--json']).stdout) as { targets: { name: string; state: string }[] };
    assert.equal(st.targets.find((t) => t.name === 'slow')!.state, 'missing');
    assert.equal(st.targets.find((t) => t.name === 'chain')!.state, 'up-to-date');
  } finally {
    r.cleanup();
    fs.rmSync(pidFile, { force: true });
  }
});
