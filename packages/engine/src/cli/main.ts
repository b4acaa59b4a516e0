// The rc1-build command line (docs/design.md, "Command line"): argument parsing and dispatch to commands.
// Exit codes: 0 ok, 1 a rule failed (or audit found a problem), 2 a gate failed, 64 usage or
// configuration error, 130/143 interrupted.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError, didYouMean } from '../config/usage-error.ts';
import { printDiagnostics, printInternalError } from '../report/diagnostics.ts';
import { asEngineWriteError } from '../util/write-error.ts';
import { type BuildCommandOptions, runBuildOnce } from './build-command.ts';
import { runWatch } from './watch.ts';
import { STATE_DIR, type Workspace, findRoot, openWorkspace } from '../workspace/workspace.ts';
import { prestartWorkers } from '../runner/worker-pool.ts';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CommandContext, PipelineCommand } from '../api/index.ts';
import { COMMAND_NAMES, VALUE_FLAGS, commandDef, parseArgsOptions } from './definition.ts';
import type { Invocation, PipelineCommandInfo } from './program.ts';
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
import { NotServed, type Served } from '../server/served.ts';

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
      if (!(v >= 0) || a === '--wait=')
        throw new UsageError({
          headline: `--wait expects a number of seconds, got ${JSON.stringify(a.slice(7))}`,
          hint: 'use --wait (no limit) or --wait=600',
        });
      waitS = v;
    } else rest.push(a);
  }
  return { argv: rest, waitS };
}

export const VERSION = '0.1.0';

/** Index of the first word that is not an option (or an option's value) in argv; -1 if none. */
function firstWord(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return i + 1 < argv.length ? i + 1 : -1;
    if (VALUE_FLAGS.has(a)) {
      i++;
      continue;
    }
    if (!a.startsWith('-')) return i;
  }
  return -1;
}

/** `-C DIR` / `--directory DIR` / `--directory=DIR` / `-CDIR` before `end`, if any. */
export function directoryBefore(argv: readonly string[], end: number): string | undefined {
  let dir: string | undefined;
  for (let i = 0; i < end; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if ((a === '-C' || a === '--directory') && i + 1 < argv.length) dir = argv[++i];
    else if (a.startsWith('--directory=')) dir = a.slice('--directory='.length);
    else if (a.startsWith('-C') && a.length > 2) dir = a.slice(2);
  }
  return dir;
}

/** The workspace root a command line run in `cwd` works on (bin/rc1-build.js finds it the same way). */
export function workspaceRootOf(argv: readonly string[], cwd: string): string {
  return findRoot(directoryBefore(argv, argv.length), cwd);
}

/** Runs a command the pipeline declares: its module is compiled like a rule and its default export called. */
async function runPipelineCommand(ws: Workspace, name: string, args: string[], io: Io): Promise<number> {
  const decl = ws.pipeline.commands[name]!;
  const mod = (await import(pathToFileURL(await ws.compiler.compiled(decl.module)).href)) as {
    default?: PipelineCommand;
  };
  const cmd = mod.default;
  if (cmd?.kind !== 'command' || typeof cmd.run !== 'function') {
    throw new UsageError({
      headline: `command ${name}: ${decl.module} has no default export made by defineCommand(…)`,
      hint: 'export default defineCommand(async (args, ctx) => { …; return 0; })',
    });
  }
  ws.saveCaches();
  return await cmd.run(args, {
    root: ws.root,
    profile: ws.profile,
    config: ws.config.values as CommandContext['config'],
    out: io.out,
    err: io.err,
  });
}

/** The pipeline's commands for --help (none when the workspace cannot be opened). */
async function pipelineCommandsOf(root: string): Promise<PipelineCommandInfo[]> {
  try {
    const ws = await openWorkspace(root);
    return Object.entries(ws.pipeline.commands).map(([name, c]) => ({
      name,
      summary: c.summary,
      ...(c.usage ? { usage: c.usage } : {}),
    }));
  } catch (e) {
    if (e instanceof NotServed) throw e;
    return [];
  }
}

/** Engine commands that parse their own arguments: each file exports run(root, args, io). */
const OWN_PARSER: Record<string, () => Promise<{ run: (root: string, args: string[], io: Io) => Promise<number> }>> = {
  log: () => import('./log.ts'),
  diff: () => import('./diff.ts'),
  why: () => import('./why.ts'),
  sync: () => import('./sync.ts'),
};

/** The arguments of a command that parses its own, rebuilt from the parsed invocation. */
function ownArgs(inv: Invocation): string[] {
  const out = [...inv.positionals];
  for (const o of commandDef(inv.command)!.options) {
    const v = inv.values[o.long];
    if (v === undefined || v === false) continue;
    out.push(`--${o.long}`, ...(typeof v === 'string' ? [v] : []));
  }
  return out;
}

/**
 * Target names as given on the command line, or output paths (workspace-relative, or relative to
 * the working directory when run from a subdirectory; ./ and a trailing / are ignored; a file
 * inside an output directory names that directory's producer) resolved through the producers map.
 */
export function resolveTargets(ws: Workspace, names: readonly string[], cwd: string, firstIsWord: boolean): string[] {
  const p = ws.pipeline;
  const producerOf = (rel: string): string | undefined => {
    for (let q = rel; q && q !== '.' && !q.startsWith('..'); q = path.posix.dirname(q)) {
      const t = p.producers.get(q);
      if (t) return t;
      if (path.posix.dirname(q) === q) break;
    }
    return undefined;
  };
  return names.map((name, i) => {
    if (p.targets.has(name)) return name;
    const clean = name.replace(/\\/g, '/');
    const candidates = [path.posix.normalize(clean).replace(/\/+$/, '')];
    const fromCwd = path.relative(ws.root, path.resolve(cwd, name)).split(path.sep).join('/');
    if (!fromCwd.startsWith('..')) candidates.push(fromCwd);
    for (const c of candidates) {
      const t = producerOf(c.replace(/^(\.\/)+/, ''));
      if (t) return t;
    }
    const commands = i === 0 && firstIsWord ? [...COMMAND_NAMES, ...Object.keys(p.commands)] : [];
    const guess = didYouMean(name, [...commands, ...p.targets.keys()]);
    const isCommand = guess !== undefined && commands.includes(guess);
    throw new UsageError({
      headline: isCommand
        ? `unknown command ${name} (no target or output path of this pipeline either)`
        : `unknown target ${name} (no output path of this pipeline either)`,
      hint: guess
        ? `did you mean ${guess}?`
        : `rc1-build graph --format json lists the targets and their outputs${commands.length ? '; rc1-build --help the commands' : ''}`,
    });
  });
}

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  tty: boolean;
}

/** Build options a no-op prints alike with or without (the rest leave no up-to-date stamp). */
const STAMP_OPTIONS = new Set(['jobs', 'keep-going', 'directory']);
/** The engine's files an up-to-date stamp names (dist/, beside this bundle): a rebuilt engine decides in full. */
const ENGINE_FILES = ['./cli.js', './worker.js', './noop.cjs'];

const isHelpFlag = (a: string): boolean => a === '-h' || a === '--help' || a === '--version';

/**
 * Runs one command line; returns its exit code. `served`: the resident server runs it
 * (src/server/server.ts): signals come from the request, and commands that own the process
 * (watch, check-determinism, server, a pipeline's own commands, the internal ones) are refused
 * before any output (NotServed), so the client runs them in-process.
 */
export async function main(argv: string[], io: Io = processIo(), served?: Served): Promise<number> {
  let json = false;
  const notServed = (what: string): void => {
    if (served) throw new NotServed(`${what} runs in-process`);
  };
  try {
    // Internal: the resident server of a workspace (rc1-build server start spawns it).
    if (argv[0] === '__server') {
      notServed('__server');
      const { runServer } = await import('../server/server.ts');
      await runServer(argv[1]!, Number(argv[2]), main, workspaceRootOf, argv[3]);
      return 0;
    }
    // Internal: what a Slurm batch job runs on its node (runner/slurm/slurm-runner.ts).
    if (argv[0] === '__run-target') {
      notServed('__run-target');
      return await runTargetOnNode(argv[1], io, new URL('./worker.js', import.meta.url));
    }
    // Internal: shell completion's candidates (completion.ts), from the cached pipeline.
    if (argv[0] === '__complete') return (await import('./completion.ts')).runComplete(argv.slice(1), io);
    const cwd = process.cwd();
    const w = firstWord(argv);
    const word = w >= 0 ? argv[w] : undefined;
    const root = findRoot(directoryBefore(argv, argv.length), cwd);
    // A word that is neither an engine command nor an option may be a command of the pipeline,
    // which has its own options: hand it everything after its name.
    let ws: Workspace | undefined;
    if (word !== undefined && !COMMAND_NAMES.has(word) && word !== 'help') {
      ws = await openWorkspace(root);
      if (Object.hasOwn(ws.pipeline.commands, word)) {
        notServed(`the pipeline command ${word}`); // its module's state and signals are its own
        return await runPipelineCommand(ws, word, argv.slice(w + 1), io);
      }
    }
    const { argv: rest0, waitS } = extractWait(argv);
    const dashdash = rest0.indexOf('--');
    const helpAsked = (dashdash < 0 ? rest0 : rest0.slice(0, dashdash)).some(isHelpFlag) || word === 'help';
    let inv: Invocation | undefined;
    if (!helpAsked && (word === undefined || word === 'build' || !COMMAND_NAMES.has(word))) {
      // The plain build: node:util parseArgs from the definition (commander is not loaded; see program.ts).
      try {
        const { values, positionals } = parseArgs({
          args: rest0,
          allowPositionals: true,
          strict: true,
          options: parseArgsOptions('build'),
        });
        inv = {
          command: 'build',
          positionals: positionals[0] === 'build' && word === 'build' ? positionals.slice(1) : positionals,
          values,
        };
      } catch (e) {
        if (!(e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw e;
        // commander says what is wrong and suggests the nearest option; if it accepts, the parseArgs error stands.
        json = rest0.includes('--json');
        await (await import('./program.ts')).parseCommandLine(rest0, VERSION, io, []);
        throw e;
      }
    } else {
      const parsed = await (await import('./program.ts')).parseCommandLine(
        rest0,
        VERSION,
        io,
        helpAsked ? await pipelineCommandsOf(root) : [],
      );
      if (typeof parsed === 'number') return parsed;
      inv = parsed;
    }
    const values = inv.values;
    json = values.json === true;
    const command = inv.command;
    const args = inv.positionals;

    if (command === 'completion') return (await import('./completion.ts')).printCompletion(args[0]!, io);
    if (command === 'cache-keygen') {
      const { generateSigningKey } = await import('../cache/remote/signing.ts');
      const k = generateSigningKey();
      io.out(
        `key id:      ${k.keyId}\npublic key:  ${k.publicKey}\nprivate key: ${k.privateKey}\n\nrc1.build.ts:  remoteCache: { …, trustedKeys: { <name>: '${k.publicKey}' }, signingKeyEnv: 'RC1_CACHE_SIGNING_KEY' }\nenvironment:   RC1_CACHE_SIGNING_KEY=<private key> (keep it secret: CI secrets, not the repository)\n`,
      );
      return 0;
    }
    if (command === 'server') {
      notServed('server');
      const ctl = await import('../server/control.ts');
      const sub = args[0];
      if (sub === 'start')
        return await ctl.serverStart(root, ctl.parseIdleTimeout(values['idle-timeout'] as string | undefined), io);
      if (sub === 'stop') return await ctl.serverStop(root, io);
      if (sub === 'status') return await ctl.serverStatus(root, io);
      throw new UsageError({
        headline: `rc1-build server expects start, stop or status, got ${JSON.stringify(sub)}`,
        hint: 'rc1-build server start [--idle-timeout=SECONDS] | stop | status',
      });
    }
    const own = OWN_PARSER[command];
    if (own) return await (await own()).run(root, ownArgs(inv), io);
    if (command === 'audit')
      return values.sync !== undefined
        ? await (await import('./audit-sync.ts')).runAuditSync(root, values.sync as string, json, io)
        : await runAudit(root, json, io);

    // A build from a fresh state directory (no trace) runs rules: its workers start now, beside
    // the start-up (compiling rc1.build.ts), instead of before its first rule (runner/worker-pool.ts).
    if (
      command === 'build' &&
      !served &&
      !ws &&
      values['dry-run'] !== true &&
      !fs.existsSync(path.join(root, STATE_DIR, 'trace.log'))
    ) {
      const j = Number(values.jobs ?? availableParallelism());
      prestartWorkers(new URL('./worker.js', import.meta.url), Number.isInteger(j) && j >= 1 ? Math.min(j, 2) : 1);
    }
    ws ??= await openWorkspace(root);
    const targetsArgs = resolveTargets(ws, args, cwd, command === 'build' && word !== 'build');
    if (command === 'graph')
      return await runGraph(root, (values.format as string | undefined) ?? 'dot', io, targetsArgs, ws);
    if (command === 'status') return runStatus(ws, json, io, targetsArgs);
    if (command === 'failpack') return await runFailpack(ws, io);
    if (command === 'report') {
      notServed('report'); // the pipeline's report sections module runs per report, its module state its own
      return await (await import('./report.ts')).runReport(ws, io);
    }
    if (command === 'clean')
      return await runClean(ws, targetsArgs, values.cache === true, io, values['dry-run'] === true);
    if (command === 'gc') return runGc(ws, values['max-size'] as string | undefined, json, io);

    let jobs = availableParallelism();
    if (values.jobs !== undefined) {
      jobs = Number(values.jobs);
      if (!Number.isInteger(jobs) || jobs < 1)
        throw new UsageError({ headline: `-j expects a positive integer, got ${JSON.stringify(values.jobs)}` });
    }
    const targets = targetsArgs.length ? targetsArgs : ws.pipeline.defaultTargets;
    const options: BuildCommandOptions = {
      targets,
      jobs,
      keepGoing: values['keep-going'] === true,
      dryRun: values['dry-run'] === true,
      forced: new Set(values.force ? targets : []),
      explain: values.explain === true,
      verbose: values.verbose === true,
      json,
      command: ['rc1-build', ...argv].join(' '),
      waitS,
      remoteCache: parseRemoteFlag(values['remote-cache'] as string | undefined),
    };
    if (command === 'watch') {
      notServed('watch');
      return await runWatch(root, ws, targetsArgs, options, io);
    }
    if (command === 'check-determinism') {
      notServed('check-determinism');
      return await runCheckDeterminism(root, ws, targetsArgs, options, io);
    }
    // Options that leave a no-op's output as it is may leave an up-to-date stamp (cli/fast-noop.ts),
    // in-process or served alike (a served command has the request's cwd and environment).
    const stamp =
      command === 'build' && Object.keys(values).every((k) => STAMP_OPTIONS.has(k))
        ? { argv: [...argv], cwd, engine: ENGINE_FILES.map((f) => fileURLToPath(new URL(f, import.meta.url))) }
        : undefined;
    return await runBuildOnce(
      ws,
      options,
      io,
      served
        ? {
            installSignals: false,
            signals: (h) => served.onSignal(h),
            takeWorker: () => served.takeWorker(),
            ...(stamp ? { stamp } : {}),
          }
        : { installSignals: true, ...(stamp ? { stamp } : {}) },
    );
  } catch (e) {
    if (e instanceof NotServed) throw e;
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
