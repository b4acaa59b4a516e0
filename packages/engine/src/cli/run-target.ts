// `rc1-build __run-target <job.json>`: the internal command a Slurm batch job runs on its node.
// It runs one target's rule through the same worker harness as a local build (src/runner/worker.ts:
// params checked by the rule's schema, declared outputs only, outputs hashed), with the outputs
// left at the build's temporary paths (the staging area), and writes result.json for the build to
// collect (src/runner/slurm/job-file.ts). Log lines go to stdout, which Slurm appends to the job's
// output file; the build streams that file. SIGTERM (scancel, preemption, requeue) aborts the rule
// through ctx.signal, as Ctrl-C does locally, so a resumable rule checkpoints before it stops.
// Exit status: 0 the rule succeeded, 1 it failed, 143 it was stopped by a signal.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkerPool } from '../runner/worker-pool.ts';
import { JOB_FILE_FORMAT, type JobFile, type NodeResult, writeJson } from '../runner/slurm/job-file.ts';
import { redactor } from '../util/redact-secrets.ts';
import { rmrf } from '../util/fs.ts';

export interface RunTargetIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

export async function runTargetOnNode(jobFile: string | undefined, io: RunTargetIo, workerUrl: URL): Promise<number> {
  if (!jobFile) {
    io.err('rc1-build __run-target: usage: rc1-build __run-target <job.json> (internal: run by a Slurm batch job)\n');
    return 64;
  }
  let spec: JobFile;
  try {
    spec = JSON.parse(fs.readFileSync(jobFile, 'utf8')) as JobFile;
  } catch (e) {
    io.err(`rc1-build __run-target: cannot read ${jobFile}: ${(e as Error).message}\n`);
    return 64;
  }
  if (spec.format !== JOB_FILE_FORMAT || spec.staging !== 'shared-fs') {
    io.err(
      `rc1-build __run-target: ${jobFile}: format ${spec.format}, staging ${spec.staging}; this rc1-build runs format ${JOB_FILE_FORMAT}, staging shared-fs (is the node's rc1-build the build's?)\n`,
    );
    return 64;
  }
  const t0 = performance.now();
  const dir = path.dirname(jobFile);
  const resultFile = path.join(dir, 'result.json');
  const progressFile = path.join(dir, 'progress.json');
  const jobId = process.env.SLURM_JOB_ID ?? null;
  const restart = Number(process.env.SLURM_RESTART_COUNT ?? 0) || 0;
  const job = spec.job;
  const env = { ...job.env };
  for (const n of spec.secrets) env[n] = process.env[n];
  const redact = redactor(spec.secrets.map((n) => process.env[n]));
  const say = (line: string): void => io.out(`${redact(line)}\n`);

  // What an earlier run of this job (before a requeue) may have left: its result, its outputs.
  fs.rmSync(resultFile, { force: true });
  fs.mkdirSync(job.tmpDir, { recursive: true });
  for (const f of fs.readdirSync(job.tmpDir)) if (f.startsWith(job.tmpPrefix)) rmrf(path.join(job.tmpDir, f));

  say(
    `rc1-build: ${job.target}: running its rule on ${os.hostname()}${jobId ? ` (slurm job ${jobId}${restart ? `, run ${restart + 1} after ${restart} requeue${restart > 1 ? 's' : ''}` : ''})` : ''}`,
  );
  const pool = new WorkerPool(1, workerUrl);
  let stopping: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = sig;
    say(`rc1-build: ${job.target}: ${sig}: stopping the rule (it has ${spec.graceS} s to save its state)`);
    void pool.abortAll(spec.graceS * 1000);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  let lastProgress = 0;
  try {
    const res = await pool.run(
      { ...job, env },
      {
        log: (line) => say(line),
        progress: (done, total, unit) => {
          const now = performance.now();
          if (now - lastProgress < 1000 && done < total) return;
          lastProgress = now;
          try {
            writeJson(progressFile, { done, total, ...(unit ? { unit } : {}) });
          } catch {
            /* progress is best effort */
          }
        },
      },
    );
    const base = {
      format: JOB_FILE_FORMAT,
      jobId,
      restart,
      host: os.hostname(),
      ms: Math.round(performance.now() - t0),
    } as const;
    let result: NodeResult;
    if (res.ok) {
      const v = res.value;
      result = {
        ...base,
        ok: true,
        value: {
          ...(v.checks ? { checks: v.checks } : {}),
          ...(v.summary ? { summary: redact(v.summary) } : {}),
          rule: v.rule,
          outputs: v.outputs.map((o) => ({ path: o.path, dir: o.dir, sha256: o.sha256, size: o.size })),
        },
      };
    } else {
      const e = res.error;
      result = {
        ...base,
        ok: false,
        error: { ...e, message: redact(e.message), ...(e.stack ? { stack: redact(e.stack) } : {}) },
      };
    }
    writeJson(resultFile, result);
    if (stopping) return 143;
    if (!res.ok) {
      say(`rc1-build: ${job.target}: the rule failed: ${redact(res.error.message).split('\n')[0]}`);
      return 1;
    }
    say(`rc1-build: ${job.target}: done in ${(base.ms / 1000).toFixed(1)} s; outputs staged for the build`);
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await pool.close();
  }
}
