// Follows one submitted batch job until it ends: polls its state (squeue --json, then scontrol /
// sacct), streams the new lines of its output file as they appear, and notices requeues (the
// restart count grows, or a job that ran is pending again: preemption with PreemptMode=REQUEUE,
// `scontrol requeue`, a node failure). A requeued job is followed on: it is the same job, and it
// runs the rule again, which resumes from its own state (a checkpoint), never a failure.
import * as fs from 'node:fs';
import { type JobInfo, TERMINAL_STATES, queryJob } from './slurm-cli.ts';

export interface FollowHooks {
  /** One line of the job's output file (without the newline). */
  log(line: string): void;
  /** The job's state changed (first report included). */
  state?(now: JobInfo, before: JobInfo | null): void;
  /** The job was requeued: `now.restarts` is the run that comes next. */
  requeued?(now: JobInfo, before: JobInfo): void;
  /** squeue and the others failed (the controller is down or unreachable); the follower keeps trying. */
  unreachable?(error: Error, sinceMs: number): void;
  /** Called after each poll (to flush what the lines were copied to). */
  polled?(): void;
}

export interface FollowOptions {
  pollMs: number;
  /** Give up (throw) when Slurm cannot be asked for this long. */
  unreachableMs?: number;
  /** Stop following (without cancelling: that is the caller's decision). */
  signal?: AbortSignal;
  /** How to ask Slurm (default queryJob: one squeue per call; a JobQuery shares one among many jobs). */
  query?: (id: string) => Promise<JobInfo | null>;
}

/** Streams the lines appended to a file (it may not exist yet; if it shrinks, it is read from the start). */
export class LogTail {
  private offset = 0;
  private partial = '';
  constructor(
    private readonly file: string,
    private readonly onLine: (line: string) => void,
  ) {}

  /** Reads what was appended since the last call; `final`: also the last line without a newline. */
  poll(final = false): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size < this.offset) {
        this.offset = 0;
        this.partial = '';
      }
      const buf = Buffer.alloc(64 * 1024);
      while (this.offset < size) {
        const n = fs.readSync(fd, buf, 0, Math.min(buf.length, size - this.offset), this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.partial += buf.toString('utf8', 0, n);
        let nl: number;
        while ((nl = this.partial.indexOf('\n')) >= 0) {
          this.onLine(this.partial.slice(0, nl));
          this.partial = this.partial.slice(nl + 1);
        }
      }
    } finally {
      fs.closeSync(fd);
    }
    if (final && this.partial) {
      this.onLine(this.partial);
      this.partial = '';
    }
  }
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((r) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      r();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Follows job `id` until it reaches a terminal state (returned) or `opts.signal` aborts (returns
 * the last state seen). A job Slurm no longer knows (it left squeue and there is no accounting)
 * is returned as state UNKNOWN. The log is drained before returning.
 */
export async function followJob(
  id: string,
  logFile: string,
  hooks: FollowHooks,
  opts: FollowOptions,
): Promise<JobInfo> {
  const tail = new LogTail(logFile, hooks.log);
  let last: JobInfo | null = null;
  let ran = false;
  let failingSince: number | null = null;
  for (;;) {
    let now: JobInfo | null;
    try {
      now = await (opts.query ?? queryJob)(id);
      failingSince = null;
    } catch (e) {
      failingSince ??= Date.now();
      const since = Date.now() - failingSince;
      hooks.unreachable?.(e as Error, since);
      if (since > (opts.unreachableMs ?? 600_000)) throw e;
      tail.poll();
      await sleep(opts.pollMs, opts.signal);
      if (opts.signal?.aborted) {
        tail.poll(true);
        return last ?? unknown(id);
      }
      continue;
    }
    tail.poll();
    hooks.polled?.();
    if (!now) {
      tail.poll(true);
      return last && TERMINAL_STATES.has(last.state)
        ? last
        : {
            ...(last ?? unknown(id)),
            state: 'UNKNOWN',
            reason: 'the job left the queue and no accounting (sacct) knows it',
            source: last?.source ?? 'squeue',
          };
    }
    if (!last || now.state !== last.state || now.restarts !== last.restarts) {
      hooks.state?.(now, last);
      if (
        last &&
        (now.restarts > last.restarts ||
          (ran && now.state !== 'RUNNING' && now.state !== 'COMPLETING' && !TERMINAL_STATES.has(now.state)))
      ) {
        hooks.requeued?.(now, last);
        ran = false;
      }
    }
    if (now.state === 'RUNNING') ran = true;
    last = now;
    if (TERMINAL_STATES.has(now.state)) {
      tail.poll(true);
      return now;
    }
    if (opts.signal?.aborted) {
      tail.poll(true);
      return now;
    }
    await sleep(opts.pollMs, opts.signal);
    if (opts.signal?.aborted) {
      tail.poll(true);
      return now;
    }
  }
}

function unknown(id: string): JobInfo {
  return {
    id,
    state: 'UNKNOWN',
    reason: 'None',
    exitCode: null,
    signal: null,
    restarts: 0,
    node: '',
    source: 'squeue',
  };
}
