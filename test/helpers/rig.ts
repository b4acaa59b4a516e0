// TestRig: a throwaway workspace in a temp dir, driven through the real CLI (packages/engine/bin/rc1-build.js,
// compiled dist/; with RC1_TEST_CLIENT=native, the launcher bin/rc1-build and the native client).
// Rules in these workspaces append their target name to a counter file, so a test can assert
// exactly which rules ran.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');

/**
 * The command line that runs an engine's client: `node bin/rc1-build.js`, or with
 * RC1_TEST_CLIENT=native the launcher beside it (bin/rc1-build), which runs the native client
 * (dist/rc1-client). `cli` is an engine's bin/rc1-build.js (another copy of the engine's).
 */
export function clientCommand(cli: string = CLI): [string, ...string[]] {
  return process.env.RC1_TEST_CLIENT === 'native'
    ? [path.join(path.dirname(cli), 'rc1-build')]
    : [process.execPath, cli];
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  events: Record<string, unknown>[];
}

export class TestRig {
  readonly dir: string;
  readonly counter: string;

  constructor(files: Record<string, string> = {}) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-rig-'));
    this.counter = path.join(this.dir, '..', `${path.basename(this.dir)}.runs`);
    for (const [p, c] of Object.entries(files)) this.write(p, c);
  }

  write(p: string, content: string): void {
    const abs = path.join(this.dir, p);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }

  /** Copies RC1's libraries (lib/) in: the repository's rules import them by relative path. */
  withRc1Lib(): this {
    fs.cpSync(path.join(REPO, 'lib'), path.join(this.dir, 'lib'), { recursive: true });
    return this;
  }

  read(p: string): string {
    return fs.readFileSync(path.join(this.dir, p), 'utf8');
  }

  exists(p: string): boolean {
    return fs.existsSync(path.join(this.dir, p));
  }

  touch(p: string): void {
    const t = new Date();
    fs.utimesSync(path.join(this.dir, p), t, t);
  }

  mtime(p: string): number {
    return fs.statSync(path.join(this.dir, p)).mtimeMs;
  }

  /** Names of the rules that ran since the last call (from the counter file). */
  runs(): string[] {
    let text = '';
    try {
      text = fs.readFileSync(this.counter, 'utf8');
    } catch {
      return [];
    }
    fs.rmSync(this.counter, { force: true });
    return text.split('\n').filter(Boolean).sort();
  }

  run(args: string[], env: Record<string, string> = {}): RunResult {
    const [cmd, ...pre] = clientCommand();
    const r = spawnSync(cmd, [...pre, ...args], {
      cwd: this.dir,
      encoding: 'utf8',
      env: { ...process.env, RC1_TEST_COUNTER: this.counter, ...env },
      timeout: 120_000,
    });
    const stdout = r.stdout ?? '';
    const events = args.includes('--json')
      ? stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
    return { code: r.status ?? -1, stdout, stderr: r.stderr ?? '', events };
  }

  spawn(args: string[], env: Record<string, string> = {}): import('node:child_process').ChildProcess {
    const [cmd, ...pre] = clientCommand();
    return spawn(cmd, [...pre, ...args], {
      cwd: this.dir,
      env: { ...process.env, RC1_TEST_COUNTER: this.counter, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.rmSync(this.counter, { force: true });
  }
}

/** A rule that concatenates its `src` inputs plus a suffix param into out/<target>.txt, and counts its runs. */
export const COPY_RULE = `import { defineRule } from 'rc1-build';
import { z } from 'zod';
import * as fs from 'node:fs';
export default defineRule({
  name: 'copy', version: 1,
  params: z.object({ copy: z.object({ suffix: z.string() }).strict() }),
  run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const text = ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join('');
    fs.writeFileSync(ctx.output('out/' + ctx.target + '.txt'), text + ctx.params.copy.suffix);
    return { summary: text.length + ' chars' };
  },
});
`;

/** Like COPY_RULE but collapses whitespace, so whitespace-only input edits give identical output. */
export const SQUEEZE_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({
  name: 'squeeze', version: 1,
  run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const text = ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join('').replace(/\\s+/g, ' ').trim();
    fs.writeFileSync(ctx.output('out/' + ctx.target + '.txt'), text + '\\n');
  },
});
`;

/** A gate: passes when the input's length is at least gate.min. */
export const GATE_RULE = `import { defineRule, check } from 'rc1-build';
import { z } from 'zod';
import * as fs from 'node:fs';
export default defineRule({
  name: 'length_gate', version: 1,
  params: z.object({ gate: z.object({ min: z.number() }).strict() }),
  run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const n = fs.readFileSync(ctx.inputs('src')[0], 'utf8').length;
    return { checks: [check('length', n, '>=', ctx.params.gate.min, 'make the text longer or lower gate.min')], report: { length: n } };
  },
});
`;

/**
 *   src/a.txt --> a --> b --> g (gate) --> after_gate
 *   src/c.txt --> c (independent branch)
 *   src/w.txt --> sq (squeeze) --> after_sq
 */
export const PIPELINE = `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['after_gate', 'c', 'after_sq'], freeFormConfig: ['unrelated'],
  targets: [
    defineTarget({ name: 'a', rule: 'rules/copy.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/a.txt'], params: ['copy.suffix'] }),
    defineTarget({ name: 'b', rule: 'rules/copy.ts', inputs: { src: target('a') }, outputs: ['out/b.txt'], params: ['copy.suffix'] }),
    defineGate({ name: 'g', rule: 'rules/gate.ts', inputs: { src: target('b') }, outputs: ['reports/g.json'], report: 'reports/g.json', params: ['gate.min'] }),
    defineTarget({ name: 'after_gate', rule: 'rules/copy.ts', inputs: { src: ['out/b.txt', target('g')] }, outputs: ['out/after_gate.txt'], params: ['copy.suffix'] }),
    defineTarget({ name: 'c', rule: 'rules/copy.ts', inputs: { src: 'src/c.txt' }, outputs: ['out/c.txt'], params: ['copy.suffix'] }),
    defineTarget({ name: 'sq', rule: 'rules/squeeze.ts', inputs: { src: 'src/w.txt' }, outputs: ['out/sq.txt'] }),
    defineTarget({ name: 'after_sq', rule: 'rules/copy.ts', inputs: { src: target('sq') }, outputs: ['out/after_sq.txt'], params: ['copy.suffix'] }),
  ],
});
`;

export function standardRig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/copy.ts': COPY_RULE,
    'rules/squeeze.ts': SQUEEZE_RULE,
    'rules/gate.ts': GATE_RULE,
    'configs/default.yaml': 'copy:\n  suffix: "!"\ngate:\n  min: 3\nunrelated: 1\n',
    'src/a.txt': 'hello\n',
    'src/c.txt': 'cee\n',
    'src/w.txt': 'some   words\n',
  });
}

export function hasSha256sum(): boolean {
  return spawnSync('sha256sum', ['--version']).status === 0;
}

/** Collects the JSON events a spawned `--json` command prints, as they arrive. */
export function collectEvents<T = Record<string, unknown>>(child: import('node:child_process').ChildProcess): T[] {
  const events: T[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('{')) events.push(JSON.parse(line) as T);
    }
  });
  return events;
}

/**
 * A rule with no params that copies its `src` inputs into out/<target>.txt, then `tag` and the
 * target's name on a line; it counts its runs (RC1_TEST_COUNTER).
 */
export const chainCopyRule = (tag = ''): string => `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'copy', version: 1, run(ctx) {
  fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
  const text = ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join('');
  fs.writeFileSync(ctx.output(\`out/\${ctx.target}.txt\`), text + '${tag}' + ctx.target + '\\n');
}});
`;

/** src/a.txt → a → out/a.txt → b → out/b.txt; `withC` adds src/c.txt → c → out/c.txt. Rule: rules/copy.ts (chainCopyRule). */
export const chainPipeline = (
  withC: boolean,
): string => `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['b'${withC ? ", 'c'" : ''}],
  targets: [
    defineTarget({ name: 'a', rule: 'rules/copy.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/a.txt'] }),
    defineTarget({ name: 'b', rule: 'rules/copy.ts', inputs: { src: target('a') }, outputs: ['out/b.txt'] }),${
      withC
        ? "\n    defineTarget({ name: 'c', rule: 'rules/copy.ts', inputs: { src: 'src/c.txt' }, outputs: ['out/c.txt'] }),"
        : ''
    }
  ],
});
`;
