// The engine's RuleRunner (runner/rule-runner.ts): a pool of rule workers. Jobs go to an idle
// worker (created lazily, at most `size`); a worker's stdout/stderr are captured and forwarded as
// log lines, so rules cannot corrupt --json output. A worker takes tens of milliseconds to start
// (a V8 isolate, Node's bootstrap, the rule's modules), so when the pool creates one for a job it
// also starts one spare (while below `size`): the next ready job — a dependent, or a sibling of
// the first — finds a worker already started instead of waiting for one. A build that runs
// nothing starts none; at most one worker is ever idle for that reason. A build from a fresh state
// directory may have its workers started before the pool exists (prestartWorkers).
// abortAll() asks rules to stop (ctx.signal) and terminates their workers after a grace period.
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type { FromWorker } from './protocol.ts';
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

interface Slot {
  worker: Worker;
  busy: number | null;
}
interface Pending {
  resolve(r: RuleOutcome): void;
  hooks: JobHooks;
}

export class WorkerPool implements RuleRunner {
  private slots: Slot[] = [];
  private pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly workerUrl: URL,
    /**
     * The resident server's workers started ahead (fresh: no job run, no rule loaded); each one
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
    const slot: Slot = { worker, busy: null };
    const forward = (stream: NodeJS.ReadableStream): void => {
      let buf = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (slot.busy !== null) this.pending.get(slot.busy)?.hooks.log(line);
        }
      });
    };
    forward(worker.stdout);
    forward(worker.stderr);
    worker.on('message', (m: FromWorker) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'log') p.hooks.log(m.line);
      else if (m.type === 'progress') p.hooks.progress(m.done, m.total, m.unit);
      else {
        this.pending.delete(m.id);
        slot.busy = null;
        p.resolve(m.type === 'done' ? { ok: true, value: m.result } : { ok: false, error: m.error });
      }
    });
    const onDeath = (why: string): void => {
      this.slots = this.slots.filter((s) => s !== slot);
      if (slot.busy !== null) {
        const p = this.pending.get(slot.busy);
        this.pending.delete(slot.busy);
        p?.resolve({ ok: false, error: { kind: this.closed ? 'aborted' : 'rule-error', message: why } });
      }
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
    let slot = this.slots.find((s) => s.busy === null);
    if (!slot && this.slots.length < this.size) {
      slot = this.spawn();
      if (this.slots.length < this.size) this.spawn(); // the spare
    }
    if (!slot) throw new Error('internal error: worker pool over capacity; please report');
    slot.busy = id;
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, hooks });
      slot.worker.postMessage({ type: 'run', job: { ...job, id } });
    });
  }

  /** Ask every running rule to stop, then terminate the workers after `graceMs`. */
  async abortAll(graceMs: number): Promise<void> {
    this.closed = true;
    for (const s of this.slots) if (s.busy !== null) s.worker.postMessage({ type: 'abort', id: s.busy });
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
