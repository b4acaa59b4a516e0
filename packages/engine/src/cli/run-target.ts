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
import type { BlobStore } from '../cache/remote/store.ts';
import type { Signer } from '../cache/remote/signing.ts';
import { fetchInputs, mapJob, resultDocument, scratchMapper, uploadOutputs } from '../runner/slurm/remote-staging.ts';

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
  if (
    spec.format !== JOB_FILE_FORMAT ||
    (spec.staging !== 'shared-fs' && spec.staging !== 'remote-cache') ||
    (spec.staging === 'remote-cache' && !spec.remote)
  ) {
    io.err(
      `rc1-build __run-target: ${jobFile}: format ${spec.format}, staging ${spec.staging}; this rc1-build runs format ${JOB_FILE_FORMAT}, staging shared-fs or remote-cache (is the node's rc1-build the build's?)\n`,
    );
    return 64;
  }
  const t0 = performance.now();
  const dir = path.dirname(jobFile);
  const resultFile = path.join(dir, 'result.json');
  const progressFile = path.join(dir, 'progress.json');
  const jobId = process.env.SLURM_JOB_ID ?? null;
  const restart = Number(process.env.SLURM_RESTART_COUNT ?? 0) || 0;
  const env = { ...spec.job.env };
  for (const n of spec.secrets) env[n] = process.env[n];
  const redact = redactor(spec.secrets.map((n) => process.env[n]));
  const tail: string[] = [];
  const say = (line: string): void => {
    const l = redact(line);
    io.out(`${l}\n`);
    tail.push(l);
    if (tail.length > 2 * LOG_TAIL) tail.splice(0, tail.length - LOG_TAIL);
  };
  // staging 'remote-cache': this node does not see the build's workspace. The module and inputs
  // come from the remote cache into a scratch workspace; the outputs and the result go back there.
  const remote = spec.staging === 'remote-cache' ? await openNodeRemote(spec, dir, jobId, say) : null;
  if (remote && 'failed' in remote) return remote.failed;
  const job = remote ? remote.job : spec.job;

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
    if (remote) {
      if (result.ok && res.ok) {
        try {
          const up = await uploadOutputs(remote.store, res.value.outputs);
          result.value.outputs = up.outputs;
          say(
            `rc1-build: ${job.target}: outputs uploaded to the remote cache (${up.sent} object${up.sent === 1 ? '' : 's'}, ${fmtBytes(up.bytes)} sent)`,
          );
        } catch (e) {
          say(`rc1-build: ${job.target}: cannot upload the outputs to the remote cache: ${(e as Error).message}`);
          result = {
            ...base,
            ok: false,
            error: {
              kind: 'rule-error',
              message: `${job.target}: the rule succeeded on ${os.hostname()}, but its outputs could not be uploaded to the remote cache ${remote.store.describe}: ${(e as Error).message}`,
            },
          };
        }
      }
      if (!stopping || result.ok) {
        // A rule stopped by SIGTERM (requeue, scancel) leaves no result: the next run writes it.
        try {
          await remote.store.upload(
            'ac',
            remote.resultKey,
            resultDocument(remote.resultKey, { ...result, logTail: tail.slice(-LOG_TAIL) }, remote.signer),
          );
        } catch (e) {
          say(`rc1-build: ${job.target}: cannot upload the result to the remote cache: ${(e as Error).message}`);
          return 1;
        }
      }
      // What this job leaves on the node: nothing once the build has its result, but its state
      // (and partial outputs) when SIGTERM stopped it, for the run after a requeue.
      if (!stopping) rmrf(dir);
      else
        say(
          `rc1-build: ${job.target}: stopped; its scratch workspace ${dir} stays for the next run (state dir, partial outputs)`,
        );
    } else writeJson(resultFile, result);
    if (stopping) return 143;
    if (!res.ok) {
      say(`rc1-build: ${job.target}: the rule failed: ${redact(res.error.message).split('\n')[0]}`);
      return 1;
    }
    say(
      `rc1-build: ${job.target}: done in ${(base.ms / 1000).toFixed(1)} s; outputs ${remote ? 'in the remote cache' : 'staged'} for the build`,
    );
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await pool.close();
    await remote?.store.close();
  }
}

const LOG_TAIL = 200;

function fmtBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

interface NodeRemote {
  store: BlobStore;
  signer: Signer | null;
  resultKey: string;
  /** The job with its paths in the scratch workspace. */
  job: JobFile['job'];
}

/** staging 'remote-cache': open the cache, fetch the module and inputs into the scratch workspace. */
async function openNodeRemote(
  spec: JobFile,
  dir: string,
  jobId: string | null,
  say: (line: string) => void,
): Promise<NodeRemote | { failed: number }> {
  const r = spec.remote!;
  const target = spec.job.target;
  const ws = path.join(dir, 'ws'); // dir: <scratch>/rc1-<uid>/rc1-<target>-<12 hex> (scratchJobDir), made by job.sh
  let store: BlobStore;
  try {
    const { openStore } = await import('../cache/remote/open-remote.ts');
    store = await openStore(r.remote, process.env, r.remote.maxInFlight ?? 16, r.remote.timeoutMs ?? 10_000);
  } catch (e) {
    const { describeUrl } = await import('../cache/remote/http-store.ts');
    say(`rc1-build: ${target}: cannot open the remote cache ${describeUrl(r.remote.url)}: ${(e as Error).message}`);
    return { failed: 1 };
  }
  let signer: Signer | null = null;
  const keyText = r.remote.signingKeyEnv ? process.env[r.remote.signingKeyEnv] : undefined;
  if (keyText) {
    const { Signer: S, parsePrivateKey } = await import('../cache/remote/signing.ts');
    signer = new S(parsePrivateKey(keyText));
  }
  const map = scratchMapper(spec.job.root, ws);
  const job = mapJob(spec.job, map);
  try {
    const t0 = performance.now();
    const got = await fetchInputs(store, r, { ws, keep: job.stateDir, map });
    say(
      `rc1-build: ${target}: fetched ${got.files} files (the rule's module and inputs, ${fmtBytes(got.bytes)}, sha256 checked) from the remote cache ${store.describe} into ${ws} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  } catch (e) {
    const message = `${target}: cannot stage the inputs on ${os.hostname()} from the remote cache ${store.describe}: ${(e as Error).message}`;
    say(`rc1-build: ${message}`);
    const failed: NodeResult = {
      format: JOB_FILE_FORMAT,
      jobId,
      restart: Number(process.env.SLURM_RESTART_COUNT ?? 0) || 0,
      host: os.hostname(),
      ms: 0,
      ok: false,
      error: { kind: 'contract-error', message },
    };
    await store.upload('ac', r.resultKey, resultDocument(r.resultKey, failed, signer)).catch(() => undefined);
    await store.close();
    return { failed: 1 };
  }
  return { store, signer, resultKey: r.resultKey, job };
}
