// Rule workers started before the pool (runner/worker-pool.ts prestartWorkers): the first pool of
// the same worker module adopts them instead of starting new ones, another module's pool does
// not, and workers nobody adopts never keep the process alive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkerPool, prestartWorkers, prestartedWaiting } from '../../packages/engine/src/runner/worker-pool.ts';
import type { RuleJob } from '../../packages/engine/src/runner/rule-runner.ts';

/** A worker module that notes its start in `started` and answers every job 'done' with its thread id. */
function fakeWorker(dir: string, name: string): URL {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    `import * as fs from 'node:fs';
import { parentPort, threadId } from 'node:worker_threads';
fs.appendFileSync(${JSON.stringify(path.join(dir, 'started'))}, '${name}\\n');
parentPort.on('message', (m) => {
  if (m.type === 'run') parentPort.postMessage({ type: 'done', id: m.job.id, result: { rule: { name: 'r', version: 1 }, outputs: [], summary: String(threadId) } });
});
`,
  );
  return pathToFileURL(file);
}

const hooks = { log: () => {}, progress: () => {} };
const started = (dir: string): string[] => fs.readFileSync(path.join(dir, 'started'), 'utf8').trim().split('\n');

test('a pool adopts the workers prestarted for its module and starts none of its own; another module gets none of them', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-prestart-'));
  try {
    const a = fakeWorker(dir, 'a.mjs');
    const b = fakeWorker(dir, 'b.mjs');
    prestartWorkers(a, 2);
    assert.equal(prestartedWaiting(), 2);
    const other = new WorkerPool(1, b);
    const rb = await other.run({ target: 'x' } as unknown as RuleJob, hooks);
    assert.equal(rb.ok, true);
    assert.equal(prestartedWaiting(), 2, 'a pool of another module leaves them waiting');
    await other.close();
    const pool = new WorkerPool(2, a);
    try {
      const [r1, r2] = await Promise.all([
        pool.run({ target: 't1' } as unknown as RuleJob, hooks),
        pool.run({ target: 't2' } as unknown as RuleJob, hooks),
      ]);
      assert.equal(prestartedWaiting(), 0, 'both adopted');
      assert.ok(r1.ok && r2.ok);
      assert.notEqual(r1.value.summary, r2.value.summary, 'two workers ran the two jobs');
    } finally {
      await pool.close();
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(started(dir).sort(), ['a.mjs', 'a.mjs', 'b.mjs'], 'no worker of a.mjs beyond the two prestarted');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('prestarted workers nobody adopts do not keep the process alive', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-prestart-exit-'));
  try {
    const a = fakeWorker(dir, 'a.mjs');
    const script = path.join(dir, 'main.mjs');
    const pool = pathToFileURL(path.resolve('packages/engine/src/runner/worker-pool.ts')).href;
    fs.writeFileSync(
      script,
      [
        "import * as fs from 'node:fs';",
        `import { prestartWorkers } from ${JSON.stringify(pool)};`,
        `prestartWorkers(new URL(${JSON.stringify(a.href)}), 2);`,
        // wait until both are up (then idle, waiting for jobs), and return: the process must end
        `const poll = setInterval(() => { try { if (fs.readFileSync(${JSON.stringify(path.join(dir, 'started'))}, 'utf8').split('\\n').length > 2) clearInterval(poll); } catch {} }, 20);`,
      ].join('\n'),
    );
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { timeout: 20_000, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(Date.now() - t0 < 15_000);
    assert.equal(started(dir).length, 2, 'both workers did start');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
