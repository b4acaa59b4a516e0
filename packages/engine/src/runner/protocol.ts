// Messages between the engine and its rule workers (worker_threads). Plain structured-clone data.
import type { Check } from '../api/index.ts';

export interface JobOutput {
  path: string;
  dir: boolean;
  tmp: string /** Its declared name (named outputs). */;
  name?: string;
}

export interface Job {
  id: number;
  target: string;
  gate: boolean;
  report?: string;
  /** Compiled rule module (absolute path). */
  module: string;
  ruleFile: string;
  root: string;
  /** The target's state dir (packages/engine/src/state/target-state-dir.ts), absolute; created when the rule asks for it. */
  stateDir: string;
  /** The target's declared state paths (workspace-relative, under .rc1/): ctx.state() hands out only these. */
  state?: string[];
  profile: string;
  params: Record<string, unknown>;
  args: Record<string, unknown>;
  forced: boolean;
  /** sha256 of the rule module and its code closure (fingerprint.ts codeHash). */
  codeHash: string;
  env: Record<string, string | undefined>;
  inputs: Record<string, string[]>;
  outputs: JobOutput[];
  /** Temporary outputs are flat files/dirs in tmpDir named tmpPrefix + index + basename. */
  tmpDir: string;
  tmpPrefix: string;
  /** The output cache's directory: the worker stores its outputs' objects there before the commit. */
  cacheDir?: string;
  /**
   * The fingerprint key, when the worker may also write the cache entry (after the objects): for
   * a target that declares no secrets, whose summary the engine would not redact. Otherwise the
   * engine writes the entry after the commit.
   */
  cacheKey?: string;
}

export interface HashedOutput {
  path: string;
  /** Where the output is now (its temporary path). */
  tmp: string;
  dir: boolean;
  sha256: string;
  size: number;
  /** Directory outputs: relative file → [sha256, size, mtimeNs, ino, ctimeNs]. File outputs: one entry ''. */
  files: Record<string, [string, number, bigint, bigint, bigint]>;
  /** Directory outputs: relative path → target of each symbolic link. */
  links?: Record<string, string>;
  statTimeNs: bigint;
  /** Its bytes were fsynced when hashed (else the commit defers the fsync to the end of the build). */
  synced?: boolean;
}

export interface JobSuccess {
  checks?: Check[];
  summary?: string;
  rule: { name: string; version: number };
  outputs: HashedOutput[];
  /** The worker stored the objects and wrote the cache entry (Job.cacheKey). */
  cached?: boolean;
  /** How long the rule itself ran (ms): what running it again would cost. */
  ruleMs?: number;
}

export interface ParamIssue {
  key: string;
  message: string;
}

export interface JobFailure {
  message: string;
  stack?: string;
  kind: 'rule-error' | 'param-error' | 'contract-error' | 'aborted';
  paramIssues?: ParamIssue[];
}

export type ToWorker =
  /** claim: posted behind a running job, the cell the pool may take it back on until the worker claims it (job-queue.ts). */
  | { type: 'run'; job: Job; claim?: number }
  /** The cells the claims are settled on, sent once before any job (job-queue.ts). */
  | { type: 'claims'; cells: Int32Array }
  | { type: 'abort'; id: number }
  /** A worker the resident server started ahead takes the build's environment before its first job. */
  | { type: 'env'; env: Record<string, string | undefined> }
  /** A worker the resident server started ahead runs one small rule of its own while idle (worker.ts: warmUp). */
  | { type: 'warm-up' };

export type FromWorker =
  | { type: 'log'; id: number; line: string }
  | { type: 'progress'; id: number; done: number; total: number; unit?: string }
  | { type: 'done'; id: number; result: JobSuccess }
  | { type: 'error'; id: number; error: JobFailure };
