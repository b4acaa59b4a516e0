// What passes between the build (on the submitting machine) and `rc1-build __run-target` (on the
// job's node) through the target's staging dir, .rc1/slurm/<target>/:
//   job.json       the rule's job, exactly what the local worker pool would get (paths absolute),
//                  minus the values of secret env vars: only their names; the node takes their
//                  values from its environment (sbatch --export=ALL carries the build's)
//   job.sh         the batch script: `exec node <rc1-build> __run-target job.json`
//   slurm-<id>.out the job's stdout and stderr: the rule's log lines, appended to across requeues
//   result.json    written last, atomically, by __run-target: success (the outputs' digests) or the
//                  rule's failure, tagged with the job id and restart count it belongs to
//   progress.json  the rule's last ctx.progress (replaced atomically)
// In the "shared filesystem" mode the node and the build see the same workspace: inputs are read
// in place, outputs are written to the build's temporary paths under .rc1/tmp/ and committed by
// the build after it has hashed them again. In the "remote-cache" mode (remote-staging.ts) the
// node sees none of this directory: job.json travels inside job.sh (sbatch sends the script), the
// job's log is in the node's scratch dir, and the result comes back as an /ac/ document of the
// remote cache; the bytes of inputs and outputs move as /cas/ objects.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Check, UserRemoteCache } from '../../api/index.ts';
import type { Job, JobFailure } from '../protocol.ts';
import { writeFileAtomic } from '../../util/fs.ts';

export const JOB_FILE_FORMAT = 1;

/** How inputs reach the job's node and outputs come back. */
export type StagingMode = 'shared-fs' | 'remote-cache';

export interface JobFile {
  format: typeof JOB_FILE_FORMAT;
  staging: StagingMode;
  /** The job for the worker harness; env holds no secret's value (see `secrets`). */
  job: Omit<Job, 'id'>;
  /** Names of secret env vars: their values come from the node's environment. */
  secrets: string[];
  /** Seconds a rule gets to stop after SIGTERM (scancel, preemption, requeue) before the harness exits. */
  graceS: number;
  /** staging 'remote-cache': the cache, the files to fetch, where the result goes. */
  remote?: RemoteStagingSpec;
}

export interface ResultOutput {
  path: string;
  dir: boolean;
  sha256: string;
  size: number;
}

export type NodeResult = {
  format: typeof JOB_FILE_FORMAT;
  /** SLURM_JOB_ID and SLURM_RESTART_COUNT of the run that wrote it (null outside Slurm). */
  jobId: string | null;
  restart: number;
  host: string;
  ms: number;
  /** staging 'remote-cache': the job's last log lines (the build may not see the node's log file). */
  logTail?: string[];
} & (
  | {
      ok: true;
      value: {
        checks?: Check[];
        summary?: string;
        rule: { name: string; version: number };
        /** staging 'remote-cache': with each directory's listing (RemoteOutput). */
        outputs: (ResultOutput | RemoteOutput)[];
      };
    }
  | { ok: false; error: JobFailure }
);

export function stagingFiles(dir: string): {
  job: string;
  script: string;
  result: string;
  progress: string;
  submitted: string;
  log: (jobId: string) => string;
  logPattern: string;
} {
  return {
    job: path.join(dir, 'job.json'),
    script: path.join(dir, 'job.sh'),
    result: path.join(dir, 'result.json'),
    progress: path.join(dir, 'progress.json'),
    submitted: path.join(dir, 'submitted.json'),
    log: (id) => path.join(dir, `slurm-${id}.out`),
    logPattern: path.join(dir, 'slurm-%j.out'),
  };
}

export function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

export function writeJson(file: string, value: unknown, mode?: number): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 1)}\n`);
  if (mode !== undefined) fs.chmodSync(file, mode);
}

// staging 'remote-cache' (remote-staging.ts)

/** The remote cache, as the node needs it: no key, token or secret, only the names of the variables holding them. */
export type StagingRemote = Pick<UserRemoteCache, 'url' | 'authHeader' | 'timeoutMs' | 'maxInFlight' | 's3'> & {
  /** The variable holding the Ed25519 key the node signs its result with (the build's signingKeyEnv). */
  signingKeyEnv?: string;
};

/** One file the node fetches: where it is on the build's machine, its digest and size. */
export interface StagedFile {
  path: string;
  sha256: string;
  size: number;
  exec?: boolean;
}

export interface RemoteStagingSpec {
  remote: StagingRemote;
  /** /ac/ key of the node's result document (sha256 of a random nonce). */
  resultKey: string;
  /** The node's scratch dir (absolute); the job works in scratchJobDir's <scratch>/rc1-<uid>/rc1-<target>-<12 hex>. */
  scratch: string;
  /** The compiled rule module and every input file (directories expanded). */
  files: StagedFile[];
  /** Symbolic links among the inputs (inside input directories): path → target. */
  links: Record<string, string>;
}

/** A directory output's content, as the node sent it: relative path → [sha256, size]; links. */
export interface OutputListing {
  files: Record<string, [string, number]>;
  links?: Record<string, string>;
}

/** What the node's result document says of each output. */
export interface RemoteOutput {
  path: string;
  dir: boolean;
  sha256: string;
  size: number;
  /** Directory outputs only. */
  listing?: OutputListing;
}
