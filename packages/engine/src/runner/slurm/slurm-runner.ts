// Runs a rule as a Slurm batch job: the remote counterpart of the worker pool, with the same
// run(job, hooks) → { ok, value | error } contract, so the build commits, caches, reports and
// maps exit codes exactly as for a local run.
//
//   build                                    job's node (same workspace: shared filesystem)
//   job.json, job.sh → sbatch --parsable ──► rc1-build __run-target job.json
//   squeue --json (every pollS)               worker harness runs the rule; outputs → .rc1/tmp/
//   slurm-<id>.out ─── streamed ───────────── stdout (log lines)
//   result.json ◄───────────────────────────── written last (digests of the outputs)
//   hash the staged outputs again, compare with the node's digests → commit (the build)
//
// Ctrl-C: scancel, then wait until Slurm reports the job ended. Requeue (preemption, `scontrol
// requeue`): the same job runs the rule again, which resumes from its state dir (.rc1/state/<target>/,
// on the shared filesystem); the build logs it and keeps following. A job that ended without a
// result maps to a rule failure naming its Slurm state (FAILED, TIMEOUT, OUT_OF_MEMORY, …).
// A job left behind by a build that was killed (SIGKILL) is cancelled before the target is
// submitted again: under the workspace lock, every job recorded in .rc1/slurm/ is an orphan.
// Staging 'remote-cache' (a node that does not see the workspace) moves the job file inside job.sh
// and the inputs, outputs and result through the remote cache: remote-staging.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SlurmExecutor, UserRemoteCache } from '../../api/index.ts';
import type { TrustedKey } from '../../cache/remote/signing.ts';
import type { BlobStore } from '../../cache/remote/store.ts';
import { randomBytes } from 'node:crypto';
import {
  type RemoteOutput,
  type RemoteStagingSpec,
  fetchOutput,
  fetchResult,
  AUTH_ENV,
  newResultKey,
  scratchJobDir,
  stageInputs,
  stagingUrl,
} from './remote-staging.ts';
import { hashOutput } from '../hash-output.ts';
import type { HashedOutput, Job, JobFailure, JobSuccess } from '../protocol.ts';
import type { JobHooks } from '../rule-runner.ts';
import { writeRuleLog } from '../../report/rule-log.ts';
import { followJob } from './follow-job.ts';
import { JOB_FILE_FORMAT, type JobFile, type NodeResult, readJson, stagingFiles, writeJson } from './job-file.ts';
import {
  type JobInfo,
  JobQuery,
  SlurmCommandError,
  TERMINAL_STATES,
  cancel,
  describeEnd,
  queryJob,
  submit,
} from './slurm-cli.ts';

export type RunOutcome = { ok: true; value: JobSuccess } | { ok: false; error: JobFailure };

export interface SlurmTarget {
  executor: SlurmExecutor;
  /** Secret env var names: their values reach the node through sbatch's environment, never job.json. */
  secrets: readonly string[];
}

/**
 * The command that runs rc1-build on the job's node: this node binary and this engine's CLI (a
 * shared install). Bundled, this module is dist/cli.js, beside ../bin/rc1-build.js; run from
 * source, the CLI that started this process.
 */
function defaultCommand(): string[] {
  const bundled = fileURLToPath(new URL('../bin/rc1-build.js', import.meta.url));
  if (fs.existsSync(bundled)) return [process.execPath, bundled];
  const script = process.argv[1] && fs.existsSync(process.argv[1]) ? fs.realpathSync(process.argv[1]) : null;
  if (!script) throw new Error('internal error: cannot tell which rc1-build to run on the Slurm node; please report');
  return [process.execPath, script];
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Lines of the job's log kept in logs/<target>.log while it runs (the build keeps as many at the end). */
const LIVE_LOG_LINES = 200;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Active {
  id: string;
  target: string;
  log(line: string): void;
}

export class SlurmRunner {
  private readonly active = new Map<string, Active>();
  private readonly stop = new AbortController();
  /** One squeue per poll for every job this build follows (answers reused for 250 ms). */
  readonly jobs = new JobQuery(250, () => this.active.keys());

  /**
   * `stagingRoot`: .rc1/slurm of the workspace; `root`: the workspace (the job's working dir);
   * `remote`: the pipeline's remote cache and the build's environment (staging 'remote-cache').
   */
  constructor(
    private readonly root: string,
    private readonly stagingRoot: string,
    private readonly command: string[] = defaultCommand(),
    private readonly remote?: { decl: UserRemoteCache; env: Readonly<Record<string, string | undefined>> },
  ) {}

  private store: Promise<{ store: BlobStore; expect: TrustedKey | null }> | null = null;

  /** The remote cache for staging 'remote-cache', opened once per build. */
  private openStore(): Promise<{ store: BlobStore; expect: TrustedKey | null }> {
    this.store ??= (async () => {
      const r = this.remote;
      if (!r) throw new Error("staging 'remote-cache' needs definePipeline({ remoteCache })");
      const { openStore } = await import('../../cache/remote/open-remote.ts');
      const store = await openStore(
        r.decl,
        r.env as NodeJS.ProcessEnv,
        r.decl.maxInFlight ?? 16,
        r.decl.timeoutMs ?? 10_000,
      );
      const keyText = r.decl.signingKeyEnv ? r.env[r.decl.signingKeyEnv] : undefined;
      let expect: TrustedKey | null = null;
      if (keyText) {
        const { createPublicKey } = await import('node:crypto');
        const { keyIdOf, parsePrivateKey } = await import('../../cache/remote/signing.ts');
        const pub = createPublicKey(parsePrivateKey(keyText));
        expect = { name: 'this build', id: keyIdOf(pub), key: pub };
      }
      return { store, expect };
    })();
    return this.store;
  }

  private relLog(file: string): string {
    return path.relative(this.root, file);
  }

  async run(job: Omit<Job, 'id'>, hooks: JobHooks, t: SlurmTarget): Promise<RunOutcome> {
    const ex = t.executor;
    const dir = path.join(this.stagingRoot, job.target);
    const files = stagingFiles(dir);
    fs.mkdirSync(dir, { recursive: true });
    await this.cancelOrphan(files.submitted, hooks);
    for (const f of fs.readdirSync(dir))
      if (/^slurm-\d+\.out$/.test(f) || f === 'result.json' || f === 'progress.json')
        fs.rmSync(path.join(dir, f), { force: true });

    const secrets = new Set(t.secrets);
    const env = Object.fromEntries(Object.entries(job.env).filter(([k]) => !secrets.has(k)));
    const { cacheDir: _cacheDir, cacheKey: _cacheKey, ...rest } = job; // the build stores its cache copies and entry itself, after the commit
    const remoteStaging = ex.staging === 'remote-cache';
    let remote: {
      store: BlobStore;
      expect: TrustedKey | null;
      spec: RemoteStagingSpec;
      /** The URL's credentials as a header value, for the job's environment (never in job.sh). */
      basicAuth: string | null;
    } | null = null;
    if (remoteStaging) {
      try {
        const { store, expect } = await this.openStore();
        const t0 = performance.now();
        const staged = await stageInputs(store, job);
        const d = this.remote!.decl;
        const u = stagingUrl(d.url);
        const basicAuth = d.authHeader ? null : u.basicAuth; // a declared authHeader wins, as in HttpStore
        remote = {
          store,
          expect,
          basicAuth,
          spec: {
            remote: {
              url: u.url,
              ...(d.authHeader
                ? { authHeader: d.authHeader }
                : basicAuth
                  ? { authHeader: { name: 'Authorization', env: AUTH_ENV } }
                  : {}),
              ...(d.timeoutMs ? { timeoutMs: d.timeoutMs } : {}),
              ...(d.maxInFlight ? { maxInFlight: d.maxInFlight } : {}),
              ...(d.s3 ? { s3: d.s3 } : {}),
              ...(expect && d.signingKeyEnv ? { signingKeyEnv: d.signingKeyEnv } : {}),
            },
            resultKey: newResultKey(),
            scratch: ex.scratch ?? '/tmp',
            files: staged.files,
            links: staged.links,
          },
        };
        hooks.log(
          `slurm: staged ${staged.files.length} files (the rule's module and inputs) through the remote cache ${store.describe} (${staged.sent} sent, ${fmtBytes(staged.bytes)}, in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
        );
      } catch (e) {
        return {
          ok: false,
          error: {
            kind: 'contract-error',
            message: `${job.target}: cannot stage the job's inputs through the remote cache (staging 'remote-cache'): ${(e as Error).message}`,
          },
        };
      }
    }
    const spec: JobFile = {
      format: JOB_FILE_FORMAT,
      staging: remoteStaging ? 'remote-cache' : 'shared-fs',
      job: { ...rest, env },
      secrets: [...secrets],
      graceS: ex.graceS ?? 20,
      ...(remote ? { remote: remote.spec } : {}),
    };
    writeJson(files.job, spec, 0o600);
    let script: string;
    if (!remote) {
      script = `#!/bin/sh\n# rc1-build: runs the rule of target ${job.target} on this job's node (written by the build; see job.json)\nexec ${[...this.command, '__run-target', files.job].map(shQuote).join(' ')}\n`;
    } else {
      // The node does not see .rc1/slurm/: the job file travels in the script (sbatch sends it).
      const eof = `RC1_JOB_${randomBytes(8).toString('hex')}`;
      // <scratch>/rc1-<uid>/ is this user's alone (0700, refused when it is a link or another
      // user's); in it, one dir per build host, workspace and target (scratchJobDir).
      const where = scratchJobDir(
        remote.spec.scratch,
        { uid: process.getuid?.() ?? 0, host: os.hostname(), root: this.root },
        job.target,
      );
      const top = shQuote(where.top);
      const jobDir = shQuote(where.dir);
      script = [
        '#!/bin/sh',
        `# rc1-build: runs the rule of target ${job.target} on this job's node (written by the build; staging remote-cache:`,
        '# the job file follows; the inputs come from the remote cache into a scratch workspace)',
        'set -e',
        'umask 077',
        `mkdir -m 700 ${top} 2>/dev/null || :`,
        `if [ -L ${top} ] || [ ! -d ${top} ] || [ ! -O ${top} ]; then`,
        `  echo "rc1-build: ${where.top.replace(/["\\$`]/g, '')} is not a directory of $(id -un)'s (a symbolic link, or made by another user): refused; remove it, or set the executor's scratch" >&2`,
        '  exit 1',
        'fi',
        `chmod 700 ${top}`,
        `if [ -L ${jobDir} ]; then rm -f ${jobDir}; fi`,
        `mkdir -p ${jobDir}`,
        `rm -f ${jobDir}/job.json`,
        'set -C',
        `cat > ${jobDir}/job.json <<'${eof}'`,
        JSON.stringify(spec),
        eof,
        `exec ${[...this.command, '__run-target'].map(shQuote).join(' ')} ${jobDir}/job.json`,
        '',
      ].join('\n');
    }
    // 0700: the script of a remote-cache job holds its job file (result key, env values).
    fs.writeFileSync(files.script, script, { mode: 0o700 });
    fs.chmodSync(files.script, 0o700); // an older job.sh keeps its mode through writeFileSync
    // staging 'remote-cache': the job's output file is on the node, in its scratch dir; it is
    // followed from here when it is visible (a one-node cluster, a shared scratch), and the
    // result brings back its last lines either way.
    const logOf = remote ? (id: string): string => path.join(remote.spec.scratch, `rc1-slurm-${id}.out`) : files.log;

    if (this.stop.signal.aborted) return { ok: false, error: { kind: 'aborted', message: 'interrupted' } };
    let id: string;
    try {
      id = await submit({
        name: `rc1:${job.target}`,
        script: files.script,
        cwd: remote ? remote.spec.scratch : this.root,
        output: remote ? path.join(remote.spec.scratch, 'rc1-slurm-%j.out') : files.logPattern,
        resources: ex,
        ...(remote?.basicAuth ? { env: { ...process.env, [AUTH_ENV]: remote.basicAuth } } : {}),
      });
    } catch (e) {
      const msg = e instanceof SlurmCommandError ? e.stderr.trim() || e.message : (e as Error).message;
      return {
        ok: false,
        error: { kind: 'contract-error', message: `${job.target}: Slurm refused the job (sbatch): ${msg}` },
      };
    }
    this.active.set(id, { id, target: job.target, log: (l) => hooks.log(l) });
    if (this.stop.signal.aborted) {
      // interrupted while sbatch ran: abortAll did not see this job
      await cancel(id).catch(() => undefined);
      await this.waitEnded([id], 60_000);
      this.active.delete(id);
      return { ok: false, error: { kind: 'aborted', message: 'interrupted' } };
    }
    writeJson(files.submitted, { jobId: id, pid: process.pid, host: os.hostname(), at: new Date().toISOString() });
    const res = [
      ex.partition && `partition ${ex.partition}`,
      ex.gpus !== undefined && `gpus ${ex.gpus}`,
      ex.cpus && `cpus ${ex.cpus}`,
      ex.mem && `mem ${ex.mem}`,
      ex.time && `time ${ex.time}`,
    ]
      .filter(Boolean)
      .join(', ');
    // The job's lines also go to logs/<target>.log while it runs (replaced whole, at most once a
    // second), so `tail -F logs/<target>.log` follows a job on the cluster like a local rule.
    const lines: string[] = [];
    let written = 0;
    let dirty = false;
    const flush = (force = false): void => {
      if (!dirty || (!force && Date.now() - written < 1000)) return;
      try {
        writeRuleLog(this.root, job.target, lines.slice(-LIVE_LOG_LINES));
      } catch {
        /* the build writes the log again at the end */
      }
      written = Date.now();
      dirty = false;
    };
    // The rule's ctx.progress, as the node last wrote it (progress.json, replaced atomically).
    let lastProgress = '';
    const progress = (): void => {
      let text: string;
      try {
        text = fs.readFileSync(files.progress, 'utf8');
      } catch {
        return;
      }
      if (text === lastProgress) return;
      lastProgress = text;
      let p: { done?: unknown; total?: unknown; unit?: unknown };
      try {
        p = JSON.parse(text) as typeof p;
      } catch {
        return;
      }
      if (typeof p.done === 'number' && typeof p.total === 'number')
        hooks.progress(p.done, p.total, typeof p.unit === 'string' ? p.unit : undefined);
    };
    const log = (line: string): void => {
      hooks.log(line);
      lines.push(line);
      if (lines.length > LIVE_LOG_LINES * 2) lines.splice(0, lines.length - LIVE_LOG_LINES);
      dirty = true;
    };
    log(
      `slurm: submitted job ${id} (${res || 'cluster defaults'}); its log: ${remote ? `${logOf(id)} on its node` : this.relLog(files.log(id))}`,
    );
    const streamed = lines.length;
    let end: JobInfo;
    try {
      end = await followJob(
        id,
        logOf(id),
        {
          log,
          polled: () => {
            flush();
            progress();
          },
          state: (now, before) => {
            if (now.state === 'RUNNING' && before?.state !== 'RUNNING')
              log(
                `slurm: job ${id} running on ${now.node || 'its node'}${now.restarts ? ` (run ${now.restarts + 1})` : ''}`,
              );
            else if (now.state === 'PENDING' && !before)
              log(`slurm: job ${id} pending${now.reason !== 'None' ? ` (${now.reason})` : ''}`);
          },
          requeued: (now) =>
            log(
              `slurm: job ${id} was requeued (restart ${now.restarts}${now.reason !== 'None' ? `, ${now.reason}` : ''}); the rule runs again and resumes from its state`,
            ),
          unreachable: (e, since) => {
            if (since === 0) log(`slurm: cannot ask Slurm about job ${id} (${e.message.split('\n')[0]}); retrying`);
          },
        },
        { pollMs: (ex.pollS ?? 2) * 1000, signal: this.stop.signal, query: (q) => this.jobs.query(q) },
      );
    } catch (e) {
      this.active.delete(id);
      return {
        ok: false,
        error: {
          kind: 'rule-error',
          message: `${job.target}: lost track of slurm job ${id}: ${(e as Error).message} (it may still run: scancel ${id})`,
        },
      };
    }
    flush(true);
    if (this.stop.signal.aborted) return { ok: false, error: { kind: 'aborted', message: 'interrupted' } }; // abortAll cancels and waits
    this.active.delete(id);
    fs.rmSync(files.submitted, { force: true });
    if (!remote) return this.collect(job, id, end, readJson<NodeResult>(files.result), files.log(id), hooks);
    let r: NodeResult | null;
    try {
      r = await fetchResult(remote.store, remote.spec.resultKey, remote.expect);
    } catch (e) {
      return {
        ok: false,
        error: { kind: 'contract-error', message: `${job.target}: slurm job ${id}: ${(e as Error).message}` },
      };
    }
    if (r?.logTail && lines.length === streamed) {
      // the node's log file was not visible here: its last lines, from the result
      for (const l of r.logTail) log(l);
      flush(true);
    }
    return this.collect(job, id, end, r, logOf(id), hooks, remote.store);
  }

  /** The job ended: its result.json (written by the run Slurm ran last) or, without one, what Slurm says. */
  private async collect(
    job: Omit<Job, 'id'>,
    id: string,
    end: JobInfo,
    r: NodeResult | null,
    logFile: string,
    hooks: JobHooks,
    store?: BlobStore,
  ): Promise<RunOutcome> {
    const mine =
      r &&
      r.format === JOB_FILE_FORMAT &&
      r.jobId === id &&
      (!TERMINAL_STATES.has(end.state) || end.source === 'sacct' || r.restart === end.restarts);
    const log = store ? `${logFile} on its node` : this.relLog(logFile);
    if (!mine) {
      hooks.log(`slurm: ${describeEnd(end)}`);
      return {
        ok: false,
        error: { kind: 'rule-error', message: `${job.target}: ${describeEnd(end)}; the job's log: ${log}` },
      };
    }
    if (!r.ok) {
      if (r.error.kind === 'aborted')
        return {
          ok: false,
          error: {
            kind: 'rule-error',
            message: `${job.target}: ${describeEnd(end)}: the rule was stopped on the node; the job's log: ${log}`,
          },
        };
      return { ok: false, error: r.error };
    }
    // Shared filesystem: the outputs are at the build's temporary paths. Hash them here again (the
    // commit needs this machine's stat data) and check they are the bytes the node hashed.
    const outputs: HashedOutput[] = [];
    for (const o of job.outputs) {
      const sent = r.value.outputs.find((x) => x.path === o.path);
      if (!sent)
        return {
          ok: false,
          error: {
            kind: 'contract-error',
            message: `${job.target}: slurm job ${id} reported no digest for output ${o.path}`,
          },
        };
      if (store) {
        // staging 'remote-cache': download it to its temporary path, every object checked by digest
        try {
          await fetchOutput(store, o, sent as RemoteOutput);
        } catch (e) {
          return {
            ok: false,
            error: {
              kind: 'contract-error',
              message: `${job.target}: slurm job ${id}: cannot bring back ${(e as Error).message} from the remote cache ${store.describe}`,
            },
          };
        }
      }
      let h: HashedOutput;
      try {
        h = hashOutput(o, { fsync: true });
      } catch (e) {
        return {
          ok: false,
          error: {
            kind: 'contract-error',
            message: `${job.target}: output ${o.path} of slurm job ${id} is not at ${o.tmp} on this machine (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): the job's node and this build must share the workspace (staging: shared-fs)`,
          },
        };
      }
      if (h.sha256 !== sent.sha256) {
        return {
          ok: false,
          error: {
            kind: 'contract-error',
            message: `${job.target}: output ${o.path} of slurm job ${id} has sha256 ${h.sha256.slice(0, 12)}… here but ${sent.sha256.slice(0, 12)}… on node ${r.host}: the staged bytes changed on the way (${store ? 'a directory listing that does not match its digest' : 'is the shared filesystem consistent?'})`,
          },
        };
      }
      outputs.push(h);
    }
    return {
      ok: true,
      value: {
        ...(r.value.checks ? { checks: r.value.checks } : {}),
        ...(r.value.summary ? { summary: r.value.summary } : {}),
        rule: r.value.rule,
        outputs,
      },
    };
  }

  /** A job that an earlier build (killed before it could cancel) left running for this target: cancel it. */
  private async cancelOrphan(submittedFile: string, hooks: JobHooks): Promise<void> {
    const prev = readJson<{ jobId: string; pid: number; host: string }>(submittedFile);
    if (!prev) return;
    const j = await queryJob(prev.jobId).catch(() => null);
    if (j && !TERMINAL_STATES.has(j.state)) {
      hooks.log(
        `slurm: cancelling job ${prev.jobId} (${j.state}), left by an earlier build (pid ${prev.pid} on ${prev.host}) that did not finish`,
      );
      await cancel(prev.jobId);
      await this.waitEnded([prev.jobId], 60_000);
    }
    fs.rmSync(submittedFile, { force: true });
  }

  private async waitEnded(ids: string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let left = ids;
    while (left.length && Date.now() < deadline) {
      const states = await Promise.all(left.map((id) => queryJob(id).catch(() => null)));
      left = left.filter((_, i) => {
        const s = states[i];
        return s != null && !TERMINAL_STATES.has(s.state);
      });
      if (left.length) await sleep(250);
    }
  }

  /**
   * Ctrl-C / a halted build: scancel every job in flight and wait (up to `graceMs`, at least the
   * time Slurm takes to signal and kill the job) until Slurm reports each one ended.
   */
  abortAll(graceMs: number): Promise<void> {
    this.aborting ??= this.cancelAll(graceMs);
    return this.aborting;
  }

  private aborting: Promise<void> | null = null;

  private async cancelAll(graceMs: number): Promise<void> {
    const ids = [...this.active.keys()];
    for (const id of ids) this.active.get(id)!.log(`slurm: interrupted: cancelling job ${id} (scancel)`);
    this.stop.abort();
    if (!ids.length) return;
    await Promise.all(ids.map((id) => cancel(id).catch(() => undefined)));
    await this.waitEnded(ids, Math.max(graceMs, 60_000));
    for (const id of ids) {
      const a = this.active.get(id)!;
      fs.rmSync(path.join(stagingFiles(path.join(this.stagingRoot, a.target)).submitted), { force: true });
      this.active.delete(id);
    }
  }

  async close(): Promise<void> {
    if (this.aborting || this.active.size) await this.abortAll(0);
    const s = this.store;
    this.store = null;
    if (s) await (await s.catch(() => null))?.store.close();
  }
}

function fmtBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}
