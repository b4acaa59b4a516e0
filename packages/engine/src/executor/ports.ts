// What the target executor is given (STYLE 7; ninja's DiskInterface and CommandRunner): every
// collaborator that touches disk, processes, the clock or the environment is an interface here,
// so the executor runs in memory in tests (test/unit/executor.test.ts) and on the workspace in a
// build (build/workspace-ports.ts wires these to the Workspace's trace, committer, cache, …).
import type { ResolvedTarget } from '../graph/resolved.ts';
import type { Decision } from '../rebuild/decide.ts';
import type { CacheEntry, SourceOf } from '../cache/output-cache.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import type { HashedOutput, JobOutput } from '../runner/protocol.ts';
import type { RunnerChoice } from '../runner/rule-runner.ts';
import type { ErrorReport } from '../report/error-report.ts';
import type { BuildEvent, Counts } from '../report/events.ts';
import type { GitInfo } from '../util/git-info.ts';

/** Milliseconds for durations (monotonic) and the wall-clock time for records. */
export interface Clock {
  now(): number;
  date(): Date;
}

export const systemClock: Clock = { now: () => performance.now(), date: () => new Date() };

/** The workspace's git state for error reports (util/git-info.ts GitLookup): asked once per build, asynchronously. */
export interface GitPort {
  /** Start the lookup (when the first rule starts), without waiting for it. */
  start(): void;
  get(): Promise<GitInfo>;
}

/** WHETHER a target must run (rebuild/decide.ts), and the input paths a run gets. */
export interface Rebuilder {
  decide(t: ResolvedTarget): Promise<Decision>;
  resolveInputs(t: ResolvedTarget): Promise<Record<string, string[]>>;
}

/**
 * The output cache as the executor uses it. The local lookup is the rebuilder's (a `restore`
 * decision carries the entry); `lookup` is the step after a local miss, where a further tier
 * (the remote cache, cache/remote/remote-cache.ts) may hold the build.
 */
export interface OutputStore {
  /** A local miss for this key: the entry another tier holds (fetched into the local cache), or null. */
  lookup(t: ResolvedTarget, key: string): Promise<CacheEntry | null>;
  /** Where the cache keeps its objects (a worker stores its outputs' objects there before the commit). */
  readonly dir: string;
  /** Copy a cached build's outputs to their temporary paths; false when the entry is corrupt (it is dropped). */
  materialize(entry: CacheEntry, tmpOf: (outputPath: string) => string): boolean;
  /** Store copies of outputs just committed, under their key (a remote tier uploads from here). */
  put(entry: Omit<CacheEntry, 'format'>, sourceOf: SourceOf): void;
  /** The rule's worker already stored the objects and wrote this entry (JobSuccess.cached): only tell the remote tier. */
  stored(entry: Omit<CacheEntry, 'format'>): void;
}

/** The verifying trace and the workspace's outputs (state/commit-outputs.ts, state/trace-log.ts). */
export interface TargetState {
  /** The target's record before this build (early cutoff: were its outputs unchanged?). */
  previous(name: string): TargetRecord | undefined;
  /** Move the temporary outputs into place and record the target (journaled, crash-safe). */
  /** `redoMs`: what running the target again would cost (its rule's run time; default record.ms). */
  commit(record: TargetRecord, hashed: HashedOutput[], redoMs?: number): void;
  /** Record a failed run (no outputs move). */
  recordFailure(record: TargetRecord): void;
}

/** Temporary outputs of one job, and the files a run leaves for people (ninja's DiskInterface). */
export interface ExecutorDisk {
  /** The folder of temporary outputs (.rc1/tmp). */
  readonly tmpDir: string;
  /** Fresh temporary names for a target's outputs: prefix + index + basename under tmpDir. */
  tempPaths(t: ResolvedTarget): { prefix: string; of: (outputPath: string) => string };
  /** Remove the temporary outputs whose names start with prefix. */
  dropTemp(prefix: string): void;
  /** Hash an output at its temporary path (runner/hash-output.ts). */
  hashOutput(o: JobOutput): HashedOutput;
  /** Write the rule's log tail (report/rule-log.ts); its path for messages. */
  writeRuleLog(target: string, lines: readonly string[]): void;
  ruleLogPath(target: string): string;
  /** Write reports/ERROR_<ts>.json; returns its workspace path. */
  writeErrorReport(r: ErrorReport): string;
}

/** The workspace facts a job carries. */
export interface JobSettings {
  root: string;
  profile: string;
  /** The target's state dir (ctx.stateDir), absolute. */
  stateDirOf(target: string): string;
  /** The config values of a target's declared params. */
  paramsOf(t: ResolvedTarget): Record<string, unknown>;
  /** Where a config key is set ("configs/dev.yaml:3:5"), or the config files when unknown. */
  locateParam(key: string): Promise<string>;
  forced: ReadonlySet<string>;
}

export interface ExecutorPorts {
  rebuilder: Rebuilder;
  /** Compile a rule module; its absolute path (config/compile-module.ts ModuleCompiler). */
  compile(rule: string): Promise<string>;
  /** Where each target's rule runs (runner/rule-runners.ts: the worker pool or Slurm). */
  runners: RunnerChoice;
  cache: OutputStore;
  state: TargetState;
  disk: ExecutorDisk;
  job: JobSettings;
  /** Environment variables (a target's env and secrets are read from here, never process.env). */
  env: Readonly<Record<string, string | undefined>>;
  clock: Clock;
  git: GitPort;
  emit(e: BuildEvent): void;
  /** The build's tallies; the executor counts every outcome but `blocked`. */
  counts: Counts;
}
