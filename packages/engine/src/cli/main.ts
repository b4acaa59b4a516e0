// The rc1-build command line (docs/design.md, "Command line"): argument parsing and dispatch to commands.
// Exit codes: 0 ok, 1 a rule failed (or audit found a problem), 2 a gate failed, 64 usage or
// configuration error, 130/143 interrupted.
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError, didYouMean } from '../config/usage-error.ts';
import { printDiagnostics, printInternalError } from '../report/diagnostics.ts';
import { asEngineWriteError } from '../util/write-error.ts';
import { type BuildCommandOptions, runBuildOnce } from './build-command.ts';
import { runWatch } from './watch.ts';
import { type Workspace, openWorkspace } from '../workspace/workspace.ts';
import { pathToFileURL } from 'node:url';
import type { CommandContext, PipelineCommand } from '../api/index.ts';
import { ENGINE_COMMANDS, VALUE_OPTIONS } from '../config/engine-commands.ts';
import { runStatus } from './status.ts';
import { runGraph } from './graph.ts';
import { runAudit } from './audit.ts';
import { runClean } from './clean.ts';
import { runGc } from './gc.ts';
import { runFailpack } from './failpack.ts';
import { processIo } from './stdio.ts';
import { runTargetOnNode } from './run-target.ts';
import { runCheckDeterminism } from './check-determinism.ts';
import { availableParallelism } from 'node:os';
import { parseRemoteFlag } from '../cache/remote/open-remote.ts';

/**
 * `--wait` and `--wait=SECONDS` (parseArgs cannot take an optional value: `--wait train` must
 * not read `train` as the seconds). Returns the other arguments and the wait in seconds (0: none).
 */
export function extractWait(argv: string[]): { argv: string[]; waitS: number } {
  let waitS = 0;
  const rest: string[] = [];
  for (const a of argv) {
    if (a === '--wait') waitS = Infinity;
    else if (a.startsWith('--wait=')) {
      const v = Number(a.slice('--wait='.length));
      if (!(v >= 0) || a === '--wait=') throw new UsageError({ headline: `--wait expects a number of seconds, got ${JSON.stringify(a.slice(7))}`, hint: 'use --wait (no limit) or --wait=600' });
      waitS = v;
    } else rest.push(a);
  }
  return { argv: rest, waitS };
}

export const VERSION = '0.1.0';

const HELP = `rc1-build ${VERSION} — a content-addressed, gate-aware build system for ML pipelines

usage:
  rc1-build [TARGET…]            build the targets (default: the pipeline's defaultTargets) and what they need
    -n, --dry-run                print the plan with reasons; run nothing
    --explain                    print why each target runs or is skipped
    -j, --jobs N                 parallel rules (default: number of CPUs)
    -k, --keep-going             continue with independent targets after a failure
    --wait[=SECONDS]             queue behind a running build instead of refusing (default: no limit)
    --force                      rebuild the named targets even if up to date
    --json                       JSON Lines events on stdout (one object per line)
    -v, --verbose                show rule log lines and up-to-date targets
    --remote-cache=MODE          off | read | readwrite: the remote cache declared in rc1.build.ts (default: its mode)
  rc1-build status [--json]      every target: up-to-date | stale (reason) | missing | failed
  rc1-build graph [--format dot|mermaid|json]
  rc1-build audit [--json]       verify every artifact on disk against the manifest
  rc1-build clean [TARGET…] [--cache]   remove outputs and the engine's per-target state (--cache: and the output cache)
  rc1-build gc [--max-size SIZE] evict least recently used output-cache entries down to the cap (default 10G)
  rc1-build watch [TARGET…]      rebuild on change of any declared input (Ctrl-C to stop)
  rc1-build check-determinism TARGET…   build each target twice in scratch dirs and compare the outputs (a target
                                 that differs is reported and not uploaded to a remote cache)
  rc1-build why ARTIFACT|TARGET [--depth N|all] [--json]   lineage: producer, rule, params, inputs and
                                 their producers, the run that built it, up to date or the root cause
  rc1-build sync [--round N] [--verbose]   write the SYNC hand-off package (<sync dir>/SYNC_round<N>.json)
  rc1-build audit --sync FILE    check the sha256 of every artifact a SYNC package lists
  rc1-build log [--limit N] [--json]   the recorded runs, newest first
  rc1-build diff [RUN_A] [RUN_B] [--all] [--json]   params, outputs, gate checks and metrics of two runs
                                 (default: the last two; a run id, last~N or a git revision)
  rc1-build report               write <manifest dir>/index.html: graph, gates, run diff and the pipeline's charts
  rc1-build failpack             pack logs, preflight and failed gates' reports into <manifestDir>/FAIL_<ts>.tgz
  rc1-build COMMAND …           a command the pipeline declares (definePipeline({ commands })), listed below
  rc1-build cache-keygen         print a new Ed25519 key pair for signing remote cache entries
  common: -C DIR (run in DIR), -h/--help, --version

exit codes: 0 ok, 1 a rule failed, 2 a gate failed, 64 usage or configuration error
`;

const COMMANDS = new Set(ENGINE_COMMANDS);

/** Index of the first word that is not an option (or an option's value) in argv; -1 if none. */
function firstWord(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return i + 1 < argv.length ? i + 1 : -1;
    if (VALUE_OPTIONS.has(a)) { i++; continue; }
    if (!a.startsWith('-')) return i;
  }
  return -1;
}

/** `-C DIR` / `--directory DIR` / `--directory=DIR` before the first word, if any. */
function directoryBefore(argv: readonly string[], end: number): string | undefined {
  let dir: string | undefined;
  for (let i = 0; i < end; i++) {
    const a = argv[i]!;
    if ((a === '-C' || a === '--directory') && i + 1 < end) dir = argv[++i];
    else if (a.startsWith('--directory=')) dir = a.slice('--directory='.length);
  }
  return dir;
}

/** Runs a command the pipeline declares: its module is compiled like a rule and its default export called. */
async function runPipelineCommand(ws: Workspace, name: string, args: string[], io: Io): Promise<number> {
  const decl = ws.pipeline.commands[name]!;
  const mod = (await import(pathToFileURL(await ws.compiler.compiled(decl.module)).href)) as { default?: PipelineCommand };
  const cmd = mod.default;
  if (cmd?.kind !== 'command' || typeof cmd.run !== 'function') {
    throw new UsageError({ headline: `command ${name}: ${decl.module} has no default export made by defineCommand(…)`, hint: "export default defineCommand(async (args, ctx) => { …; return 0; })" });
  }
  ws.saveCaches();
  return await cmd.run(args, { root: ws.root, profile: ws.profile, config: ws.config.values as CommandContext['config'], out: io.out, err: io.err });
}

/** The pipeline's commands for --help (none when the workspace cannot be opened). */
async function pipelineCommandsHelp(root: string): Promise<string> {
  try {
    const ws = await openWorkspace(root);
    const lines = Object.entries(ws.pipeline.commands).map(([n, c]) => `  rc1-build ${`${n} ${c.usage ?? ''}`.trimEnd().padEnd(28)} ${c.summary}`);
    return lines.length ? `\ncommands of this pipeline:\n${lines.join('\n')}\n` : '';
  } catch {
    return '';
  }
}

/** Engine commands that parse their own arguments: each file exports run(root, args, io). */
const OWN_PARSER: Record<string, () => Promise<{ run: (root: string, args: string[], io: Io) => Promise<number> }>> = {
  log: () => import('./log.ts'),
  diff: () => import('./diff.ts'),
  why: () => import('./why.ts'),
  sync: () => import('./sync.ts'),
};

interface Io { out: (s: string) => void; err: (s: string) => void; tty: boolean }

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  let json = false;
  try {
    // Internal: what a Slurm batch job runs on its node (runner/slurm/slurm-runner.ts).
    if (argv[0] === '__run-target') return await runTargetOnNode(argv[1], io, new URL('./worker.js', import.meta.url));
    // A word that is neither an engine command nor an option may be a command of the pipeline,
    // which has its own options: hand it everything after its name.
    let ws: Workspace | undefined;
    const w = firstWord(argv);
    if (w >= 0 && !COMMANDS.has(argv[w]!)) {
      ws = await openWorkspace(path.resolve(directoryBefore(argv, w) ?? process.cwd()));
      if (Object.hasOwn(ws.pipeline.commands, argv[w]!)) return await runPipelineCommand(ws, argv[w]!, argv.slice(w + 1), io);
    }
    const own = w >= 0 ? OWN_PARSER[argv[w]!] : undefined;
    if (own) {
      json = argv.includes('--json');
      return await (await own()).run(path.resolve(directoryBefore(argv, w) ?? process.cwd()), argv.slice(w + 1), io);
    }
    const { argv: rest0, waitS } = extractWait(argv);
    const { values, positionals } = parseArgs({
      args: rest0,
      allowPositionals: true,
      strict: true,
      options: {
        'dry-run': { type: 'boolean', short: 'n' },
        explain: { type: 'boolean' },
        jobs: { type: 'string', short: 'j' },
        'keep-going': { type: 'boolean', short: 'k' },
        'remote-cache': { type: 'string' },
        force: { type: 'boolean' },
        json: { type: 'boolean' },
        verbose: { type: 'boolean', short: 'v' },
        format: { type: 'string' },
        cache: { type: 'boolean' },
        sync: { type: 'string' },
        'max-size': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
        directory: { type: 'string', short: 'C' },
      },
    });
    json = values.json === true;
    if (values.help) { io.out(HELP + (await pipelineCommandsHelp(path.resolve(values.directory ?? process.cwd())))); return 0; }
    if (values.version) { io.out(`${VERSION}\n`); return 0; }
    const root = path.resolve(values.directory ?? process.cwd());
    const [first, ...rest] = positionals;
    const command = first && COMMANDS.has(first) ? first : 'build';
    const args = command === 'build' && first !== 'build' ? positionals : rest;

    if (command === 'cache-keygen') {
      const { generateSigningKey } = await import('../cache/remote/signing.ts');
      const k = generateSigningKey();
      io.out(`key id:      ${k.keyId}\npublic key:  ${k.publicKey}\nprivate key: ${k.privateKey}\n\nrc1.build.ts:  remoteCache: { …, trustedKeys: { <name>: '${k.publicKey}' }, signingKeyEnv: 'RC1_CACHE_SIGNING_KEY' }\nenvironment:   RC1_CACHE_SIGNING_KEY=<private key> (keep it secret: CI secrets, not the repository)\n`);
      return 0;
    }
    if (command === 'graph') return await runGraph(root, values.format ?? 'dot', io);
    if (command === 'audit') return values.sync !== undefined ? await (await import('./audit-sync.ts')).runAuditSync(root, values.sync, json, io) : await runAudit(root, json, io);


    ws ??= await openWorkspace(root);
    for (const name of args) {
      if (!ws.pipeline.targets.has(name)) {
        const guess = didYouMean(name, ws.pipeline.targets.keys());
        throw new UsageError({ headline: `unknown target ${name}`, ...(guess ? { hint: `did you mean ${guess}?` } : { hint: 'rc1-build graph --format json lists the targets' }) });
      }
    }
    if (command === 'status') return runStatus(ws, json, io);
    if (command === 'failpack') return await runFailpack(ws, io);
    if (command === 'report') return await (await import('./report.ts')).runReport(ws, io);
    if (command === 'clean') return runClean(ws, args, values.cache === true, io);
    if (command === 'gc') return runGc(ws, values['max-size'], json, io);

    let jobs = availableParallelism();
    if (values.jobs !== undefined) {
      jobs = Number(values.jobs);
      if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError({ headline: `-j expects a positive integer, got ${JSON.stringify(values.jobs)}` });
    }
    const targets = args.length ? args : ws.pipeline.defaultTargets;
    const options: BuildCommandOptions = {
      targets, jobs, keepGoing: values['keep-going'] === true, dryRun: values['dry-run'] === true,
      forced: new Set(values.force ? targets : []), explain: values.explain === true, verbose: values.verbose === true, json,
      command: ['rc1-build', ...argv].join(' '), waitS, remoteCache: parseRemoteFlag(values['remote-cache']),
    };
    if (command === 'watch') return await runWatch(root, ws, args, options, io);
    if (command === 'check-determinism') return await runCheckDeterminism(root, ws, args, options, io);
    return await runBuildOnce(ws, options, io, { installSignals: true });
  } catch (e) {
    if (e instanceof UsageError) {
      printDiagnostics(e.diagnostics, io, json);
      return 64;
    }
    if ((e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      printDiagnostics([{ headline: (e as Error).message, hint: 'rc1-build --help lists the options' }], io, json);
      return 64;
    }
    // A write the filesystem refused (full disk, EIO, read-only…): one message, exit 1.
    const w = asEngineWriteError(e);
    if (w) {
      printDiagnostics([{ headline: w.message, hint: w.hint }], io, json, 1);
      return 1;
    }
    printInternalError(e, io);
    return 1;
  }
}
