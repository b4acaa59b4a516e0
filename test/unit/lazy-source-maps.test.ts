// The rule worker's stack traces (runner/lazy-source-maps.ts): a rule compiled like the engine
// compiles it (ModuleCompiler: one ESM bundle, a linked source map), with frames in its own files,
// a method, a constructor, an async function, a callback of a built-in, a Node error, and npm
// packages (CommonJS) with an inline and with a file source map. Each case throws in a fresh
// worker twice: once under Node's own source map support (what the worker did before:
// process.setSourceMapsEnabled(true)), once under the lazy maps with Node's support off; the two
// stacks must be the same text, and must name the TypeScript files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as esbuild from 'esbuild';
import { ModuleCompiler } from '../../packages/engine/src/config/compile-module.ts';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';

const LAZY_TS = path.resolve(import.meta.dirname, '../../packages/engine/src/runner/lazy-source-maps.ts');

const HELPER = `export class Thrower {
  constructor(fail = false) {
    if (fail) throw new Error('in a constructor');
  }
  method(): void {
    throw new RangeError('in a method');
  }
}

export function clash(): never {
  throw new Error('renamed');
}

export function deep(n: number): never {
  if (n === 0) throw new Error('deep');
  return deep(n - 1);
}
`;

const ENTRY = `import inlinePkg from 'inlinepkg';
import filePkg from 'filepkg';
import { Thrower, clash as helperClash, deep } from './lib/helper.ts';

export const cases: Record<string, () => unknown> = {
  named: () => deep(2),
  method: () => new Thrower().method(),
  ctor: () => new Thrower(true),
  async: async () => {
    await Promise.resolve();
    await inner();
  },
  callback: () => [1, 2].map((x) => {
    if (x === 2) throw new Error(\`map \${x}\`);
    return x;
  }),
  nodeError: () => Buffer.alloc(-1),
  inlinePkg: () => inlinePkg.boom(),
  filePkg: () => filePkg.boom(),
  renamed: () => clash(),
};

// The bundle renames one of the two functions called clash; the stack names it as written.
function clash(): never {
  return helperClash();
}

async function inner(): Promise<void> {
  await null;
  throw new Error('async');
}
`;

const PKG = (what: string): string => `export function boom(): never {
  const why = '${what}';
  throw new TypeError(\`package error: \${why}\`);
}
`;

async function workspace(): Promise<{ dir: string; bundle: string; lazy: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lazy-maps-'));
  // The module under test as the worker loads it: in an ESM bundle, as in dist/worker.js.
  const lazy = path.join(dir, 'lazy.mjs');
  await esbuild.build({
    entryPoints: [LAZY_TS],
    outfile: lazy,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
  });
  fs.mkdirSync(path.join(dir, 'rules', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"ws","private":true,"type":"module"}\n');
  fs.writeFileSync(path.join(dir, 'rules', 'lib', 'helper.ts'), HELPER);
  fs.writeFileSync(path.join(dir, 'rules', 'entry.ts'), ENTRY);
  for (const [name, sourcemap] of [
    ['inlinepkg', 'inline'],
    ['filepkg', 'linked'],
  ] as const) {
    const pkg = path.join(dir, 'node_modules', name);
    fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), `{"name":"${name}","main":"dist/index.js"}\n`);
    fs.writeFileSync(path.join(pkg, 'src', 'index.ts'), PKG(name));
    await esbuild.build({
      entryPoints: [path.join(pkg, 'src', 'index.ts')],
      outfile: path.join(pkg, 'dist', 'index.js'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      sourcemap,
      logLevel: 'silent',
    });
  }
  const c = new ModuleCompiler(dir, path.join(dir, '.rc1'), new StatCache(dir, path.join(dir, '.rc1', 'stat.json')));
  return { dir, bundle: await c.compiled('rules/entry.ts'), lazy: pathToFileURL(lazy).href };
}

/** The stack of one case, thrown in a fresh worker: 'node' = Node's support on, 'lazy' = the lazy maps. */
function stackOf(
  mode: 'node' | 'lazy',
  { bundle, lazy }: { bundle: string; lazy: string },
  name: string,
  exclude: string[] = [],
): Promise<{ stack: string; nodeMapped: boolean }> {
  const code = `
import { parentPort, workerData } from 'node:worker_threads';
import { findSourceMap } from 'node:module';
const { mode, lazy, bundle, name, exclude } = workerData;
if (mode === 'node') process.setSourceMapsEnabled(true);
else {
  process.setSourceMapsEnabled(false);
  (await import(lazy)).installLazySourceMaps(exclude);
}
const m = await import(bundle);
let stack = 'did not throw';
try { await m.cases[name](); } catch (e) { stack = e.stack; }
parentPort.postMessage({ stack, nodeMapped: findSourceMap(new URL(bundle).pathname) !== undefined });
`;
  const url = pathToFileURL(bundle).href;
  return new Promise((ok, fail) => {
    const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), {
      workerData: { mode, lazy, bundle: url, name, exclude },
    });
    w.once('message', (m) => {
      ok(m);
      void w.terminate();
    });
    w.once('error', fail);
  });
}

test('a rule error stack under the lazy source maps is the text Node gives with its source maps on, naming the .ts files', async () => {
  const ws = await workspace();
  const { dir } = ws;
  try {
    const expect: Record<string, RegExp> = {
      named: /^Error: deep\n    at deep \(.*rules\/lib\/helper\.ts:15:22\)\n    at deep \(.*helper\.ts:16:10\)/,
      method:
        /^RangeError: in a method\n    at Thrower\.method \(.*rules\/lib\/helper\.ts:6:11\)\n    at .*rules\/entry\.ts:7:/,
      ctor: /^Error: in a constructor\n    at new Thrower \(.*rules\/lib\/helper\.ts:3:21\)/,
      async:
        /^Error: async\n    at inner \(.*rules\/entry\.ts:30:9\)\n    at async Object\.async \(.*rules\/entry\.ts:11:5\)/,
      callback: /^Error: map 2\n    at <anonymous> \(.*rules\/entry\.ts:14:24\)\n    at Array\.map \(<anonymous>\)/,
      nodeError:
        /^RangeError \[ERR_OUT_OF_RANGE\]: The value of "size" is out of range\..*\n    at .*\(node:buffer:\d+:\d+\)\n(?:.*\n)*    at Object\.nodeError \(.*rules\/entry\.ts:17:/,
      inlinePkg:
        /^TypeError: package error: inlinepkg\n    at Object\.boom \(.*node_modules\/inlinepkg\/src\/index\.ts:3:9\)\n    at .*rules\/entry\.ts:18:/,
      renamed:
        /^Error: renamed\n    at clash \(.*rules\/lib\/helper\.ts:11:9\)\n    at clash \(.*rules\/entry\.ts:25:10\)/,
      filePkg:
        /^TypeError: package error: filepkg\n    at Object\.boom \(.*node_modules\/filepkg\/src\/index\.ts:3:9\)/,
    };
    for (const [name, re] of Object.entries(expect)) {
      const node = await stackOf('node', ws, name);
      const lazy = await stackOf('lazy', ws, name);
      assert.equal(node.nodeMapped, true, 'Node mapped the bundle in the reference run');
      assert.equal(lazy.nodeMapped, false, "Node's support was off in the lazy run");
      assert.equal(lazy.stack, node.stack, name);
      assert.match(lazy.stack, re, name);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the lazy source maps leave the frames of an excluded module (the worker's own) as V8 prints them", async () => {
  const ws = await workspace();
  const { dir, bundle } = ws;
  try {
    const { stack } = await stackOf('lazy', ws, 'method', [pathToFileURL(bundle).href]);
    assert.match(stack, /at Thrower\.method \(file:.*\.mjs:\d+:\d+\)/);
    assert.doesNotMatch(stack, /helper\.ts/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
