// The worker pool's hand-off (packages/engine/src/runner/worker-pool.ts, job-queue.ts): with every
// worker busy a job waits ON a worker, behind its running job, and starts there the moment that
// one ends; a worker that goes idle takes a waiting job back; no job is lost or run twice, and no
// more than `size` run at once. The workers here are small modules that speak the pool's protocol
// and settle claims with the same compare-and-swap as the real worker (which the CLI tests run);
// their jobs spin synchronously, as a CPU-bound rule does, so they read no message while they run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { claimCells, claimJob, JobQueue, offer, takeBack } from '../../packages/engine/src/runner/job-queue.ts';
import { WorkerPool } from '../../packages/engine/src/runner/worker-pool.ts';
import type { RuleJob, RuleOutcome } from '../../packages/engine/src/runner/rule-runner.ts';

/**
 * A worker that runs one job at a time for job.args.ms milliseconds (spinning), claims a waiting
 * job before it starts it, and answers with its thread id and when it ran (ms, shared clock).
 * job.args.exit: the worker exits instead of answering.
 */
const WORKER = `import { parentPort, threadId } from 'node:worker_threads';
let cells = null;
const waiting = [];
let running = false;
const now = () => performance.timeOrigin + performance.now();
function runOne(m) {
  const start = now();
  if (m.job.args.exit) process.exit(3);
  while (now() - start < m.job.args.ms) {}
  parentPort.postMessage({ type: 'done', id: m.job.id, result: { rule: { name: 'r', version: 1 }, outputs: [],
    summary: JSON.stringify({ name: m.job.target, thread: threadId, start, end: now() }) } });
}
async function drain() {
  running = true;
  for (let m = waiting.shift(); m; m = waiting.shift()) {
    if (m.claim !== undefined && Atomics.compareExchange(cells, m.claim, m.job.id, 0) !== m.job.id) continue;
    runOne(m);
    await new Promise((r) => setImmediate(r)); // messages are read between jobs, as in the real worker
  }
  running = false;
}
parentPort.on('message', (m) => {
  if (m.type === 'claims') cells = m.cells;
  else if (m.type === 'run') { waiting.push(m); if (!running) void drain(); }
  else if (m.type === 'abort') {
    const at = waiting.findIndex((w) => w.job.id === m.id);
    if (at >= 0) { waiting.splice(at, 1); parentPort.postMessage({ type: 'error', id: m.id, error: { kind: 'aborted', message: 'dropped' } }); }
  }
});
`;

interface Ran {
  name: string;
  thread: number;
  start: number;
  end: number;
}

function withPool(size: number, body: (pool: WorkerPool) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-hand-off-'));
  const file = path.join(dir, 'worker.mjs');
  fs.writeFileSync(file, WORKER);
  const pool = new WorkerPool(size, pathToFileURL(file));
  return body(pool).finally(async () => {
    await pool.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

/** Runs a job; resolves with what the worker reported, when the pool's `started` hook fired, and when it resolved. */
function job(
  pool: WorkerPool,
  name: string,
  args: Record<string, unknown>,
): Promise<{ out: RuleOutcome; ran: Ran | null; startedAt: number | null; starts: number; doneAt: number }> {
  let startedAt: number | null = null;
  let starts = 0;
  const hooks = {
    started: () => {
      starts++;
      startedAt ??= performance.timeOrigin + performance.now();
    },
    log: () => {},
    progress: () => {},
  };
  return pool.run({ target: name, args } as unknown as RuleJob, hooks).then((out) => ({
    out,
    ran: out.ok ? (JSON.parse(out.value.summary!) as Ran) : null,
    startedAt,
    starts,
    doneAt: performance.timeOrigin + performance.now(),
  }));
}

/** The most jobs whose [start, end) intervals overlap at one instant. */
function mostAtOnce(ran: Ran[]): number {
  const edges = ran.flatMap((r) => [
    [r.start, 1],
    [r.end, -1],
  ]) as [number, number][];
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d));
  return most;
}

test('with its one worker busy, a second job waits on that worker and starts when the first ends; the pool says when it started', async () => {
  await withPool(1, async (pool) => {
    const [a, b] = await Promise.all([job(pool, 'a', { ms: 150 }), job(pool, 'b', { ms: 20 })]);
    assert.ok(a.ran && b.ran);
    assert.equal(a.ran.thread, b.ran.thread, 'one worker ran both');
    assert.ok(b.ran.start >= a.ran.end, 'b started after a ended: one rule at a time');
    assert.ok(a.startedAt !== null && a.startedAt <= a.ran.start, 'a was told started when it was handed over');
    // Both on the main thread's clock (the workers' clocks may differ from it by a little).
    assert.ok(
      b.startedAt !== null && b.startedAt >= a.doneAt,
      'b was told started only once a had ended and been answered',
    );
    assert.deepEqual([a.starts, b.starts], [1, 1], 'each start told once');
  });
});

test('a job waiting behind a long rule is taken back by the worker that goes idle, and finishes long before the long rule', async () => {
  await withPool(2, async (pool) => {
    const long = job(pool, 'long', { ms: 800 });
    const short = job(pool, 'short', { ms: 40 });
    // Both workers busy: this one waits on the first worker, behind the long rule.
    const waiting = job(pool, 'waiting', { ms: 40 });
    const [l, s, w] = await Promise.all([long, short, waiting]);
    assert.ok(l.ran && s.ran && w.ran);
    assert.notEqual(l.ran.thread, s.ran.thread);
    assert.equal(w.ran.thread, s.ran.thread, 'the idle worker ran it');
    assert.ok(w.doneAt < l.ran.end, 'it did not wait for the long rule');
    assert.equal(mostAtOnce([l.ran, s.ran, w.ran]), 2);
  });
});

test('200 jobs of mixed lengths on 2 workers: each runs exactly once, never more than 2 at once', async () => {
  await withPool(2, async (pool) => {
    // Hand out at most 4 at a time (2 × -j), as the scheduler does, refilling as each ends.
    const lengths = Array.from({ length: 200 }, (_, i) => (i % 17 === 0 ? 25 : i % 3));
    const results: Awaited<ReturnType<typeof job>>[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < lengths.length) {
        const i = next++;
        results.push(await job(pool, `j${i}`, { ms: lengths[i] }));
      }
    };
    await Promise.all([lane(), lane(), lane(), lane()]);
    assert.equal(results.length, 200);
    assert.ok(results.every((r) => r.out.ok));
    assert.ok(
      results.every((r) => r.starts === 1),
      'every start told exactly once, taken back or not',
    );
    const names = results.map((r) => r.ran!.name).sort();
    assert.deepEqual(names, [...new Set(names)], 'no job ran twice');
    assert.ok(mostAtOnce(results.map((r) => r.ran!)) <= 2);
    assert.ok(new Set(results.map((r) => r.ran!.thread)).size === 2, 'both workers ran jobs');
  });
});

test('a job waiting on a worker that dies goes to another worker; only the job that took it down fails', async () => {
  await withPool(2, async (pool) => {
    const crash = job(pool, 'crash', { exit: true });
    const busy = job(pool, 'busy', { ms: 300 });
    const behind = job(pool, 'behind', { ms: 10 });
    const [c, b, w] = await Promise.all([crash, busy, behind]);
    assert.equal(c.out.ok, false);
    assert.match(!c.out.ok ? c.out.error.message : '', /exited with code 3/);
    assert.ok(b.out.ok && w.out.ok, 'the job behind the crash ran elsewhere');
  });
});

test('abortAll answers a job still waiting behind a running rule at once, without running it', async () => {
  await withPool(1, async (pool) => {
    const running = job(pool, 'running', { ms: 200 });
    const waiting = job(pool, 'waiting', { ms: 10 });
    await new Promise((r) => setTimeout(r, 30));
    const t0 = Date.now();
    const stopped = pool.abortAll(1000);
    const w = await waiting;
    assert.equal(w.out.ok, false);
    assert.equal(!w.out.ok && w.out.error.kind, 'aborted');
    assert.ok(Date.now() - t0 < 150, 'answered before the running rule ended');
    assert.equal(w.ran, null);
    await stopped;
    await running;
  });
});

test('a claim is won by exactly one side: the worker that claims first runs the job, a take-back after it fails, and the reverse', () => {
  const cells = claimCells();
  const a = offer(cells, 7);
  const b = offer(cells, 8);
  assert.notEqual(a, b, 'two open claims on one worker use two cells');
  assert.equal(claimJob(cells, a, 7), true);
  assert.equal(takeBack(cells, a, 7), false, 'too late: the worker has it');
  assert.equal(takeBack(cells, b, 8), true);
  assert.equal(claimJob(cells, b, 8), false, 'the worker lost it');
  assert.equal(offer(cells, 9), a, 'settled cells are free again');
});

test("the worker's queue runs its jobs one at a time, in order, and skips a job taken back before it started", async () => {
  const cells = claimCells();
  const ran: number[] = [];
  let release!: () => void;
  const first = new Promise<void>((r) => (release = r));
  const q = new JobQueue<{ id: number }>(async (j) => {
    ran.push(j.id);
    if (j.id === 1) await first;
  });
  q.share(cells);
  q.push({ job: { id: 1 } });
  q.push({ job: { id: 2 }, claim: offer(cells, 2) });
  q.push({ job: { id: 3 }, claim: offer(cells, 3) });
  assert.equal(takeBack(cells, 0, 2), true);
  assert.equal(q.drop(3), true, 'an abort drops a job that has not started');
  q.push({ job: { id: 4 }, claim: offer(cells, 4) });
  assert.deepEqual(ran, [1], 'one at a time');
  release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, [1, 4]);
});
