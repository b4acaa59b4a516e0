// The rule worker pool (packages/engine/src/runner/worker-pool.ts) after abortAll()/close(), and
// the output cache as a rule worker uses it (output-cache.ts, logPerObject).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ADDED_LOG, OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { WorkerPool } from '../../packages/engine/src/runner/worker-pool.ts';
import type { RuleJob } from '../../packages/engine/src/runner/rule-runner.ts';

test('a job given to the pool after abortAll() or close() is answered aborted, and no worker is started for it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-pool-closed-'));
  try {
    // a worker that only says it started (and ends at once)
    const worker = path.join(dir, 'worker.mjs');
    fs.writeFileSync(
      worker,
      `import * as fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(path.join(dir, 'started'))}, 'x');\nprocess.exit(0);\n`,
    );
    for (const stop of ['abortAll', 'close'] as const) {
      const pool = new WorkerPool(2, pathToFileURL(worker));
      await (stop === 'abortAll' ? pool.abortAll(10) : pool.close());
      const res = await Promise.race([
        pool.run({ target: 't' } as unknown as RuleJob, { log: () => {}, progress: () => {} }),
        new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), 2000)),
      ]);
      assert.deepEqual(res, { ok: false, error: { kind: 'aborted', message: 'the worker pool is closed' } }, stop);
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fs.existsSync(path.join(dir, 'started')), false, 'no worker was started');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a rule worker's output cache keeps no descriptor of added.log open between objects (a terminated worker leaks none), and counts every object", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-added-log-'));
  try {
    const cache = new OutputCache(dir, { logPerObject: true });
    fs.mkdirSync(dir, { recursive: true });
    const log = fs.realpathSync(dir) + path.sep + ADDED_LOG;
    const openOnLog = (): number =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === log;
        } catch {
          return false;
        }
      }).length;
    for (const [i, body] of ['one', 'two!'].entries()) {
      const src = path.join(dir, `src${i}`);
      fs.writeFileSync(src, body);
      const sha = createHash('sha256').update(body).digest('hex');
      cache.storeObject(src, sha, Buffer.from(body));
      assert.equal(openOnLog(), 0, `after object ${i + 1}`);
    }
    assert.equal(fs.readFileSync(log, 'utf8'), '3\n4\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
