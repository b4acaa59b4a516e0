// The commander program generated from the CLI's definition (definition.ts). Loaded only for
// subcommands, --help, --version and usage errors of the plain build invocation: importing
// commander costs 10.1 ms (min of 40 in-process hrtime runs around `await import('commander')` on
// the shared 2-core dev box, 20 ms under load; far more than the ~3 ms the no-op build can spare:
// bench/build-graph.ts's goal is `node -e 0` + 50 ms), so the plain `rc1-build [TARGET…]` is parsed by node:util
// parseArgs with options generated from the same definition (main.ts). commander itself is
// imported dynamically below: a static import would be hoisted into the CLI bundle's top level
// and load on every command.
import type { Command, Option } from 'commander';
import { UsageError } from '../config/usage-error.ts';
import { BUILD_OPTIONS, COMMANDS, type CommandDef, GLOBAL_OPTIONS, type OptionDef } from './definition.ts';

export interface Invocation {
  command: string;
  positionals: string[];
  /** Option values by long name (as parseArgs gives them). */
  values: Record<string, string | boolean | undefined>;
}

export interface PipelineCommandInfo {
  name: string;
  summary: string;
  usage?: string;
}

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const camel = (s: string): string => s.replace(/-(\w)/g, (_m, c: string) => c.toUpperCase());

/** commander's argument syntax for the definition's: `[TARGET…]` → `[TARGET...]`, `TARGET…` → `<TARGET...>`. */
function argsOf(def: CommandDef): string[] {
  if (!def.args) return [];
  return def.args.split(' ').map((a) => {
    const s = a.replace('…', '...');
    return s.startsWith('[') ? s : `<${s}>`;
  });
}

type Commander = typeof import('commander');

function optionOf({ Option }: Commander, o: OptionDef): Option {
  // --wait[=SECONDS] is read before parsing (main.ts extractWait); commander shows it in help only.
  const flags = `${o.short ? `-${o.short}, ` : ''}--${o.long}`;
  return new Option(o.value ? `${flags} ${o.attachedValue ? `[${o.value}]` : `<${o.value}>`}` : flags, o.description);
}

function valuesOf(cmd: Command, defs: readonly OptionDef[]): Record<string, string | boolean | undefined> {
  const opts = cmd.optsWithGlobals() as Record<string, string | boolean | undefined>;
  const out: Record<string, string | boolean | undefined> = {};
  for (const o of [...GLOBAL_OPTIONS, ...defs])
    if (opts[camel(o.long)] !== undefined) out[o.long] = opts[camel(o.long)];
  return out;
}

const EXIT_NOTE =
  '\nexit codes: 0 ok, 1 a rule failed, 2 a gate failed, 64 usage or configuration error, 70 stopped unfinished, 130/143 interrupted\n';

/** The program: the plain build at the root, every engine command and the pipeline's commands. */
export function makeProgram(
  commander: Commander,
  version: string,
  io: Io,
  pipelineCommands: readonly PipelineCommandInfo[],
  onParsed: (i: Invocation) => void,
): Command {
  const program = new commander.Command('rc1-build')
    .description(
      `rc1-build ${version}: a content-addressed, gate-aware build system for ML pipelines\n\nWith no command: build the TARGETs (or output paths) and what they need.`,
    )
    .usage('[options] [TARGET…]  |  rc1-build COMMAND [options] [ARGS…]')
    .version(version, '--version')
    .helpOption('-h, --help', "show help (rc1-build COMMAND --help: that command's)")
    .enablePositionalOptions()
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => {} })
    .configureHelp({ helpWidth: 100, sortSubcommands: false })
    .addHelpText('after', EXIT_NOTE);
  program.argument('[TARGET...]', "targets or output paths (default: the pipeline's defaults)");
  for (const o of [...GLOBAL_OPTIONS, ...BUILD_OPTIONS]) program.addOption(optionOf(commander, o));
  program.action((targets: string[]) =>
    onParsed({ command: 'build', positionals: targets, values: valuesOf(program, BUILD_OPTIONS) }),
  );
  for (const def of COMMANDS) {
    const c = program
      .command(def.name, { hidden: def.hidden === true })
      .description(def.summary)
      .helpOption('-h, --help', "show this command's help");
    for (const a of argsOf(def)) c.argument(a);
    for (const o of [...def.options, ...GLOBAL_OPTIONS]) c.addOption(optionOf(commander, o));
    c.action((...args: unknown[]) => {
      const positionals = args
        .slice(0, argsOf(def).length)
        .flatMap((a) => (a === undefined ? [] : Array.isArray(a) ? (a as string[]) : [a as string]));
      onParsed({ command: def.name, positionals, values: valuesOf(c, def.options) });
    });
  }
  for (const p of pipelineCommands) {
    // Dispatched by main.ts before this program is made; listed here for --help.
    program
      .command(p.name)
      .description(`${p.summary} (this pipeline's command)`)
      .usage(p.usage ?? '[ARGS…]')
      .allowUnknownOption()
      .allowExcessArguments();
  }
  return program;
}

/** A commander error as the engine's usage error (exit 64), its suggestion as the hint. */
function usageErrorOf(e: Error, argv: readonly string[]): UsageError {
  const [first, ...rest] = e.message.replace(/^error: /, '').split('\n');
  const suggestion = /\(Did you mean (.+)\?\)/.exec(rest.join(' '))?.[1];
  const cmd = argv.find((a) => COMMANDS.some((c) => c.name === a));
  return new UsageError({
    headline: first!,
    hint: suggestion
      ? `did you mean ${suggestion}?`
      : `rc1-build ${cmd ? `${cmd} ` : ''}--help lists the ${cmd ? 'arguments and options of ' + cmd : 'commands and options'}`,
  });
}

/** Parses argv; a number is the exit code of --help or --version (already printed). */
export async function parseCommandLine(
  argv: readonly string[],
  version: string,
  io: Io,
  pipelineCommands: readonly PipelineCommandInfo[],
): Promise<Invocation | number> {
  const commander = await import('commander');
  let got: Invocation | null = null;
  const program = makeProgram(commander, version, io, pipelineCommands, (i) => {
    got = i;
  });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (!(e instanceof commander.CommanderError)) throw e;
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
    throw usageErrorOf(e, argv);
  }
  if (!got)
    throw new UsageError({
      headline: `nothing to do for ${argv.join(' ')}`,
      hint: 'rc1-build --help lists the commands',
    });
  return got;
}
