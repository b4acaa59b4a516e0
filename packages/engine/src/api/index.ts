// The public API of rc1-build: the only module that rc1.build.ts and rules/ import.
// define* helpers add types, capture their call site and return plain data (STYLE 9);
// the engine validates and resolves that data in packages/engine/src/config/.
// Rules import zod themselves (`import { z } from 'zod'`): keeping it out of this module keeps
// rc1.build.ts, which the no-op path loads, free of zod's load time.
import type { z } from 'zod';
import { ExpectedError } from '../util/expected-error.ts';

/** Where a declaration was written: file:line:col, used by every diagnostic about it. */
export interface CallSite {
  file: string;
  line: number;
  col: number;
}

/** A reference to another target: its outputs (or the one named `output`) become this target's inputs. */
export interface TargetRef {
  readonly kind: 'target';
  readonly name: string;
  readonly output?: string;
}

/** One declared input: a workspace-relative file path, a glob, or another target. */
export type UserInput = string | TargetRef;

export interface UserTarget {
  /** Unique name, used on the command line. */
  name: string;
  /** Workspace-relative path of the rule module (loaded lazily, only when the target runs). */
  rule: string;
  /** Named input groups; ctx.inputs(name) returns their absolute paths. */
  inputs?: Record<string, UserInput | UserInput[]>;
  /**
   * The outputs: named, `{ scores: 'data/scores.jsonl', report: 'reports/x.json' }` (the rule
   * writes `ctx.output('scores')`; another target takes one of them with `target(name, 'scores')`),
   * or a list of workspace-relative paths. A path ending in '/' is a directory output.
   */
  outputs: Record<string, string> | string[];
  /** Dotted keys of the resolved configs/*.yaml that the rule reads (and only those enter the key). */
  params?: string[];
  /**
   * Literal values for the rule (ctx.args), e.g. the size of one scale stage when one
   * declaration yields a target per stage. They enter the key like params.
   */
  args?: Record<string, JsonValue>;
  /** Environment variables the rule reads; their values enter the key as hashes, never in clear. */
  env?: string[];
  /**
   * Secret environment variables (API keys): passed to the rule in ctx.env but never part of the
   * key (rotating a key rebuilds nothing), and their values are redacted from logs and errors.
   */
  secrets?: string[];
  /**
   * What the target needs from the machine before a build may start (API keys, endpoints, a
   * trainer command). Checked for every target that is going to run, before anything runs; all
   * that are missing are listed in one usage error (exit 64). Not part of the key.
   */
  requires?: UserRequirement[];
  /**
   * State the rule keeps between builds under .rc1/ beyond its own ctx.stateDir — state several
   * targets share, such as a cache of paid API calls; the rule opens it with ctx.state(path). Not an
   * output, but `clean` of the target removes it and `status` shows it. `cache: true` marks a cache
   * worth keeping: removed only by `clean --cache`.
   */
  state?: (string | { path: string; cache?: boolean })[];
  /**
   * Where the rule runs: 'local' (default: the build's worker pool) or a Slurm batch job (see
   * SlurmExecutor). Not part of the key: the same rule gives the same outputs wherever it runs.
   */
  executor?: Executor;
  /** For gates: the report file that is always written: one of the outputs, by name or path. */
  report?: string;
  /** Free-form description shown by `graph` and `status`. */
  description?: string;
  /**
   * Outputs that hold metrics (DVC's `metrics:`): a JSON object (its numeric leaves, dotted keys)
   * or a JSON Lines file (the numeric fields of its last line). Recorded in every run and compared
   * by `rc1-build diff`.
   */
  metrics?: string[];
  /** Set by defineGate. */
  gate?: boolean;
  /** Call site, filled in by define*. */
  site?: CallSite;
}

/**
 * Run the target's rule as a Slurm batch job (sbatch): the job runs `rc1-build __run-target` on its
 * node, through the same worker harness as a local run; the build follows it (squeue), streams its
 * log into logs/<target>.log, cancels it on Ctrl-C (scancel) and commits and caches its outputs
 * like a local run's. A requeued job (preemption, `scontrol requeue`) runs the rule again, which
 * resumes from its state dir. Resources map to sbatch options; unset ones are the cluster's defaults.
 */
export interface SlurmExecutor {
  kind: 'slurm';
  /** --partition */
  partition?: string;
  /** --gpus: a count, or type:count such as 'a100:2' */
  gpus?: number | string;
  /** --cpus-per-task */
  cpus?: number;
  /** --mem, e.g. '16G' */
  mem?: string;
  /** --time, e.g. '4:00:00' */
  time?: string;
  /** More sbatch options, as given (e.g. ['--account=ml', '--qos=long']). */
  sbatchArgs?: string[];
  /**
   * How inputs and outputs move: 'shared-fs' (default): the job's node sees this workspace at the
   * same path (NFS, Lustre, a one-node cluster). 'remote-cache': it does not; the build uploads the
   * rule's inputs and compiled module to the pipeline's remoteCache, the job fetches them by digest
   * into a scratch workspace on the node, runs the rule there and uploads the outputs, which the
   * build downloads and verifies before the commit. The engine and the pipeline's npm packages must
   * be installed at the same paths on the node (a shared software install or the same image).
   */
  staging?: 'shared-fs' | 'remote-cache';
  /** staging 'remote-cache': the absolute directory on the node under which each job gets its scratch workspace (default /tmp). */
  scratch?: string;
  /** Seconds between polls of the job's state and log (default 2). */
  pollS?: number;
  /** Seconds the rule gets to save its state after SIGTERM (scancel, preemption) (default 20). */
  graceS?: number;
}

/** 'slurm' alone: a Slurm job with the cluster's default resources. */
export type Executor = 'local' | 'slurm' | SlurmExecutor;

/** One requirement of a target; `why` says what it is for (shown when it is not met). */
export type UserRequirement =
  /** An environment variable that must be set and non-empty (one of `values`, case-insensitive, if given; `optional`: unset is fine). */
  | { env: string; values?: string[]; optional?: boolean; why: string }
  /** An endpoint (http/https URL) whose host must accept a TCP connection. */
  | { url: string; why: string }
  /** A command: a name found on PATH, or a path (workspace-relative or absolute) that is executable. */
  | { executable: string; why: string }
  /** A config value the declaration already knows cannot work here (e.g. a simulated source in a profile that forbids it). */
  | { config: string; problem: string; why: string };

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/**
 * The profiles a pipeline knows: RUN_MODE names one (it picks the config overlay
 * configs/profiles/<profile>.yaml and is ctx.profile). Undeclared: the profile `default` when
 * RUN_MODE is unset, and any profile that has an overlay file (packages/engine/src/config/profiles.ts).
 */
export interface PipelineProfiles {
  /** Every profile RUN_MODE may name; any other value is a usage error. */
  profiles?: string[];
  /** The profile when RUN_MODE is unset. Default: the first of profiles, else `default`. */
  defaultProfile?: string;
}

export interface UserPipeline extends PipelineProfiles {
  /** Where the manifest and sha256 sidecars go (and `failpack`'s archives). Default: reports/build. */
  manifestDir?: string;
  /** Default targets when none is named on the command line. Default: the leaves (every target nothing depends on). */
  defaultTargets?: string[];
  /**
   * Directories outside the workspace (absolute, or relative to it) that inputs may name and that
   * outputs may reach through a symlink (e.g. checkpoints/ linked to a bigger disk). Anything else
   * outside the workspace, after following symlinks, is a usage error.
   */
  externalRoots?: string[];
  /**
   * Size cap of the local output cache (.rc1/cache), e.g. '20G' or a number of bytes; least
   * recently used entries are evicted after builds. Default 10G; RC1_CACHE_MAX_SIZE overrides it.
   */
  cacheMaxSize?: string | number;
  /**
   * Dotted config keys that may exist without any target or rc1.build.ts reading them (notes for
   * people, settings of other tools). Any other key that nothing reads is a usage error.
   */
  freeFormConfig?: string[];
  /**
   * Commands the pipeline adds to the CLI: `rc1-build NAME ARGS…` compiles `module` (a workspace
   * file, like a rule) and calls its default export, a defineCommand(…). Names may not shadow the
   * engine's commands or a target.
   */
  commands?: Record<string, PipelineCommandDecl>;
  /**
   * Executors by target name, over each target's own `executor` (so a profile can send `train` to
   * the cluster: `executors: profile === 'prod' ? { train: { kind: 'slurm', gpus: 1 } } : {}`).
   */
  executors?: Record<string, Executor>;
  /**
   * A cache shared with teammates and CI: looked up after the local cache, filled after a target
   * succeeds. `--remote-cache=off|read|readwrite` on the command line overrides `mode`.
   */
  remoteCache?: UserRemoteCache;
  /** The pipeline's name (shown by `log`, `diff` and the SYNC package's notes). */
  name?: string;
  /** How many runs `.rc1/runs.jsonl` keeps (oldest dropped first). Default 200; RC1_HISTORY_KEEP overrides it. */
  historyKeep?: number;
  /** The hand-off package `rc1-build sync` writes for the teams this pipeline exchanges artifacts with. */
  sync?: UserSync;
  /**
   * What `rc1-build report` adds to the engine's page (graph, gates, run diff): `sections` is a
   * workspace-relative module, compiled like a rule, whose default export is an array of
   * ReportSectionFn (page order).
   */
  report?: { sections: string };
  targets: UserTarget[];
  site?: CallSite;
}

/** A remote cache: a Bazel HTTP cache (http:// or https://) or an S3 bucket (s3://bucket/prefix). */
export interface UserRemoteCache {
  /** http(s)://host:port/prefix (GET/PUT/HEAD prefix/cas/<sha256>, prefix/ac/<key>) or s3://bucket/prefix. */
  url: string;
  /** 'read' (default): fetch only; 'readwrite': also upload what this machine builds (needs signingKeyEnv). */
  mode?: 'read' | 'readwrite';
  /** A header sent with every request, its value read from an environment variable (never logged). Default name: Authorization. */
  authHeader?: { name?: string; env: string };
  /** A request that sends or receives nothing for this long fails, and the build goes on local-only. Default 10000. */
  timeoutMs?: number;
  /** Requests in flight at once (and keep-alive connections). Default 16. */
  maxInFlight?: number;
  /** Environment variable holding this writer's Ed25519 private key (base64 PKCS#8, or PEM): action entries it uploads are signed with it. */
  signingKeyEnv?: string;
  /** Writers whose action entries are accepted: a name → their Ed25519 public key (base64 of the 32 raw bytes, or PEM). */
  trustedKeys?: Record<string, string>;
  /** Upload targets that `rc1-build check-determinism` found non-deterministic (default: they are built here but not uploaded). */
  allowNonDeterministic?: boolean;
  /** S3 only: region (default us-east-1), endpoint for S3-compatible servers, path-style addressing, and the SDK's checksum setting. */
  s3?: {
    region?: string;
    endpoint?: string;
    forcePathStyle?: boolean;
    requestChecksumCalculation?: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';
  };
}

/** One artifact another team provides to this pipeline (listed under need_from_<peer> when needed). */
export interface UserSyncNeed {
  name: string;
  path: string;
  desc: string;
}

export interface UserSync {
  /** This side's name in the package (`from`). */
  from: string;
  /** Where the packages go: <dir>/SYNC_round<N>.json. Default reports/sync. */
  dir?: string;
  /**
   * The other teams and what each provides: a declared input whose path is (or lies under) a
   * provided path is needed from that peer. A missing source input no peer provides is needed
   * from the first peer.
   */
  peers: { name: string; provides: UserSyncNeed[] }[];
}

/**
 * Attach a lazily computed `site` (non-enumerable): `new Error()` captures raw frames cheaply
 * (~2 µs); the stack is only formatted if a diagnostic asks where the declaration was written.
 */
function withSite<T extends object>(obj: T): T {
  if ('site' in obj && (obj as { site?: unknown }).site) return obj;
  const err = new Error();
  let cached: CallSite | undefined | null = null;
  Object.defineProperty(obj, 'site', {
    enumerable: false,
    configurable: true,
    get(): CallSite | undefined {
      if (cached === null) {
        // frames: [0] "Error", [1] withSite, [2] define*, [3] the caller in rc1.build.ts
        const line = err.stack?.split('\n')[3];
        const m = line && /\(?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)\)?\s*$/.exec(line);
        cached = m ? { file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]), col: Number(m[3]) } : undefined;
      }
      return cached;
    },
  });
  return obj;
}

/** A CLI command the pipeline contributes (see UserPipeline.commands). */
export interface PipelineCommandDecl {
  /** Workspace-relative path of the module whose default export is a defineCommand(…). */
  module: string;
  /** One line for `rc1-build --help`. */
  summary: string;
  /** Its arguments, e.g. 'stat | invalidate --spec SPEC', shown in `rc1-build --help`. */
  usage?: string;
}

/** What a pipeline command gets besides its arguments. */
export interface CommandContext {
  /** The workspace root (absolute). */
  root: string;
  /** The profile in force (RUN_MODE; one of the pipeline's profiles). */
  profile: string;
  /**
   * The resolved configs/*.yaml with the profile's overlay (frozen), as rules and the pipeline see
   * it: read by the engine's one config loader (a YAML error stops the command before it runs,
   * naming file and line). A command reads its settings here, never from the files itself.
   */
  config: Readonly<Record<string, JsonValue>>;
  out(s: string): void;
  err(s: string): void;
}

export interface PipelineCommand {
  readonly kind: 'command';
  /** Returns the exit code (0 ok, 64 usage error, …). */
  run(args: string[], ctx: CommandContext): Promise<number> | number;
}

export function defineCommand(run: PipelineCommand['run']): PipelineCommand {
  return { kind: 'command', run };
}

/**
 * A reference to another target, for use in `inputs`: all its outputs, or with `output` the one
 * output of that name (so a rule never picks its input out of a list by file extension).
 */
export function target(name: string, output?: string): TargetRef {
  return output === undefined ? { kind: 'target', name } : { kind: 'target', name, output };
}

export function defineTarget(t: UserTarget): UserTarget {
  return withSite({ ...t });
}

/** A gate: its rule returns checks; a failed check fails the build (exit 2), the report is always written. */
export function defineGate(t: UserTarget & { report: string }): UserTarget {
  return withSite({ ...t, gate: true });
}

/** What a pipeline function receives: the profile and the resolved configs/*.yaml (frozen). */
export interface PipelineContext {
  profile: string;
  config: Readonly<Record<string, JsonValue>>;
}

/** What a pipeline function returns: everything but the profiles (known before it runs). */
export type UserPipelineBody = Omit<UserPipeline, keyof PipelineProfiles>;

export type PipelineFn = ((ctx: PipelineContext) => UserPipelineBody) & PipelineProfiles & { site?: CallSite };

/**
 * Declare the pipeline: an object, or a function of the profile and the resolved config (to
 * declare, say, one target per scale stage listed in configs/default.yaml). A function's profiles
 * go in the second argument: the profile is chosen before the function runs.
 */
export function definePipeline(p: UserPipeline): UserPipeline;
export function definePipeline(p: (ctx: PipelineContext) => UserPipelineBody, profiles?: PipelineProfiles): PipelineFn;
export function definePipeline(
  p: UserPipeline | ((ctx: PipelineContext) => UserPipelineBody),
  profiles?: PipelineProfiles,
): UserPipeline | PipelineFn {
  if (typeof p === 'function') {
    const fn: PipelineFn = Object.assign((ctx: PipelineContext) => withSite({ ...p(ctx) }), { ...profiles });
    return withSite(fn);
  }
  return withSite({ ...p });
}

// ---------------------------------------------------------------- rules

export type CheckOp = '>=' | '<=' | '>' | '<' | '==' | '!=' | 'in';
/**
 * pass / fail: computed from value op threshold. waived: not applied in this profile (dev), shown
 * as WAIVED. n/a: the check cannot apply to this data (its reason says why). Only 'pass' records
 * pass: true; waived and n/a are counted apart and never make a gate pass on their own
 * (gatePasses).
 */
export type CheckStatus = 'pass' | 'fail' | 'waived' | 'n/a';

/** One gate check, as written to the report and the `gate` event. */
export interface Check {
  name: string;
  value: unknown;
  op: CheckOp;
  threshold: unknown;
  pass: boolean;
  status: CheckStatus;
  /** One line: what to do when the check fails. */
  hint?: string;
  /** Why a check is waived, e.g. "profile dev". */
  waived?: string;
  /** Why a check cannot apply (status n/a), e.g. "no item needs clarification". */
  not_applicable?: string;
  /** In words: what the value is and how the decision was made (point estimate, interval bound, null quantile). */
  basis?: string;
}

function compare(value: unknown, op: CheckOp, threshold: unknown): boolean {
  switch (op) {
    case '>=':
      return typeof value === 'number' && value >= (threshold as number);
    case '<=':
      return typeof value === 'number' && value <= (threshold as number);
    case '>':
      return typeof value === 'number' && value > (threshold as number);
    case '<':
      return typeof value === 'number' && value < (threshold as number);
    case '==':
      return JSON.stringify(value) === JSON.stringify(threshold);
    case '!=':
      return JSON.stringify(value) !== JSON.stringify(threshold);
    case 'in': {
      const [lo, hi] = threshold as [number, number];
      return typeof value === 'number' && value >= lo && value <= hi;
    }
  }
}

/** A check whose pass is computed from value op threshold (NaN never passes). */
export function check(name: string, value: unknown, op: CheckOp, threshold: unknown, hint?: string): Check {
  const pass = compare(value, op, threshold);
  return { name, value, op, threshold, pass, status: pass ? 'pass' : 'fail', ...(hint ? { hint } : {}) };
}

/** A check that is not applied in this profile: shown as WAIVED, never recorded as a pass. */
export function waive(c: Check, why: string): Check {
  return { ...c, pass: false, status: 'waived', waived: why };
}

/** A check that cannot apply to this data: shown as n/a with the reason, never recorded as a pass. */
export function notApplicable(c: Check, why: string): Check {
  const { hint: _hint, ...rest } = c;
  return { ...rest, pass: false, status: 'n/a', not_applicable: why };
}

/**
 * Whether a gate's checks let it pass: no check failed, and at least one check passed or was
 * waived by the profile. Checks that are n/a count for nothing: a gate whose every check is n/a
 * (or that has none) does not pass.
 */
export function gatePasses(checks: readonly Pick<Check, 'status'>[]): boolean {
  let decided = false;
  for (const c of checks) {
    if (c.status === 'fail') return false;
    if (c.status === 'pass' || c.status === 'waived') decided = true;
  }
  return decided;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Fisher-Yates shuffle of a copy. */
  shuffle<T>(xs: readonly T[]): T[];
}

export interface Progress {
  done: number;
  total: number;
  unit?: string;
}

export interface RuleContext<P> {
  /** Target name. */
  readonly target: string;
  /** Workspace root (absolute). */
  readonly root: string;
  /**
   * The target's own state dir, `<root>/.rc1/state/<target>/` (absolute; created on first use):
   * for state that must outlive a build but is no output, e.g. a resumable training run. Never
   * hashed, cached or restored by the engine (packages/engine/src/state/target-state-dir.ts).
   */
  readonly stateDir: string;
  /** The profile in force: RUN_MODE, one of the pipeline's profiles (definePipeline({ profiles })). */
  readonly profile: string;
  /** Validated params: the declared keys of the resolved config, nested as in the YAML. */
  readonly params: P;
  /** Declared env vars only. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when the user asked to rebuild this target (`--force`): a resumable rule starts over. */
  readonly forced: boolean;
  /**
   * sha256 of the rule module and its code closure (every local source file it imports, the
   * package.json of every npm package it uses): the fingerprint's `rule` and `code` fields. It
   * changes exactly when the rule's code does; a rule that keeps state across builds (a resumable
   * training run) records it so that state made by other code is not taken for its own.
   */
  readonly codeHash: string;
  /** The target's declared args (literal values from rc1.build.ts). */
  readonly args: Readonly<Record<string, JsonValue>>;
  /** Absolute paths of a named input group (globs expanded, sorted). */
  inputs(name: string): string[];
  /** Whether the target declares the input group `name` (for a rule with an optional input). */
  hasInput(name: string): boolean;
  /**
   * The one absolute path of an input group that holds exactly one (a file, or one output of
   * another target: `target(x, 'name')`); a contract error otherwise, naming what the group holds.
   */
  input(name: string): string;
  /** The declared outputs' paths, workspace-relative, in declaration order (directory outputs without the '/'). */
  readonly outputs: readonly string[];
  /**
   * Absolute path to write a declared output to (a temporary path, moved into place on success):
   * by its name (`ctx.output('scores')`) or, for a list of outputs, by its declared path. A
   * directory output's folder is created.
   */
  output(nameOrPath: string): string;
  /** The declared workspace-relative path of an output (by name or path), e.g. to name it in a report. */
  outputPath(nameOrPath: string): string;
  /**
   * Absolute path of one of the target's declared `state` paths (state shared by several targets,
   * e.g. a cache of paid API calls); its parent folder is created. A path the target does not
   * declare is a contract error: the engine knows every piece of state a rule keeps (`clean`,
   * `status`). The target's own state needs no declaring: ctx.stateDir.
   */
  state(path: string): string;
  /**
   * The absolute path of a file of an npm package (`'pkg/models/data.json'`), found as the rule's own
   * bare imports are when it is compiled: from the rule's folder up, else from rc1-build's own
   * folder (its dependencies serve rules that do not install them). For reading a package's data
   * file as bytes instead of importing it. The package's package.json is in the rule's code closure
   * only where the rule's code also imports the package; the file itself never is, so a rule that
   * reads one checks what it read (a pinned sha256). A contract error when neither place has it.
   */
  resolve(specifier: string): string;
  /** A deterministic PRNG for a seed. */
  rng(seed: number): Rng;
  log(message: string): void;
  progress(done: number, total: number, unit?: string): void;
  /** Aborted when the build is interrupted. */
  readonly signal: AbortSignal;
}

export interface RuleResult {
  /** Gate checks. */
  checks?: Check[];
  /** For gates: extra fields written into the report beside the checks. */
  report?: Record<string, unknown>;
  /** One line shown after the target is done. */
  summary?: string;
}

export interface Rule<S extends z.ZodType = z.ZodType> {
  name: string;
  /** Bump to force a rebuild when behaviour changes without a source change (e.g. data format). */
  version: number;
  params?: S;
  run(ctx: RuleContext<z.infer<S>>): Promise<RuleResult | void> | RuleResult | void;
}

/**
 * An expected failure of a rule (bad user data or config, a refused mode): the engine prints its
 * message alone, without a stack trace. Say file, line and field where there are some. A
 * library's own error classes get the same treatment by extending ExpectedError or by
 * `throw expectedError(e)` (packages/engine/src/util/expected-error.ts).
 */
export class RuleError extends ExpectedError {
  override name = 'RuleError';
}

export function defineRule<S extends z.ZodType>(rule: Rule<S>): Rule<S> {
  return rule;
}

/** mulberry32: small, fast, well-distributed 32-bit PRNG; same seed, same sequence everywhere. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    shuffle<T>(xs: readonly T[]): T[] {
      const out = xs.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
}

export { EXPECTED_ERROR, ExpectedError, expectedError, isExpectedError } from '../util/expected-error.ts';

// Helpers the engine itself relies on and pipelines share: auth failures the engine reports as
// such (exit 77), secret redaction, canonical JSON for hashed records, atomic file writes.
export { AuthError, AUTH_FAILURES_TO_STOP, isAuthStatus } from '../util/auth-error.ts';
export { REDACTED, redactor } from '../util/redact-secrets.ts';
export { canonicalJson } from '../util/canonical-json.ts';
export { writeFileAtomic } from '../util/fs.ts';

// ---------------------------------------------------------------- report sections

/** What a report section function receives: read-only access to the workspace's artifacts. */
export interface ReportContext {
  /** Workspace root (absolute). */
  readonly root: string;
  /** The profile of this command (RUN_MODE). */
  readonly profile: string;
  /** Absolute path of a workspace-relative path. */
  path(rel: string): string;
  /** Whether a workspace-relative file exists. */
  exists(rel: string): boolean;
  /** Parsed JSON of a workspace-relative file (a parse error names the file). */
  readJson(rel: string): unknown;
  /** Parsed JSON Lines of a workspace-relative file (a parse error names the file and line). */
  readJsonl(rel: string): unknown[];
  /** The target that declares this output, if any. */
  producerOf(rel: string): string | undefined;
}

/** One item of a section: a chart (a Vega-Lite spec, rendered to SVG when the report is written), a table or a paragraph. */
export type ReportItem =
  | { title: string; vegaLiteSpec: Record<string, unknown>; note?: string }
  | { title: string; table: { columns: string[]; rows: (string | number | boolean | null)[][] }; note?: string }
  | { title: string; text: string };

/**
 * A section of the report. `unavailable` (instead of items) says why it cannot be drawn, e.g.
 * "reports/x.json is missing: build target x": shown as such, never as an empty chart.
 */
export interface ReportSection {
  title: string;
  /** One paragraph under the title: what the section shows and where its figures come from. */
  note?: string;
  items?: ReportItem[];
  unavailable?: string;
}

export type ReportSectionFn = (
  ctx: ReportContext,
) => ReportSection | ReportSection[] | Promise<ReportSection | ReportSection[]>;

/** The default export of a pipeline's report sections module: the section functions in page order. */
export function defineReportSections(fns: ReportSectionFn[]): ReportSectionFn[] {
  return fns;
}
