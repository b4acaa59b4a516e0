// Where a target's rule runs. The build hands the rule's job (protocol.ts: the same for every
// runner) to the target's RuleRunner and gets the same outcome back wherever the rule ran, so
// committing, caching, reporting and exit codes never depend on the place:
//   local  — the build's worker pool (worker_threads on this machine), one -j slot per rule
//   slurm  — a Slurm batch job (runner/slurm/slurm-runner.ts), no local slot: the cluster schedules it
// A new executor (a queue such as BullMQ, another batch system) is one more RuleRunner here.
import type { SlurmExecutor } from '../api/index.ts';
import type { Job, JobFailure, JobSuccess } from './protocol.ts';
import { SlurmRunner } from './slurm/slurm-runner.ts';
import { type JobHooks, WorkerPool } from './worker-pool.ts';

export type RuleOutcome = { ok: true; value: JobSuccess } | { ok: false; error: JobFailure };

/** What a runner needs to know of the target beyond its job. */
export interface RunTarget {
  name: string;
  /** Absent or local: the worker pool. */
  executor?: SlurmExecutor;
  /** Secret env var names (a remote runner keeps their values out of files). */
  secrets: readonly string[];
}

export interface RuleRunner {
  /** Whether a running rule holds one of the build's -j slots (a cluster job does not). */
  readonly usesLocalSlot: boolean;
  run(job: Omit<Job, 'id'>, hooks: JobHooks, target: RunTarget): Promise<RuleOutcome>;
  /** Stop every rule in flight (Ctrl-C, a halted build) and wait, up to about graceMs, until they stopped. */
  abortAll(graceMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The runners of one build, each created on first use. */
export class RuleRunners {
  private local: (RuleRunner & { pool: WorkerPool }) | null = null;
  private slurm: SlurmRunner | null = null;

  constructor(private readonly opts: { jobs: number; workerUrl: URL; root: string; stagingRoot: string }) {}

  for(t: RunTarget): RuleRunner {
    if (t.executor?.kind === 'slurm') {
      this.slurm ??= new SlurmRunner(this.opts.root, this.opts.stagingRoot);
      const slurm = this.slurm;
      return { usesLocalSlot: false, run: (job, hooks, target) => slurm.run(job, hooks, { executor: target.executor!, secrets: target.secrets }), abortAll: (g) => slurm.abortAll(g), close: () => slurm.close() };
    }
    if (!this.local) {
      const pool = new WorkerPool(this.opts.jobs, this.opts.workerUrl);
      this.local = { pool, usesLocalSlot: true, run: (job, hooks) => pool.run(job, hooks), abortAll: (g) => pool.abortAll(g), close: () => pool.close() };
    }
    return this.local;
  }

  async abortAll(graceMs: number): Promise<void> {
    await Promise.all([this.local?.abortAll(graceMs), this.slurm?.abortAll(graceMs)]);
  }

  async close(): Promise<void> {
    await this.local?.close();
    await this.slurm?.close();
  }
}
