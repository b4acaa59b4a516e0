// Shell completion from the CLI's definition (definition.ts): `rc1-build completion bash|zsh|fish`
// prints a script; the script asks the hidden `rc1-build __complete WORD… CURRENT` for candidates
// (commands, options, option values, and target names read from the workspace's cached resolved
// pipeline, .rc1/compiled/pipeline-resolved.json — no pipeline is loaded or compiled on a Tab).
// Candidates are printed one per line as `word<TAB>description`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../config/usage-error.ts';
import { COMMANDS, GLOBAL_OPTIONS, SHELLS, VALUE_FLAGS, commandDef, type OptionDef } from './definition.ts';
import { findRoot } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
}

interface Cached {
  targets: string[];
  outputs: string[];
  commands: Record<string, { summary: string }>;
}

/** Targets, output paths and commands of the cached resolved pipeline (empty when none is cached). */
function cachedPipeline(root: string): Cached {
  try {
    const doc = JSON.parse(fs.readFileSync(path.join(root, '.rc1', 'compiled', 'pipeline-resolved.json'), 'utf8')) as {
      pipeline: {
        targets: { name: string; description?: string }[];
        producers: [string, string][];
        commands?: Record<string, { summary: string }>;
      };
    };
    return {
      targets: doc.pipeline.targets.map((t) => t.name),
      outputs: doc.pipeline.producers.map(([p]) => p),
      commands: doc.pipeline.commands ?? {},
    };
  } catch {
    return { targets: [], outputs: [], commands: {} };
  }
}

const optionWords = (opts: readonly OptionDef[]): [string, string][] =>
  opts.flatMap((o) => [
    [`--${o.long}`, o.description] as [string, string],
    ...(o.short ? [[`-${o.short}`, o.description] as [string, string]] : []),
  ]);

/** Candidates for the word being completed (`cur`) after `words`. */
export function candidates(words: readonly string[], cur: string, cwd: string = process.cwd()): [string, string][] {
  let dir: string | undefined;
  let cmd: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const a = words[i]!;
    if ((a === '-C' || a === '--directory') && i + 1 < words.length) {
      dir = words[++i];
      continue;
    }
    if (VALUE_FLAGS.has(a)) {
      i++;
      continue;
    }
    if (!a.startsWith('-') && cmd === undefined) cmd = a;
  }
  const pipeline = cachedPipeline(findRoot(dir, cwd));
  if (cmd !== undefined && Object.hasOwn(pipeline.commands, cmd)) return []; // the pipeline's command parses its own arguments
  const def = commandDef(cmd !== undefined && commandDef(cmd) ? cmd : 'build')!;
  const opts = [...def.options, ...GLOBAL_OPTIONS];
  const prev = words[words.length - 1];
  const valued = opts.find((o) => o.value && !o.attachedValue && (prev === `--${o.long}` || prev === `-${o.short}`));
  let out: [string, string][];
  if (valued) out = (valued.choices ?? []).map((c) => [c, valued.description]);
  else if (cur.startsWith('-'))
    out = [
      ...optionWords(opts),
      ['--help', 'show help'],
      ...(cmd === undefined ? [['--version', 'print the version'] as [string, string]] : []),
    ];
  else if (def.name === 'completion') out = SHELLS.map((s) => [s, `the ${s} script`]);
  else if (!def.targets) out = [];
  else {
    out = pipeline.targets.map((t) => [t, 'target']);
    if (cur.includes('/')) out.push(...pipeline.outputs.map((o) => [o, 'output'] as [string, string]));
    if (cmd === undefined) {
      out.unshift(
        ...COMMANDS.filter((c) => !c.hidden && c.name !== 'build').map((c) => [c.name, c.summary] as [string, string]),
        ...Object.entries(pipeline.commands).map(([n, c]) => [n, c.summary] as [string, string]),
      );
    }
  }
  return out.filter(([w]) => w.startsWith(cur));
}

/** `rc1-build __complete WORD… CURRENT`: candidates for CURRENT, one per line. */
export function runComplete(args: readonly string[], io: Io): number {
  const cur = args.length ? args[args.length - 1]! : '';
  for (const [w, d] of candidates(args.slice(0, -1), cur)) io.out(`${w}\t${d.replace(/\s+/g, ' ')}\n`);
  return 0;
}

const visible = COMMANDS.filter((c) => !c.hidden);
const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(): string {
  return `# rc1-build completion for bash. Install: rc1-build completion bash > ~/.local/share/bash-completion/completions/rc1-build
# (or add to ~/.bashrc: source <(rc1-build completion bash))
_rc1_build() {
  local cur=\${COMP_WORDS[COMP_CWORD]} IFS=$'\\n'
  COMPREPLY=($(rc1-build __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null | cut -f1))
  if [[ \${#COMPREPLY[@]} -eq 0 && $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ${sq(visible.map((c) => c.name).join(' '))} -- "$cur"))
  fi
}
complete -o default -F _rc1_build rc1-build
`;
}

function zsh(): string {
  const cmds = visible.map((c) => `    ${sq(`${c.name}:${c.summary.replace(/:/g, '\\:')}`)}`).join('\n');
  return `#compdef rc1-build
# rc1-build completion for zsh. Install: rc1-build completion zsh > "\${fpath[1]}/_rc1-build"
# (or add to ~/.zshrc, after compinit: source <(rc1-build completion zsh))
_rc1_build() {
  local -a engine_commands candidates
  engine_commands=(
${cmds}
  )
  candidates=("\${(@f)$(rc1-build __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null)}")
  candidates=("\${(@)candidates//:/\\\\:}")
  candidates=("\${(@)candidates/$'\\t'/:}")
  if (( \${#candidates} == 0 || \${#candidates[1]} == 0 )); then
    (( CURRENT == 2 )) && _describe -t commands 'rc1-build command' engine_commands || _files
    return
  fi
  _describe -t candidates 'rc1-build' candidates
}
compdef _rc1_build rc1-build
`;
}

function fish(): string {
  const lines = visible.map(
    (c) => `complete -c rc1-build -n __fish_use_subcommand -f -a ${c.name} -d ${sq(c.summary)}`,
  );
  for (const c of visible) {
    for (const o of c.options) {
      lines.push(
        `complete -c rc1-build -n ${sq(`__fish_seen_subcommand_from ${c.name}`)}${o.short ? ` -s ${o.short}` : ''} -l ${o.long}${o.value && !o.attachedValue ? ' -r' : ''} -d ${sq(o.description)}`,
      );
    }
  }
  return `# rc1-build completion for fish. Install: rc1-build completion fish > ~/.config/fish/completions/rc1-build.fish
${lines.join('\n')}
# targets, option values and the pipeline's commands: from the workspace's cached pipeline
complete -c rc1-build -f -a '(rc1-build __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`;
}

/** `rc1-build completion SHELL`. */
export function printCompletion(shell: string, io: Io): number {
  const make = { bash, zsh, fish }[shell as (typeof SHELLS)[number]];
  if (!make)
    throw new UsageError({
      headline: `no completion for shell ${shell}`,
      hint: `rc1-build completion ${SHELLS.join('|')}`,
    });
  io.out(make());
  return 0;
}
