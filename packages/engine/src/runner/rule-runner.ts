// Where a target's rule runs (ninja's CommandRunner). The target executor
// (executor/target-executor.ts) hands the rule's job (protocol.ts: the same for every runner) to
// the target's RuleRunner and gets the same outcome back wherever the rule ran, so committing,
// caching, reporting and exit codes never depend on the place:
//   local  — the build's worker pool (runner/worker-pool.ts, worker_threads on this machine), one -j slot per rule
//   slurm  — a Slurm batch job (runner/slurm/slurm-runner.ts), no local slot: the cluster schedules it
// RuleRunners (runner/rule-runners.ts) picks a target's runner from its declared executor. A new
// executor (a queue, another batch system) is one more RuleRunner: it must leave every output at
// job.outputs[i].tmp, hashed as runner/hash-output.ts does; it neither decides, commits nor caches.
import type { SlurmExecutor } from '../api/index.ts';
import type { Job, JobFailure, JobSuccess } from './protocol.ts';

/** A job as the executor gives it (the runner numbers its own jobs). */
export type RuleJob = Omit<Job, 'id'>;

/** How a rule reports while it runs. */
export interface JobHooks {
  /**
   * The rule starts now. A runner may take a job before it can start it (the worker pool queues
   * one behind a running rule); one that never calls this leaves the start at the hand-over.
   */
  started?(): void;
  log(line: string): void;
  progress(done: number, total: number, unit?: string): void;
}

/** A rule's own failure is `{ ok: false }`, never a rejection; a stopped job is kind 'aborted'. */
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
  /**
   * How many jobs it takes per -j slot (default 1): the worker pool takes 2, one running and one
   * waiting behind it on the same worker, while still running at most -j at once.
   */
  readonly handOffDepth?: number;
  run(job: RuleJob, hooks: JobHooks, target: RunTarget): Promise<RuleOutcome>;
  /** Stop every rule in flight (Ctrl-C, a halted build) and wait, up to about graceMs, until they stopped. */
  abortAll(graceMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The runners of one build: which one runs a target; stopping and closing reach all of them. */
export interface RunnerChoice {
  for(target: RunTarget): RuleRunner;
  abortAll(graceMs: number): Promise<void>;
  close(): Promise<void>;
}
