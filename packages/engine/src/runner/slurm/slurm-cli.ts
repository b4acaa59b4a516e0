// Slurm job control through its command-line tools: sbatch (submit), squeue --json (follow),
// scontrol / sacct (the final state once a job has left squeue), scancel (cancel). No daemon of
// our own and no REST API: the CLI is what every Slurm release keeps stable (the REST paths of
// slurmrestd change between releases). Commands read the cluster from the environment
// (SLURM_CONF), exactly as the user's own sbatch would.
//
// squeue --json differs between releases: 22.05 gives `job_state: "RUNNING"` and `exit_code` as
// a raw wait status (exit 3 → 768); 23.02 and later give `job_state: ["RUNNING"]` and
// `exit_code: {status, return_code, signal: {id}}`. parseSqueueJson reads both.

/** Resources of one batch job; each maps to one sbatch option (none given: the cluster's default). */
export interface SlurmResources {
  /** --partition */
  partition?: string;
  /** --gpus (a count, or a type:count such as 'a100:2') */
  gpus?: number | string;
  /** --cpus-per-task */
  cpus?: number;
  /** --mem, e.g. '16G' */
  mem?: string;
  /** --time, e.g. '2:00:00' or '1-00:00:00' */
  time?: string;
  /** More sbatch options, passed as given (e.g. ['--account=ml', '--qos=long', '--constraint=h100']). */
  sbatchArgs?: string[];
}

export interface SubmitSpec {
  /** --job-name */
  name: string;
  /** The batch script (a file the job's node can read). */
  script: string;
  /** --chdir: the job's working directory. */
  cwd: string;
  /** --output (stdout and stderr together; %j is the job id). Appended to across requeues. */
  output: string;
  resources: SlurmResources;
  /** sbatch's environment (--export=ALL gives it to the job); default: the build's. */
  env?: NodeJS.ProcessEnv;
}

/** What a failed Slurm command said; `stderr` is Slurm's own message (e.g. "invalid partition specified"). */
export class SlurmCommandError extends Error {
  override name = 'SlurmCommandError';
  constructor(
    readonly command: string,
    readonly stderr: string,
    readonly code: number | string | null,
  ) {
    super(
      `${command} failed${code !== null ? ` (${typeof code === 'number' ? `exit ${code}` : code})` : ''}: ${stderr.trim() || 'no message'}`,
    );
  }
}

const COMMAND_TIMEOUT_MS = 60_000;

async function run(
  cmd: string,
  args: string[],
  timeoutMs = COMMAND_TIMEOUT_MS,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const { execFile } = await import('node:child_process'); // loaded by Slurm builds only, not by every command
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env },
      (err, stdout, stderr) => {
        if (err) {
          const e = err as NodeJS.ErrnoException & { code?: number | string; signal?: string | null };
          const code =
            e.code === 'ENOENT'
              ? 'not found on PATH'
              : typeof e.code === 'number'
                ? e.code
                : (e.code ?? (e.signal ? `killed by ${e.signal}` : null));
          reject(new SlurmCommandError(`${cmd} ${args.join(' ')}`.slice(0, 300), String(stderr ?? ''), code ?? null));
        } else resolve(String(stdout));
      },
    );
  });
}

/** The sbatch command line for a spec (without the program name). Every job is requeueable: preemption requeues it. */
export function sbatchArgs(spec: SubmitSpec): string[] {
  const r = spec.resources;
  return [
    '--parsable',
    `--job-name=${spec.name}`,
    `--chdir=${spec.cwd}`,
    `--output=${spec.output}`,
    '--open-mode=append',
    '--requeue',
    '--export=ALL',
    ...(r.partition ? [`--partition=${r.partition}`] : []),
    ...(r.gpus !== undefined ? [`--gpus=${r.gpus}`] : []),
    ...(r.cpus !== undefined ? [`--cpus-per-task=${r.cpus}`] : []),
    ...(r.mem ? [`--mem=${r.mem}`] : []),
    ...(r.time ? [`--time=${r.time}`] : []),
    ...(r.sbatchArgs ?? []),
    spec.script,
  ];
}

/** Submits the job; returns its id. sbatch's refusal (bad partition, too much memory…) throws SlurmCommandError. */
export async function submit(spec: SubmitSpec): Promise<string> {
  const out = (await run('sbatch', sbatchArgs(spec), COMMAND_TIMEOUT_MS, spec.env ?? process.env)).trim();
  // --parsable prints "jobid" or "jobid;cluster"
  const id = out.split('\n').pop()!.split(';')[0]!.trim();
  if (!/^\d+$/.test(id))
    throw new SlurmCommandError(
      'sbatch',
      `unexpected output ${JSON.stringify(out.slice(0, 200))} (expected a job id)`,
      null,
    );
  return id;
}

/** One job as Slurm reports it. */
export interface JobInfo {
  id: string;
  /** PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, REQUEUED, … */
  state: string;
  /** Slurm's reason (Priority, Resources, BeginTime, NonZeroExitCode, …); 'None' when there is none. */
  reason: string;
  /** The batch script's exit code, once it ended (null while it runs or when it was killed by a signal). */
  exitCode: number | null;
  /** The signal that ended the batch script (null: none). */
  signal: number | null;
  /** How many times the job was requeued (SLURM_RESTART_COUNT of its current run). */
  restarts: number;
  /** The node the batch script runs on ('' before it starts). */
  node: string;
  /** Where the answer came from. */
  source: 'squeue' | 'scontrol' | 'sacct';
}

/** States after which the job will not run again (unless requeued by an admin). */
export const TERMINAL_STATES = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'OUT_OF_MEMORY',
  'NODE_FAIL',
  'BOOT_FAIL',
  'DEADLINE',
  'PREEMPTED',
  'SPECIAL_EXIT',
  'REVOKED',
]);
/** States in which the job waits to (re)start. */
export const WAITING_STATES = new Set([
  'PENDING',
  'REQUEUED',
  'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESIZING',
  'SUSPENDED',
  'CONFIGURING',
]);

function firstState(v: unknown): string {
  if (Array.isArray(v)) {
    // 23.02+: a base state plus flags, e.g. ["PENDING", "REQUEUED"]; the base state comes first
    const base = v.find(
      (s) =>
        typeof s === 'string' &&
        (TERMINAL_STATES.has(s) || WAITING_STATES.has(s) || s === 'RUNNING' || s === 'COMPLETING'),
    );
    return String(base ?? v[0] ?? 'UNKNOWN');
  }
  return typeof v === 'string' ? v.split(/[ +]/)[0]! : 'UNKNOWN';
}

function exitOf(v: unknown): { exitCode: number | null; signal: number | null } {
  if (typeof v === 'number') {
    // 22.05: the raw wait status of the batch script
    const sig = v & 0x7f;
    return sig ? { exitCode: null, signal: sig } : { exitCode: (v >> 8) & 0xff, signal: null };
  }
  if (v && typeof v === 'object') {
    const o = v as { return_code?: unknown; signal?: { id?: unknown } };
    const rc =
      typeof o.return_code === 'number' ? o.return_code : (o.return_code as { number?: number } | undefined)?.number;
    const sig =
      typeof o.signal?.id === 'number' ? o.signal.id : (o.signal?.id as { number?: number } | undefined)?.number;
    return { exitCode: typeof rc === 'number' ? rc : null, signal: typeof sig === 'number' && sig > 0 ? sig : null };
  }
  return { exitCode: null, signal: null };
}

/** Every job in `squeue --json` output, by id (22.05 lists every job it knows and ignores --jobs). */
export function parseSqueueJobs(text: string): Map<string, JobInfo> {
  const doc = JSON.parse(text) as { jobs?: Record<string, unknown>[] };
  const out = new Map<string, JobInfo>();
  for (const j of doc.jobs ?? []) {
    const id = String(j.job_id);
    const state = firstState(j.job_state);
    const ended = TERMINAL_STATES.has(state);
    const ex = ended ? exitOf(j.exit_code) : { exitCode: null, signal: null };
    out.set(id, {
      id,
      state,
      reason: String(j.state_reason ?? 'None'),
      ...ex,
      restarts: typeof j.restart_cnt === 'number' ? j.restart_cnt : 0,
      node: String(j.batch_host ?? ''),
      source: 'squeue',
    });
  }
  return out;
}

/** The job `id` in `squeue --json` output. */
export function parseSqueueJson(text: string, id: string): JobInfo | null {
  return parseSqueueJobs(text).get(id) ?? null;
}

/** `scontrol show job -o ID`: JobState=… Reason=… Restarts=… ExitCode=3:0 BatchHost=… */
export function parseScontrol(text: string, id: string): JobInfo | null {
  const field = (k: string): string | undefined => new RegExp(`(?:^|\\s)${k}=(\\S*)`).exec(text)?.[1];
  const state = field('JobState');
  if (!state) return null;
  const [code, sig] = (field('ExitCode') ?? '0:0').split(':').map(Number);
  const ended = TERMINAL_STATES.has(state);
  return {
    id,
    state,
    reason: field('Reason') ?? 'None',
    exitCode: ended && !sig ? (code ?? null) : null,
    signal: ended && sig ? sig : null,
    restarts: Number(field('Restarts') ?? 0),
    node: field('BatchHost') ?? '',
    source: 'scontrol',
  };
}

/** `sacct -P -n -X -o JobID,State,ExitCode,Restarts,NodeList` (text: 22.05's --json misreports exit codes). */
export function parseSacct(text: string, id: string): JobInfo | null {
  const line = text.split('\n').find((l) => l.split('|')[0] === id);
  if (!line) return null;
  const [, rawState = 'UNKNOWN', exit = '0:0', restarts = '0', node = ''] = line.split('|');
  const state = rawState.split(' ')[0]!; // "CANCELLED by 0"
  const [code, sig] = exit.split(':').map(Number);
  return {
    id,
    state,
    reason: rawState,
    exitCode: sig ? null : (code ?? null),
    signal: sig ? sig : null,
    restarts: Number(restarts) || 0,
    node,
    source: 'sacct',
  };
}

/**
 * The job's current state: squeue --json while Slurm still lists it (MinJobAge keeps finished jobs
 * there for 300 s by default), then scontrol, then sacct (when accounting is configured). null:
 * no tool knows the job (any more).
 */
export async function queryJob(id: string): Promise<JobInfo | null> {
  return (await squeueJobs([id])).get(id) ?? (await finalState(id));
}

/** One `squeue --json --jobs a,b,…` for many jobs. */
async function squeueJobs(ids: readonly string[]): Promise<Map<string, JobInfo>> {
  return parseSqueueJobs(
    await run('squeue', ['--json', '--jobs', ids.join(',')]).catch((e: unknown) => {
      // squeue exits non-zero for a job id it no longer knows
      if (e instanceof SlurmCommandError && /Invalid job id/i.test(e.stderr)) return '{"jobs":[]}';
      throw e;
    }),
  );
}

/** A job squeue no longer lists: scontrol, then sacct (with accounting). */
async function finalState(id: string): Promise<JobInfo | null> {
  const s = await run('scontrol', ['show', 'job', '-o', id]).then(
    (t) => parseScontrol(t, id),
    () => null,
  );
  if (s) return s;
  return run('sacct', ['-P', '-n', '-X', '-j', id, '-o', 'JobID,State,ExitCode,Restarts,NodeList']).then(
    (t) => parseSacct(t, id),
    () => null,
  );
}

/**
 * queryJob for every job a build follows with one `squeue --json` per interval, however many
 * jobs there are: slurmctld sees one query per poll, not one per job (22.05's squeue --json
 * lists every job it knows whatever --jobs says, so one answer serves them all). An answer is
 * reused for `maxAgeMs`; one call in flight serves every job that asks meanwhile.
 */
export class JobQuery {
  private last: { at: number; ids: ReadonlySet<string>; jobs: Map<string, JobInfo> } | null = null;
  private inflight: Promise<{ at: number; ids: ReadonlySet<string>; jobs: Map<string, JobInfo> }> | null = null;
  /** squeue calls made (for tests and measurements). */
  calls = 0;

  constructor(
    private readonly maxAgeMs: number,
    private readonly followed: () => Iterable<string>,
  ) {}

  async query(id: string): Promise<JobInfo | null> {
    let snap = this.last && Date.now() - this.last.at < this.maxAgeMs && this.last.ids.has(id) ? this.last : null;
    if (!snap && this.inflight) {
      const s = await this.inflight;
      if (s.ids.has(id)) snap = s;
    }
    if (!snap) {
      if (!this.inflight) {
        const ids = new Set([...this.followed(), id]);
        this.calls++;
        this.inflight = squeueJobs([...ids])
          .then((jobs) => (this.last = { at: Date.now(), ids, jobs }))
          .finally(() => {
            this.inflight = null;
          });
      }
      snap = await this.inflight;
    }
    return snap.jobs.get(id) ?? (await finalState(id));
  }
}

/** scancel the job (all its steps, the batch shell included). A job Slurm no longer knows is no error. */
export async function cancel(id: string): Promise<void> {
  await run('scancel', [id]).catch((e: unknown) => {
    if (e instanceof SlurmCommandError && /Invalid job id|already completing or completed/i.test(e.stderr)) return '';
    throw e;
  });
}

/** What a job that ended without the rule reporting a result means, in one sentence. */
export function describeEnd(j: JobInfo): string {
  const code =
    j.signal !== null
      ? `killed by signal ${j.signal}`
      : j.exitCode !== null
        ? `exit code ${j.exitCode}`
        : 'no exit code';
  switch (j.state) {
    case 'COMPLETED':
      return `slurm job ${j.id} completed (${code}) but the rule left no result`;
    case 'FAILED':
      return `slurm job ${j.id} failed (${code}, reason ${j.reason})`;
    case 'CANCELLED':
      return `slurm job ${j.id} was cancelled outside this build (${j.reason !== 'None' ? j.reason : 'scancel'})`;
    case 'TIMEOUT':
      return `slurm job ${j.id} reached its time limit (raise the target's slurm time)`;
    case 'OUT_OF_MEMORY':
      return `slurm job ${j.id} ran out of memory (raise the target's slurm mem)`;
    case 'NODE_FAIL':
      return `slurm job ${j.id} lost its node ${j.node || ''} (NODE_FAIL)`.replace('  ', ' ');
    case 'PREEMPTED':
      return `slurm job ${j.id} was preempted and not requeued (the partition's PreemptMode is not REQUEUE)`;
    default:
      return `slurm job ${j.id} ended in state ${j.state} (${code}, reason ${j.reason})`;
  }
}
