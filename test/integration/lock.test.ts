// The workspace lock through the real CLI: concurrent starts over a dead holder's lock never
// overlap; a zombie holder, a pid now used by another process, and a record naming the build's
// own pid (a restart) are all broken; --wait queues behind a live holder; a SIGTERM to npx stops
// the build it launched.
//   (no inputs) --> t (records entry/exit, a few ms)      (no inputs) --> hold (waits for a go file)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI, REPO, TestRig } from '../helpers/rig.ts';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';

const PIPELINE = `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['t'], freeFormConfig: ['x'],
  targets: [
    defineTarget({ name: 't', rule: 'rules/t.ts', inputs: {}, outputs: ['out/t.txt'] }),
    defineTarget({ name: 'hold', rule: 'rules/hold.ts', inputs: {}, outputs: ['out/hold.txt'] }),
  ],
});
`;

// Marks "inside" with an exclusive create: a second build inside at the same time is recorded.
const T_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 't', version: 1, async run(ctx) {
  const ledger = process.env.LEDGER;
  const t0 = performance.timeOrigin + performance.now();
  try { fs.writeFileSync(ledger + '.inside', String(process.pid), { flag: 'wx' }); }
  catch { fs.appendFileSync(ledger, 'OVERLAP ' + process.pid + '\\n'); }
  await new Promise((r) => setTimeout(r, 15));
  fs.rmSync(ledger + '.inside', { force: true });
  fs.appendFileSync(ledger, process.pid + ' ' + t0 + ' ' + (performance.timeOrigin + performance.now()) + '\\n');
  fs.writeFileSync(ctx.output('out/t.txt'), 't');
}});
`;

const HOLD_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'hold', version: 1, async run(ctx) {
  // Written whole, then renamed: a test that sees the file can read the pid in it.
  fs.writeFileSync(process.env.HOLD_ENTERED + '.tmp', String(process.pid));
  fs.renameSync(process.env.HOLD_ENTERED + '.tmp', process.env.HOLD_ENTERED);
  for (let i = 0; i < 1000 && !fs.existsSync(process.env.HOLD_GO) && !ctx.signal.aborted; i++) await new Promise((r) => setTimeout(r, 20));
  fs.writeFileSync(ctx.output('out/hold.txt'), 'held');
}});
`;

function lockRig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/t.ts': T_RULE,
    'rules/hold.ts': HOLD_RULE,
    'configs/default.yaml': 'x: 1\n',
  });
}

const BOOT_ID = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const startTicks = (pid: number): string => {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ')[19]!;
};

/** Writes a lock record as the highest-numbered lock file, as a holder that never released would leave it. */
function plantLock(dir: string, holder: { pid: number; startTicks: string | null }): void {
  const lockDir = path.join(dir, '.rc1/lock');
  fs.mkdirSync(lockDir, { recursive: true });
  const top = Math.max(
    0,
    ...fs
      .readdirSync(lockDir)
      .filter((n) => /^\d{16}$/.test(n))
      .map(Number),
  );
  const rec = {
    format: 2,
    token: 'planted',
    host: os.hostname(),
    bootId: BOOT_ID,
    started: '2026-01-01T00:00:00.000Z',
    command: 'rc1-build train',
    ...holder,
  };
  fs.writeFileSync(path.join(lockDir, String(top + 1).padStart(16, '0')), JSON.stringify(rec));
}

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

function runCli(
  dir: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, ...args], {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    c.stderr!.on('data', (d) => {
      stderr += d;
    });
    c.on('exit', (code) => resolve({ code, stderr }));
  });
}

test("four builds started at once over a dead holder's lock never run at the same time (50 trials)", async () => {
  const r = lockRig();
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  try {
    assert.equal(r.run(['t'], { LEDGER: ledger }).code, 0);
    let ran = 0;
    for (let trial = 0; trial < 50; trial++) {
      // alternately a pid with no process and a live pid whose start time is not the holder's
      plantLock(r.dir, trial % 2 ? { pid: deadPid(), startTicks: '12345' } : { pid: process.pid, startTicks: '1' });
      const results = await Promise.all([0, 1, 2, 3].map(() => runCli(r.dir, ['--force', 't'], { LEDGER: ledger })));
      for (const res of results) {
        assert.ok(res.code === 0 || res.code === 64, `exit ${res.code}: ${res.stderr}`);
        if (res.code === 64) assert.match(res.stderr, /another build holds this workspace/);
      }
      const winners = results.filter((x) => x.code === 0);
      assert.ok(winners.length >= 1, 'someone broke the dead lock');
      assert.ok(winners.some((x) => /broke the workspace lock of pid/.test(x.stderr)));
      ran += winners.length;
    }
    const lines = fs.readFileSync(ledger, 'utf8').trim().split('\n').slice(1);
    assert.equal(lines.filter((l) => l.startsWith('OVERLAP')).length, 0, 'two builds inside the rule at once');
    const spans = lines.map((l) => l.split(' ').slice(1).map(Number) as [number, number]).sort((a, b) => a[0] - b[0]);
    assert.equal(spans.length, ran);
    for (let i = 1; i < spans.length; i++)
      assert.ok(spans[i]![0] >= spans[i - 1]![1], `runs ${i - 1} and ${i} overlap in time`);
    assert.equal(fs.readdirSync(path.join(r.dir, '.rc1/lock')).length, 1, 'lower lock files are swept');
  } finally {
    r.cleanup();
    fs.rmSync(ledger, { force: true });
    fs.rmSync(ledger + '.inside', { force: true });
  }
});

test("a zombie holder, a reused pid and the build's own pid after a restart are dead holders, broken with the reason", async () => {
  const r = lockRig();
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  // a child that exits at once under a parent that never reaps it: a zombie
  const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const zombie = await new Promise<number>((res) =>
      parent.stdout!.once('data', (d) => res(Number(String(d).trim()))),
    );
    const ticks = startTicks(zombie);
    for (let i = 0; i < 100 && !/\) Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, 'utf8')); i++) await sleep(10);
    plantLock(r.dir, { pid: zombie, startTicks: ticks });
    let res = r.run(['t'], { LEDGER: ledger });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, new RegExp(`broke the workspace lock of pid ${zombie}: process ${zombie} is a zombie`));

    plantLock(r.dir, { pid: process.pid, startTicks: '7' });
    res = r.run(['--force', 't'], { LEDGER: ledger });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, new RegExp(`pid ${process.pid} now belongs to another process`));

    // The build's own pid with an earlier start time (a container restart hands out the same pid
    // again), written by the shell that then becomes the build (exec keeps the pid). The same pid
    // and start time would be this very process, alive (test/unit/process-identity.test.ts).
    const script = `s=$(expr $(cut -d' ' -f22 /proc/$$/stat) - 1); n=$(ls .rc1/lock | sort | tail -1); n=$(printf '%016d' $(expr $n + 1));
      printf '{"format":2,"token":"before-restart","pid":%d,"host":"%s","startTicks":"%s","bootId":"%s","started":"x"}' $$ "${os.hostname()}" "$s" "${BOOT_ID}" > .rc1/lock/$n;
      exec "${process.execPath}" "${CLI}" --force t`;
    const own = spawnSync('sh', ['-c', script], {
      cwd: r.dir,
      encoding: 'utf8',
      env: { ...process.env, LEDGER: ledger },
    });
    assert.equal(own.status, 0, own.stderr);
    assert.match(
      own.stderr,
      /broke the workspace lock of pid \d+: its pid \d+ is this process's own \(a restart reused it\)/,
    );
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null);
  } finally {
    parent.kill('SIGKILL');
    r.cleanup();
    fs.rmSync(ledger, { force: true });
  }
});

test('--wait queues behind a live holder and runs after it; --wait=SECONDS gives up with the holder named', async () => {
  const r = lockRig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  const go = path.join(r.dir, '..', `${path.basename(r.dir)}.go`);
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  const env = { HOLD_ENTERED: entered, HOLD_GO: go, LEDGER: ledger };
  const first = r.spawn(['hold'], env);
  try {
    const firstExit = new Promise<number | null>((res) => first.on('exit', (c) => res(c)));
    for (let i = 0; i < 3000 && !fs.existsSync(entered); i++) await sleep(20);
    assert.ok(fs.existsSync(entered), 'the first build runs its rule');
    const gaveUp = r.run(['t', '--wait=0.3'], env);
    assert.equal(gaveUp.code, 64);
    assert.match(
      gaveUp.stderr,
      new RegExp(`another build holds this workspace: pid ${first.pid}[^]*command: rc1-build hold[^]*waited: [01] s`),
    );

    const waiter = r.spawn(['--wait', 't'], env);
    let waitErr = '';
    waiter.stderr!.on('data', (d) => {
      waitErr += d;
    });
    const waited = new Promise<number | null>((res) => waiter.on('exit', (c) => res(c)));
    for (let i = 0; i < 500 && !waitErr.includes('waiting for'); i++) await sleep(20);
    assert.match(
      waitErr,
      new RegExp(`waiting for the build holding this workspace \\(pid ${first.pid} on [^,]+, rc1-build hold\\)`),
    );
    await sleep(200);
    assert.ok(!fs.existsSync(ledger), 'the waiting build has not run its rule');
    const released = Date.now();
    fs.writeFileSync(go, '');
    assert.equal(await firstExit, 0);
    assert.equal(await waited, 0, waitErr);
    const [, t0] = fs.readFileSync(ledger, 'utf8').trim().split(' ').map(Number);
    assert.ok(t0! >= released, 'the waiting build ran its rule after the holder finished');
  } finally {
    first.kill('SIGKILL');
    r.cleanup();
    for (const f of [entered, go, ledger]) fs.rmSync(f, { force: true });
  }
});

const hasNpx = spawnSync('npx', ['--version']).status === 0;

test('a SIGTERM to npx stops the build it launched and releases the lock', {
  skip: !hasNpx && 'npx not found',
}, async () => {
  const r = lockRig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  const go = path.join(r.dir, '..', `${path.basename(r.dir)}.go`);
  const npx = spawn('npx', ['--no-install', 'rc1-build', '-C', r.dir, 'hold'], {
    cwd: REPO,
    env: { ...process.env, HOLD_ENTERED: entered, HOLD_GO: go },
    stdio: 'ignore',
  });
  let build = 0;
  try {
    for (let i = 0; i < 1000 && !fs.existsSync(entered); i++) await sleep(20);
    build = Number(fs.readFileSync(entered, 'utf8'));
    assert.notEqual(build, npx.pid, 'npx runs the CLI as a child process');
    npx.kill('SIGTERM');
    let gone = false;
    for (let i = 0; i < 250 && !gone; i++) {
      await sleep(20);
      try {
        process.kill(build, 0);
      } catch {
        gone = true;
      }
    }
    assert.ok(gone, 'the build exited after npx was terminated');
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'and released its lock');
    assert.ok(!r.exists('out/hold.txt'));
  } finally {
    if (build)
      try {
        process.kill(build, 'SIGKILL');
      } catch {
        /* gone */
      }
    npx.kill('SIGKILL');
    r.cleanup();
    for (const f of [entered, go]) fs.rmSync(f, { force: true });
  }
});
