// The one declarative definition of rc1-build's command line: every command, its arguments and
// its options. Three things are generated from it: the node:util parseArgs options of the plain
// build invocation (`rc1-build [TARGET…] [build options]`, the benchmarked no-op path), the
// commander program that parses subcommands and prints --help and usage errors (program.ts,
// loaded lazily), and shell completion (completion.ts). This module imports nothing, so the
// no-op build pays for no parser beyond node:util.

export interface OptionDef {
  /** The long name without dashes (also the key of the parsed value). */
  long: string;
  short?: string;
  /** The value's placeholder (absent: a boolean flag). */
  value?: string;
  /** `--wait[=SECONDS]`: the value may only be attached with '=' (extractWait in main.ts reads it). */
  attachedValue?: boolean;
  description: string;
  /** Values the option accepts (completed in shells). */
  choices?: readonly string[];
}

export interface CommandDef {
  name: string;
  /** Positional arguments as help shows them: '[TARGET…]', 'ARTIFACT|TARGET', '[RUN_A] [RUN_B]'. */
  args?: string;
  /** The most positional arguments (undefined: any number); more is a usage error. */
  maxArgs?: number;
  minArgs?: number;
  /** Positionals are target names (completed from the pipeline, resolved through output paths). */
  targets?: boolean;
  summary: string;
  options: readonly OptionDef[];
  /** Not listed in --help (internal commands). */
  hidden?: boolean;
}

const JSON_OPT: OptionDef = { long: 'json', description: 'JSON on stdout' };

export const BUILD_OPTIONS: readonly OptionDef[] = [
  { long: 'dry-run', short: 'n', description: 'print the plan with reasons; run nothing' },
  { long: 'explain', description: 'print why each target runs or is skipped' },
  { long: 'jobs', short: 'j', value: 'N', description: 'parallel rules (default: number of CPUs)' },
  { long: 'keep-going', short: 'k', description: 'continue with independent targets after a failure' },
  {
    long: 'wait',
    value: 'SECONDS',
    attachedValue: true,
    description: 'queue behind a running build instead of refusing (--wait: no limit; --wait=600)',
  },
  { long: 'force', description: 'rebuild the named targets even if up to date' },
  { long: 'json', description: 'JSON Lines events on stdout (one object per line)' },
  { long: 'verbose', short: 'v', description: 'show rule log lines and up-to-date targets' },
  {
    long: 'remote-cache',
    value: 'MODE',
    choices: ['off', 'read', 'readwrite'],
    description: 'the remote cache declared in rc1.build.ts (default: its mode)',
  },
];

/** Options of every command (and of the plain build invocation). */
export const GLOBAL_OPTIONS: readonly OptionDef[] = [
  {
    long: 'directory',
    short: 'C',
    value: 'DIR',
    description: 'run in DIR (default: the nearest directory upwards holding rc1.build.ts)',
  },
];

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

export const COMMANDS: readonly CommandDef[] = [
  {
    name: 'build',
    args: '[TARGET…]',
    targets: true,
    summary: "build the targets (default: the pipeline's defaultTargets) and what they need",
    options: BUILD_OPTIONS,
  },
  {
    name: 'status',
    args: '[TARGET…]',
    targets: true,
    summary: 'each target: up-to-date | stale (reason) | missing | failed',
    options: [JSON_OPT],
  },
  {
    name: 'graph',
    args: '[TARGET…]',
    targets: true,
    summary: 'the target graph (with TARGETs: they and what they need)',
    options: [
      {
        long: 'format',
        value: 'FORMAT',
        choices: ['dot', 'mermaid', 'json'],
        description: 'dot | mermaid | json (default: dot)',
      },
    ],
  },
  {
    name: 'audit',
    maxArgs: 0,
    summary: 'verify every artifact on disk against the manifest',
    options: [
      { long: 'sync', value: 'FILE', description: 'instead: check the sha256 of every artifact a SYNC package lists' },
      JSON_OPT,
    ],
  },
  {
    name: 'clean',
    args: '[TARGET…]',
    targets: true,
    summary: "remove outputs and the engine's per-target state (all targets when none is named)",
    options: [
      { long: 'dry-run', short: 'n', description: 'list what would be removed; remove nothing' },
      { long: 'cache', description: 'also the output cache and rule caches' },
    ],
  },
  {
    name: 'gc',
    maxArgs: 0,
    summary: 'evict least recently used output-cache entries down to the cap; remove compiled rule files no rule uses',
    options: [
      { long: 'max-size', value: 'SIZE', description: "the cap (default: the pipeline's, else 10G)" },
      JSON_OPT,
    ],
  },
  {
    name: 'watch',
    args: '[TARGET…]',
    targets: true,
    summary: 'rebuild on change of any declared input (Ctrl-C to stop)',
    options: BUILD_OPTIONS.filter((o) => o.long !== 'wait' && o.long !== 'dry-run'),
  },
  {
    name: 'check-determinism',
    args: 'TARGET…',
    minArgs: 1,
    targets: true,
    summary: 'build each target twice in scratch dirs and compare the outputs',
    options: BUILD_OPTIONS.filter((o) => o.long !== 'wait' && o.long !== 'dry-run' && o.long !== 'force'),
  },
  {
    name: 'why',
    args: 'ARTIFACT|TARGET',
    minArgs: 1,
    maxArgs: 1,
    targets: true,
    summary: 'lineage: producer, rule, params, inputs and their producers, the run that built it',
    options: [{ long: 'depth', value: 'N|all', description: 'levels of inputs to follow (default 3)' }, JSON_OPT],
  },
  {
    name: 'log',
    maxArgs: 0,
    summary: 'the recorded runs, newest first',
    options: [{ long: 'limit', value: 'N', description: 'at most N runs (default 20)' }, JSON_OPT],
  },
  {
    name: 'diff',
    args: '[RUN_A] [RUN_B]',
    maxArgs: 2,
    summary:
      'params, outputs, gate checks and metrics of two runs (default: the last two; a run id, last~N or a git revision)',
    options: [{ long: 'all', description: 'also unchanged checks and metrics' }, JSON_OPT],
  },
  {
    name: 'sync',
    maxArgs: 0,
    summary: 'write the SYNC hand-off package (<sync dir>/SYNC_round<N>.json)',
    options: [
      { long: 'round', value: 'N', description: 'the round (default: the next)' },
      { long: 'verbose', short: 'v', description: 'also the round ritual: the last metrics lines and the tree' },
      JSON_OPT,
    ],
  },
  {
    name: 'report',
    maxArgs: 0,
    summary: "write <manifest dir>/index.html: graph, gates, run diff and the pipeline's charts",
    options: [],
  },
  {
    name: 'failpack',
    maxArgs: 0,
    summary: 'pack logs, gate reports and error reports into <manifestDir>/FAIL_<ts>.tgz',
    options: [],
  },
  {
    name: 'cache-keygen',
    maxArgs: 0,
    summary: 'print a new Ed25519 key pair for signing remote cache entries',
    options: [],
  },
  {
    name: 'server',
    args: 'start|stop|status',
    minArgs: 1,
    maxArgs: 1,
    summary: 'the resident server of this workspace: commands run in it, warm (docs/engine.md)',
    options: [
      {
        long: 'idle-timeout',
        value: 'SECONDS',
        description: 'start: exit after this long without a command (default 10800: 3 hours)',
      },
    ],
  },
  {
    name: 'completion',
    args: 'bash|zsh|fish',
    minArgs: 1,
    maxArgs: 1,
    summary: 'print the shell completion script',
    options: [],
  },
];

export const COMMAND_NAMES: ReadonlySet<string> = new Set(COMMANDS.map((c) => c.name));

export function commandDef(name: string): CommandDef | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `-j, --jobs N` as help and completion spell it. */
export function flagsOf(o: OptionDef): string {
  return `${o.short ? `-${o.short}, ` : ''}--${o.long}${o.value ? (o.attachedValue ? `[=${o.value}]` : ` ${o.value}`) : ''}`;
}

/** Options that take a separate value, as spelt on the command line (so `-j 2 train` reads `train` as the first word). */
export const VALUE_FLAGS: ReadonlySet<string> = new Set(
  [...GLOBAL_OPTIONS, ...COMMANDS.flatMap((c) => c.options)]
    .filter((o) => o.value && !o.attachedValue)
    .flatMap((o) => [`--${o.long}`, ...(o.short ? [`-${o.short}`] : [])]),
);

type ParseArgsOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** node:util parseArgs options of a command (its own and the global ones; --wait is read before). */
export function parseArgsOptions(name: string): ParseArgsOptions {
  const out: ParseArgsOptions = {};
  for (const o of [...GLOBAL_OPTIONS, ...commandDef(name)!.options]) {
    if (o.attachedValue) continue;
    out[o.long] = { type: o.value ? 'string' : 'boolean', ...(o.short ? { short: o.short } : {}) };
  }
  return out;
}
