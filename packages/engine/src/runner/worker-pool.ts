// The engine's RuleRunner (runner/rule-runner.ts): a pool of rule workers. Jobs go to an idle
// worker (created lazily, at most `size`); a worker's stdout/stderr are captured and forwarded as
// log lines, so rules cannot corrupt --json output. A worker takes tens of milliseconds to start
// (a V8 isolate, Node's bootstrap, the rule's modules), so when the pool creates one for a job it
// also starts one spare (while below `size`): the next ready job — a dependent, or a sibling of
// the first — finds a worker already started instead of waiting for one. A build that runs
// nothing starts none; at most one worker is ever idle for that reason. A build from a fresh state
// directory may have its workers started before the pool exists (prestartWorkers).
// When every worker is busy, a job waits ON a worker, behind its running job (at most one each,
// HAND_OFF_DEPTH): the worker starts it the moment it ends the other, without a round trip through
// the main thread, which may be busy committing. Still at most `size` rules run at once. A worker
// that goes idle takes such a waiting job back from a busy worker (job-queue.ts: one
// compare-and-swap settles which of the two runs it), so a long rule never holds a short one.
// hooks.started tells when a job really starts. abortAll() asks rules to stop (ctx.signal),
// answers waiting jobs at once, and terminates the workers after a grace period.
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { claimCells, offer, takeBack } from './job-queue.ts';
import type { FromWorker, JobFailure } from './protocol.ts';
import type { JobHooks, RuleJob, RuleOutcome, RuleRunner } from './rule-runner.ts';

/**
 * Workers started before a pool asked for one (prestartWorkers), waiting to be adopted by the
 * first pool of the same worker module. Unreferenced until adopted: they never keep the process
 * alive, and one that dies meanwhile leaves the list.
 */
const early: { url: string; worker: Worker; drop(): void }[] = [];

/**
 * Start `n` rule workers now, for a build that will certainly run rules (one from a fresh state
 * directory): a worker takes ~25–40 ms to come online and load its module, which then overlaps
 * with the command's start-up (compiling the pipeline) instead of delaying its first rule.
 */
export function prestartWorkers(workerUrl: URL, n: number): void {
  const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
  for (let i = 0; i < n; i++) {
    const worker = new Worker(workerUrl, { stdout: true, stderr: true });
    worker.unref();
    const gone = (): void => {
      const at = early.findIndex((e) => e.worker === worker);
      if (at >= 0) early.splice(at, 1);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    early.push({
      url: workerUrl.href,
      worker,
      drop: () => {
        worker.off('error', gone);
        worker.off('exit', gone);
      },
    });
  }
}

/** How many prestarted workers wait for a pool (tests). */
export function prestartedWaiting(): number {
  return early.length;
}

/** Jobs handed to one worker at once: the running one and one waiting behind it. */
export const HAND_OFF_DEPTH = 2;

interface Slot {
  worker: Worker;
  /** The jobs handed to this worker, in order: the first runs, the second waits behind it. */
  jobs: number[];
  /** Shared with the worker: the ids of the jobs waiting on it that the pool may still take back. */
  cells: Int32Array;
  dead: boolean;
}
interface Pending {
  resolve(r: RuleOutcome): void;
  hooks: JobHooks;
  job: RuleJob;
  /** The worker it was handed to (null until placed). */
  slot: Slot | null;
  /** The cell it may be taken back on while it waits behind a running job (else -1). */
  cell: number;
}

export class WorkerPool implements RuleRunner {
  private slots: Slot[] = [];
  private pending = new Map<number, Pending>();
  /** From 1: id 0 is the spare workers' own warm-up job, which a worker never posts about (worker.ts: WARM_UP_ID). */
  private nextId = 1;
  private closed = false;
  private balancing = false;
  /** Jobs this runner takes per -j slot (the scheduler hands it -j × this many at once). */
  readonly handOffDepth = HAND_OFF_DEPTH;

  constructor(
    private readonly size: number,
    private readonly workerUrl: URL,
    /**
     * The resident server's workers started ahead (no job of a build run, no rule of the workspace
     * loaded: only worker.ts's warm-up rule, in a folder of its own); each one
     * taken is given `env` (the build's) before its first job and, like every worker, ends with the pool.
     */
    private readonly ahead?: { take: () => Worker | undefined; env: NodeJS.ProcessEnv },
  ) {}

  private spawn(): Slot {
    const taken = this.ahead?.take();
    if (taken) taken.postMessage({ type: 'env', env: { ...this.ahead!.env } });
    // node:worker_threads is loaded on the first rule run, not on every command (a no-op runs none).
    const at = taken ? -1 : early.findIndex((e) => e.url === this.workerUrl.href);
    let worker: Worker;
    if (taken) worker = taken;
    else if (at >= 0) {
      const e = early.splice(at, 1)[0]!;
      e.drop();
      worker = e.worker;
      worker.ref();
    } else {
      const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
      worker = new Worker(this.workerUrl, { stdout: true, stderr: true });
    }
    const slot: Slot = { worker, jobs: [], cells: claimCells(), dead: false };
    worker.postMessage({ type: 'claims', cells: slot.cells });
    const forward = (stream: NodeJS.ReadableStream): void => {
      let buf = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const running = slot.jobs[0];
          if (running !== undefined) this.pending.get(running)?.hooks.log(line);
        }
      });
    };
    forward(worker.stdout);
    forward(worker.stderr);
    worker.on('message', (m: FromWorker) => {
      const p = this.pending.get(m.id);
      if (!p || p.slot !== slot) return; // a job taken back from this worker is answered by the other
      if (m.type === 'log') p.hooks.log(m.line);
      else if (m.type === 'progress') p.hooks.progress(m.done, m.total, m.unit);
      else {
        this.pending.delete(m.id);
        slot.jobs = slot.jobs.filter((id) => id !== m.id);
        p.resolve(m.type === 'done' ? { ok: true, value: m.result } : { ok: false, error: m.error });
        // The job that waited behind it starts now (the worker claims it as it ends this one). Its
        // start is told after this job's result has been handled (a microtask later).
        const next = slot.jobs[0];
        if (next !== undefined) queueMicrotask(() => this.pending.get(next)?.hooks.started?.());
        else this.balanceSoon();
      }
    });
    const onDeath = (why: string): void => {
      if (slot.dead) return;
      slot.dead = true;
      this.slots = this.slots.filter((s) => s !== slot);
      const jobs = slot.jobs;
      slot.jobs = [];
      // A job that waited behind the one that took the worker down never started: it goes elsewhere.
      for (const id of jobs)
        if (!this.closed && this.takeBack(slot, id)) this.place(id);
        else this.answer(id, { kind: this.closed ? 'aborted' : 'rule-error', message: why });
    };
    worker.on('error', (e) => onDeath(`the rule crashed its worker: ${e.stack ?? e.message}`));
    worker.on('exit', (code) => onDeath(`the rule's worker exited with code ${code}`));
    this.slots.push(slot);
    return slot;
  }

  /** Every job runs in a worker of this process: one -j slot each. */
  readonly usesLocalSlot = true;

  run(job: RuleJob, hooks: JobHooks): Promise<RuleOutcome> {
    // after abortAll() or close(): no worker is started (none would ever be terminated)
    if (this.closed)
      return Promise.resolve({ ok: false, error: { kind: 'aborted', message: 'the worker pool is closed' } });
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, hooks, job, slot: null, cell: -1 });
      this.place(id);
    });
  }

  /** Give a job to an idle worker (starting one while below `size`), else let it wait on the least busy. */
  private place(id: number): void {
    let slot = this.slots.find((s) => s.jobs.length === 0);
    if (!slot && this.slots.length < this.size) {
      slot = this.spawn();
      if (this.slots.length < this.size) this.spawn(); // the spare
    }
    if (!slot)
      for (const s of this.slots)
        if (s.jobs.length < HAND_OFF_DEPTH && (!slot || s.jobs.length < slot.jobs.length)) slot = s;
    if (!slot) throw new Error('internal error: worker pool over capacity; please report');
    this.hand(slot, id);
  }

  /** Post a job to a worker: it starts at once on an idle worker, else it waits behind the running job. */
  private hand(slot: Slot, id: number): void {
    const p = this.pending.get(id)!;
    p.slot = slot;
    slot.jobs.push(id);
    const waits = slot.jobs.length > 1;
    p.cell = waits ? offer(slot.cells, id) : -1;
    slot.worker.postMessage({ type: 'run', job: { ...p.job, id }, ...(waits ? { claim: p.cell } : {}) });
    if (!waits) p.hooks.started?.();
  }

  /** Take a waiting job back from its worker: false when the worker has claimed it (it runs there). */
  private takeBack(slot: Slot, id: number): boolean {
    const p = this.pending.get(id);
    return p !== undefined && p.cell >= 0 && takeBack(slot.cells, p.cell, id);
  }

  /**
   * A worker went idle: once the jobs its end made ready have been handed out (a turn later), an
   * idle worker takes back a job that still waits behind a running one.
   */
  private balanceSoon(): void {
    if (this.balancing) return;
    this.balancing = true;
    setImmediate(() => {
      this.balancing = false;
      if (this.closed) return;
      for (const idle of this.slots) {
        if (idle.jobs.length > 0) continue;
        const busy = this.slots.find((s) => s.jobs.length > 1);
        if (!busy) return;
        const id = busy.jobs[1]!;
        // Fails when the busy worker has just claimed it (its job ended): then it runs there.
        if (!this.takeBack(busy, id)) continue;
        busy.jobs.splice(1, 1);
        this.hand(idle, id);
      }
    });
  }

  private answer(id: number, error: JobFailure): void {
    const p = this.pending.get(id);
    this.pending.delete(id);
    p?.resolve({ ok: false, error });
  }

  /** Ask every running rule to stop, then terminate the workers after `graceMs`. */
  async abortAll(graceMs: number): Promise<void> {
    this.closed = true;
    for (const s of this.slots) {
      // A job still waiting on a worker is answered at once; a running one is asked to stop.
      for (const id of s.jobs.slice(1)) {
        if (!this.takeBack(s, id)) continue;
        s.jobs = s.jobs.filter((j) => j !== id);
        this.answer(id, { kind: 'aborted', message: 'the build stopped before this rule started' });
      }
      for (const id of s.jobs) s.worker.postMessage({ type: 'abort', id });
    }
    const deadline = Date.now() + graceMs;
    while (this.pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.slots = [];
  }
}
