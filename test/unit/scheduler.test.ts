// In-memory tests of the scheduler (packages/engine/src/scheduler/scheduler.ts): a fake executor
// stands in for decide/run/commit, each target's work is a promise the test settles, so order,
// the -j bound, -k, blocking and interruption are checked without a workspace or a worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type BuildState,
  type Outcome,
  type ScheduleResult,
  STOPPED_AFTER_FAILURE,
  Scheduler,
  type Slots,
  type TargetExecutor,
  YIELD_EVERY,
} from '../../packages/engine/src/scheduler/scheduler.ts';

interface Deferred {
  promise: Promise<Outcome>;
  resolve(o: Outcome): void;
  reject(e: unknown): void;
}
function deferred(): Deferred {
  let resolve!: (o: Outcome) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<Outcome>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Runs every target "in a slot" until the test settles it; records order and concurrency. */
class FakeExecutor implements TargetExecutor {
  started: string[] = [];
  finished: string[] = [];
  running = 0;
  maxRunning = 0;
  cancelled = 0;
  readonly work = new Map<string, Deferred>();
  private waiters: (() => void)[] = [];

  /** Targets whose outcome is given up front (settle at once, after the slot). */
  constructor(private readonly auto: Record<string, Outcome | Error> = {}) {}

  async execute(name: string, slots: Slots, state: BuildState): Promise<Outcome> {
    await slots.acquire();
    if (state.interrupted || state.halted) {
      slots.release();
      return 'failed';
    }
    this.started.push(name);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const d = deferred();
    this.work.set(name, d);
    for (const w of this.waiters.splice(0)) w();
    const a = this.auto[name];
    if (a instanceof Error) d.reject(a);
    else if (a) setImmediate(() => d.resolve(a));
    try {
      return await d.promise;
    } finally {
      this.running--;
      this.finished.push(name);
      slots.release();
    }
  }

  async cancel(): Promise<void> {
    this.cancelled++;
    for (const [n, d] of this.work) if (!this.finished.includes(n)) d.resolve('failed');
  }

  /** Resolves once `name` has started. */
  async startedOf(name: string): Promise<void> {
    while (!this.started.includes(name)) await new Promise<void>((r) => this.waiters.push(r));
  }
}

function schedule(
  deps: Record<string, string[]>,
  ex: TargetExecutor,
  o: { jobs: number; handOff?: number; keepGoing?: boolean },
): { s: Scheduler; blocked: [string, string][]; done: Promise<ScheduleResult> } {
  const blocked: [string, string][] = [];
  const s = new Scheduler({ plan: Object.keys(deps), deps: (n) => deps[n]! }, ex, {
    jobs: o.jobs,
    ...(o.handOff ? { handOff: o.handOff } : {}),
    keepGoing: o.keepGoing ?? false,
    onBlocked: (n, by) => blocked.push([n, by]),
  });
  return { s, blocked, done: s.run() };
}

test('a target starts only after all its dependencies succeeded; ready targets start in plan order', async () => {
  // a --> b --> d ; a --> c --> d
  const ex = new FakeExecutor({ a: 'ran', b: 'up-to-date', c: 'restored', d: 'ran' });
  const { done } = schedule({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'] }, ex, { jobs: 1 });
  const r = await done;
  assert.deepEqual(ex.started, ['a', 'b', 'c', 'd']);
  assert.ok(ex.finished.indexOf('b') < ex.started.indexOf('d') && ex.finished.indexOf('c') < ex.started.indexOf('d'));
  assert.deepEqual(Object.fromEntries(r.outcomes), { a: 'ran', b: 'up-to-date', c: 'restored', d: 'ran' });
  assert.equal(r.interrupted, false);
  assert.equal(r.halted, null);
});

test('-j bounds how many targets hold a slot at once, and every target still runs', async () => {
  const deps = Object.fromEntries(['t1', 't2', 't3', 't4', 't5', 't6'].map((n) => [n, [] as string[]]));
  const ex = new FakeExecutor(Object.fromEntries(Object.keys(deps).map((n) => [n, 'ran' as const])));
  const r = await schedule(deps, ex, { jobs: 2 }).done;
  assert.equal(ex.maxRunning, 2);
  assert.equal(ex.started.length, 6);
  assert.ok([...r.outcomes.values()].every((o) => o === 'ran'));

  const one = new FakeExecutor(Object.fromEntries(Object.keys(deps).map((n) => [n, 'ran' as const])));
  await schedule(deps, one, { jobs: 1 }).done;
  assert.equal(one.maxRunning, 1);
});

test('a runner that takes two jobs per -j slot (the worker pool) is handed 2 × -j at once, and every target still runs', async () => {
  const deps = Object.fromEntries(['t1', 't2', 't3', 't4', 't5', 't6', 't7'].map((n) => [n, [] as string[]]));
  const ex = new FakeExecutor(Object.fromEntries(Object.keys(deps).map((n) => [n, 'ran' as const])));
  const r = await schedule(deps, ex, { jobs: 2, handOff: 4 }).done;
  assert.equal(ex.maxRunning, 4);
  assert.equal(ex.started.length, 7);
  assert.ok([...r.outcomes.values()].every((o) => o === 'ran'));
});

test('after a failure without -k nothing new starts; what was left is blocked by the stop', async () => {
  // a (fails) ; b --> c
  const ex = new FakeExecutor();
  const { done, blocked } = schedule({ a: [], b: [], c: ['b'] }, ex, { jobs: 2 });
  await ex.startedOf('b');
  ex.work.get('a')!.resolve('failed'); // a fails while b still runs
  await new Promise((r) => setImmediate(r));
  ex.work.get('b')!.resolve('ran');
  const r = await done;
  assert.deepEqual(ex.started, ['a', 'b']);
  assert.equal(r.outcomes.get('c'), 'blocked');
  assert.deepEqual(blocked, [['c', STOPPED_AFTER_FAILURE]]);
});

test("-k keeps building independent targets and blocks only the failed target's dependents, transitively", async () => {
  // a (fails) --> b --> c ; x --> y ; g (gate fails) --> h
  const ex = new FakeExecutor({ a: 'failed', x: 'ran', y: 'ran', g: 'gate-failed' });
  const { done, blocked } = schedule({ a: [], b: ['a'], c: ['b'], x: [], y: ['x'], g: [], h: ['g'] }, ex, {
    jobs: 1,
    keepGoing: true,
  });
  const r = await done;
  assert.deepEqual(ex.started.sort(), ['a', 'g', 'x', 'y']);
  assert.deepEqual(Object.fromEntries(r.outcomes), {
    a: 'failed',
    b: 'blocked',
    c: 'blocked',
    x: 'ran',
    y: 'ran',
    g: 'gate-failed',
    h: 'blocked',
  });
  assert.deepEqual(blocked.sort(), [
    ['b', 'a'],
    ['c', 'b'],
    ['h', 'g'],
  ]);
});

test('interruption cancels running work, starts nothing queued and blocks nothing', async () => {
  // a --> c ; b ; q (waits for a slot)
  const ex = new FakeExecutor();
  const { s, done, blocked } = schedule({ a: [], b: [], q: [], c: ['a'] }, ex, { jobs: 2 });
  await ex.startedOf('b');
  await s.interrupt();
  const r = await done;
  assert.equal(ex.cancelled, 1);
  assert.deepEqual(ex.started, ['a', 'b']);
  assert.equal(r.interrupted, true);
  assert.equal(r.outcomes.get('a'), 'failed');
  assert.equal(r.outcomes.has('c'), false);
  assert.deepEqual(blocked, []);
});

test('an executor that throws halts the build: running work is cancelled, nothing new starts, the error comes back', async () => {
  // boom ; slow --> after
  const boom = new Error('disk full');
  const ex = new FakeExecutor({ boom });
  const { done } = schedule({ slow: [], boom: [], after: ['slow'] }, ex, { jobs: 2, keepGoing: true });
  const r = await done;
  assert.equal(r.halted?.error, boom);
  assert.equal(ex.cancelled, 1);
  assert.equal(r.outcomes.get('slow'), 'failed'); // cancelled
  assert.equal(ex.started.includes('after'), false);
});

/** Up-to-date targets settle in promise callbacks alone (as the executor's decisions do); `runs` settle on a later turn, as a rule's result from a worker. */
class DecidingExecutor implements TargetExecutor {
  started: string[] = [];
  constructor(
    private readonly runs: Set<string>,
    private readonly ends: Outcome = 'ran',
    private readonly decided: Record<string, Outcome> = {},
  ) {}
  async execute(name: string): Promise<Outcome> {
    this.started.push(name);
    if (this.decided[name]) return this.decided[name]!;
    if (!this.runs.has(name)) return 'up-to-date';
    await new Promise<void>((r) => setImmediate(r));
    return this.ends;
  }
  async cancel(): Promise<void> {}
}

test('a target that ran has its dependents started within a batch or two, not after every up-to-date decision of the graph', async () => {
  // edit --> next, beside 6 layers of 100 up-to-date targets (u_k_i --> u_(k+1)_i), as a graph with
  // one edited source: before the turns, next started after all 600 decisions (position 601)
  const deps: Record<string, string[]> = { edit: [] };
  for (let k = 0; k < 6; k++) for (let i = 0; i < 100; i++) deps[`u_${k}_${i}`] = k === 0 ? [] : [`u_${k - 1}_${i}`];
  deps.next = ['edit'];
  const ex = new DecidingExecutor(new Set(['edit', 'next']));
  const r = await schedule(deps, ex, { jobs: 2 }).done;
  const at = ex.started.indexOf('next');
  assert.ok(at > 0 && at <= 300, `next started at position ${at} of ${ex.started.length}`);
  assert.equal(ex.started.length, 602);
  assert.equal(r.outcomes.get('next'), 'ran');
  assert.equal([...r.outcomes.values()].filter((o) => o === 'up-to-date').length, 600);
});

test('the dependents made ready by a target that ran start ahead of the targets queued before them, in plan order', async () => {
  // a (runs) --> b, c ; u_i (up to date) --> w_i, for 40 i: the w_i are queued when a's result arrives
  const deps: Record<string, string[]> = { a: [] };
  for (let i = 0; i < 40; i++) deps[`u_${i}`] = [];
  deps.b = ['a'];
  deps.c = ['a'];
  for (let i = 0; i < 40; i++) deps[`w_${i}`] = [`u_${i}`];
  const ex = new DecidingExecutor(new Set(['a', 'b', 'c']));
  const r = await schedule(deps, ex, { jobs: 2 }).done;
  const at = (n: string) => ex.started.indexOf(n);
  assert.ok(at('b') < at('c'), 'b before c, as in the plan');
  assert.ok(at('c') < at('w_0'), `b and c ahead of the queued w_i: ${ex.started.slice(38, 46).join(' ')}`);
  assert.equal(ex.started.length, 83);
  assert.equal(r.outcomes.get('c'), 'ran');
});

test('a target that ran has its dependents started at the next dispatch, not after the rest of its batch', async () => {
  // edit (runs) --> next, beside 600 up-to-date roots: all 601 roots are one batch. The dependent
  // of the target that ran starts at the first dispatch after its result, within the batch
  // (before, at position 602: after every root of the batch).
  const deps: Record<string, string[]> = { edit: [] };
  for (let i = 0; i < 600; i++) deps[`u_${i}`] = [];
  deps.next = ['edit'];
  const ex = new DecidingExecutor(new Set(['edit', 'next']));
  const r = await schedule(deps, ex, { jobs: 2 }).done;
  const at = ex.started.indexOf('next');
  assert.ok(at > 0 && at <= 3 * YIELD_EVERY, `next started at position ${at} of ${ex.started.length}`);
  assert.equal(ex.started.length, 602);
  assert.equal(r.outcomes.get('next'), 'ran');
});

test('after a failure, the dependents of a target that ran are blocked, not started', async () => {
  // f (a recorded gate failure, replayed at its decision) and a (runs) in one batch with 40
  // up-to-date roots: a's result arrives after the stop, so its dependent b never starts
  const deps: Record<string, string[]> = { f: [], a: [] };
  for (let i = 0; i < 40; i++) deps[`u_${i}`] = [];
  deps.b = ['a'];
  const ex = new DecidingExecutor(new Set(['a']), 'ran', { f: 'gate-failed' });
  const { done, blocked } = schedule(deps, ex, { jobs: 2 });
  const r = await done;
  assert.equal(r.outcomes.get('a'), 'ran');
  assert.ok(!ex.started.includes('b'), `started: ${ex.started.join(' ')}`);
  assert.deepEqual(blocked, [['b', STOPPED_AFTER_FAILURE]]);
});

test('a failure known at its decision stops the build as before the turns: its batch is decided, the next is blocked', async () => {
  // 40 up-to-date roots, then f (a recorded gate failure, replayed at its decision, past the first
  // turn), each root with a dependent: without -k every root is decided and every dependent blocked
  const deps: Record<string, string[]> = {};
  for (let i = 0; i < 40; i++) deps[`u_${i}`] = [];
  deps.f = [];
  for (let i = 0; i < 40; i++) deps[`w_${i}`] = [`u_${i}`];
  const ex = new DecidingExecutor(new Set(), 'ran', { f: 'gate-failed' });
  const { done, blocked } = schedule(deps, ex, { jobs: 2 });
  const r = await done;
  assert.equal([...r.outcomes.values()].filter((o) => o === 'up-to-date').length, 40);
  assert.equal(r.outcomes.get('f'), 'gate-failed');
  assert.equal(blocked.length, 40);
  assert.ok(blocked.every(([n, by]) => n.startsWith('w_') && by === STOPPED_AFTER_FAILURE));
});
