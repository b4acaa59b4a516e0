// The warm-up a resident server's spare worker runs while idle (runner/worker.ts: warmUp): one
// small rule of its own, in a folder of its own under the temporary folder, through the same path
// as any job. Checked on the built worker (dist/worker.js, what the server starts): the folder is
// made and removed, nothing of the warm-up reaches the pool, and a build's job posted right
// behind it runs and is answered as usual, also where the warm-up cannot write; and a server's
// start removes the folders that servers killed during a warm-up left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FromWorker, Job } from '../../packages/engine/src/runner/protocol.ts';

const WORKER = path.resolve('packages/engine/dist/worker.js');

function jobIn(ws: string): Job {
  const module = path.join(ws, 'rule.mjs');
  fs.writeFileSync(
    module,
    "import { writeFileSync } from 'node:fs';\nexport default { name: 'r', version: 1, run(ctx) { writeFileSync(ctx.output('out.txt'), 'hello\\n'); } };\n",
  );
  const tmpDir = path.join(ws, 'tmp');
  fs.mkdirSync(tmpDir);
  return {
    id: 1,
    target: 't',
    gate: false,
    module,
    ruleFile: 'rule.mjs',
    root: ws,
    stateDir: path.join(ws, 'state'),
    profile: 'dev',
    params: {},
    args: {},
    forced: false,
    codeHash: 'c'.repeat(64),
    env: {},
    inputs: {},
    outputs: [{ path: 'out.txt', dir: false, tmp: path.join(tmpDir, '1-out.txt') }],
    tmpDir,
    tmpPrefix: '1-',
    cacheDir: path.join(ws, 'cache'),
    cacheKey: 'k'.repeat(64),
  };
}

/** Starts the worker with TMPDIR set, posts a warm-up then the job at once, and collects every message until the job is answered. */
async function warmThenRun(tmp: string, ws: string): Promise<FromWorker[]> {
  const w = new Worker(WORKER, { env: { ...process.env, TMPDIR: tmp }, stdout: true, stderr: true });
  const seen: FromWorker[] = [];
  try {
    return await new Promise<FromWorker[]>((resolve, reject) => {
      w.on('error', reject);
      w.on('message', (m: FromWorker) => {
        seen.push(m);
        if (m.id === 1 && (m.type === 'done' || m.type === 'error')) resolve(seen);
      });
      w.postMessage({ type: 'warm-up' });
      w.postMessage({ type: 'run', job: jobIn(ws) });
    });
  } finally {
    await w.terminate();
  }
}

test('a warm-up makes its folder under the temporary folder and removes it before the job behind it starts; the pool hears only of the job', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-warm-tmp-'));
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-warm-ws-'));
  const appeared = new Set<string>();
  const watcher = fs.watch(tmp, (_event, name) => {
    if (name) appeared.add(String(name));
  });
  try {
    const seen = await warmThenRun(tmp, ws);
    assert.deepEqual(
      seen.map((m) => [m.type, m.id]),
      [['done', 1]],
      'one message: the job done (none about the warm-up)',
    );
    const done = seen[0] as Extract<FromWorker, { type: 'done' }>;
    assert.equal(done.result.outputs[0]!.sha256, createHash('sha256').update('hello\n').digest('hex'));
    assert.equal(done.result.cached, true, "the job's cache entry was written by the worker");
    assert.deepEqual(fs.readdirSync(tmp), [], 'the warm-up folder is gone by the time the job is answered');
    await new Promise((r) => setTimeout(r, 50)); // the watcher's events
    assert.ok(
      [...appeared].some((n) => n.startsWith(`rc1-warm-up-${process.pid}-`)),
      `the warm-up made its folder there (seen: ${[...appeared].join(', ') || 'nothing'})`,
    );
    assert.ok(fs.readdirSync(path.join(ws, 'cache', 'entries')).length > 0, "the job's own cache is in its workspace");
  } finally {
    watcher.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(ws, { recursive: true, force: true });
  }
});

test('a warm-up that cannot make its folder is skipped: the job behind it runs as usual', async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-warm-ws-'));
  try {
    const seen = await warmThenRun(path.join(ws, 'no-such-folder'), ws);
    assert.deepEqual(
      seen.map((m) => [m.type, m.id]),
      [['done', 1]],
    );
    assert.equal(fs.readFileSync(path.join(ws, 'tmp', '1-out.txt'), 'utf8'), 'hello\n');
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
});

test("a server's start removes the warm-up folders of processes no longer running, and only those", async () => {
  const { sweepWarmUpDirs } = await import('../../packages/engine/src/runner/warm-up.ts');
  const { procStat } = await import('../../packages/engine/src/state/process-identity.ts');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-warm-sweep-'));
  try {
    const dead = spawnSync('true').pid!; // exited and reaped: no /proc entry
    const ticks = procStat(process.pid)!.startTicks;
    const names = {
      dead: `rc1-warm-up-${dead}-${ticks}-aaaaaa`,
      alive: `rc1-warm-up-${process.pid}-${ticks}-bbbbbb`,
      reused: `rc1-warm-up-${process.pid}-1-cccccc`, // this pid, another start time: a reused pid
      other: 'rc1-warm-up-ddd',
      unrelated: 'something-else',
    };
    for (const n of Object.values(names)) {
      fs.mkdirSync(path.join(tmp, n));
      fs.writeFileSync(path.join(tmp, n, 'f'), 'x');
    }
    assert.deepEqual(
      sweepWarmUpDirs(tmp, path.join(tmp, 'no-proc')),
      [],
      'no /proc to tell which processes run: nothing removed',
    );
    assert.deepEqual(sweepWarmUpDirs(tmp).sort(), [names.dead, names.reused].sort());
    assert.deepEqual(fs.readdirSync(tmp).sort(), [names.alive, names.other, names.unrelated].sort());
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
