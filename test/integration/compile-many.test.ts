// ModuleCompiler.compileMany bundles several modules in one esbuild build, the code they share in
// shared chunks. Each module's code closure (what enters its targets' fingerprints) and its
// compiled file's name must be what a compile of that module alone gives, and its compiled code
// (the module and its chunks) must come from the same source files; a module that does not compile
// is reported against itself with the same message, and the others still compile. Real files in temp dirs: the
// repository's RC1 rules, and small workspaces with the import shapes the closure walk must follow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CompileError,
  compiledModuleFiles,
  ModuleCompiler,
  stopCompilerService,
} from '../../packages/engine/src/config/compile-module.ts';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';
import { openWorkspace } from '../../packages/engine/src/workspace/workspace.ts';
import { REPO, TestRig } from '../helpers/rig.ts';

const temps: string[] = [];
function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}
test.after(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

function compilerFor(root: string): { compiler: ModuleCompiler; state: string } {
  const state = tempDir('rc1-compile-many-state-');
  return { compiler: new ModuleCompiler(root, state, new StatCache(root, path.join(state, 'statcache.json'))), state };
}

/** Each module compiled alone (as closure() does it), in a state dir of its own. */
async function alone(
  root: string,
  entries: readonly string[],
): Promise<Map<string, { closure: Record<string, string>; file: string } | Error>> {
  const { compiler } = compilerFor(root);
  const out = new Map<string, { closure: Record<string, string>; file: string } | Error>();
  for (const e of entries) {
    try {
      out.set(e, { closure: await compiler.closure(e), file: await compiler.compiled(e) });
    } catch (err) {
      out.set(e, err as Error);
    }
  }
  return out;
}

/**
 * The source files a compiled module's code comes from, absolute: the `sources` of its source map
 * and of its shared chunks' maps (each beside its file).
 */
function compiledSources(file: string): Set<string> {
  const all = new Set<string>();
  for (const f of compiledModuleFiles(file)) {
    assert.ok(fs.existsSync(`${f}.map`), `${path.basename(f)} has its source map`);
    const map = JSON.parse(fs.readFileSync(`${f}.map`, 'utf8')) as { sources: string[]; sourcesContent?: unknown };
    assert.equal(map.sourcesContent, undefined, 'the maps do not copy the sources');
    for (const s of map.sources) all.add(path.resolve(path.dirname(f), s));
  }
  return all;
}

/**
 * A compiled module's file is named by its content: the entry's name, then the sha256 of the entry,
 * its text (source map comment left out) and its source map.
 */
function assertNamedByCode(entry: string, file: string): void {
  const text = fs.readFileSync(file, 'utf8').replace(/\/\/# sourceMappingURL=\S+\s*$/, '');
  const map = fs.readFileSync(`${file}.map`, 'utf8');
  const sha = createHash('sha256').update(`${entry}\0${text}\0${map}`).digest('hex').slice(0, 16);
  assert.equal(path.basename(file), `${entry.replace(/[^\w.-]+/g, '_')}-${sha}.mjs`, `${entry}: named by its code`);
}

/**
 * The closure (same keys in the same order) a compile alone gives; both compiled files named by
 * their code; the code (module and chunks) comes from files of the closure only. It may come from
 * more of them than a compile alone's: a shared chunk holds every file the module reaches that
 * other modules use, also one whose code a compile alone tree-shakes away (as Node running the
 * sources loads it).
 */
function assertSameCompile(
  entry: string,
  single: { closure: Record<string, string>; file: string },
  closure: Record<string, string>,
  file: string,
): void {
  assert.equal(JSON.stringify(closure), JSON.stringify(single.closure), `${entry}: closure`);
  assertNamedByCode(entry, file);
  assertNamedByCode(entry, single.file);
  const split = compiledSources(file);
  assert.ok(split.size > 0 && compiledSources(single.file).size > 0, `${entry}: compiled code with source maps`);
  const keys = Object.keys(closure);
  for (const s of split)
    assert.ok(
      keys.some((k) => (path.isAbsolute(k) ? s === k : s.endsWith(`/${k}`))),
      `${entry}: the compiled code's source ${s} is in the closure`,
    );
}

test('every rule of the RC1 pipeline: compileMany gives the closure a compile alone gives, code from the closure only, and the same rule when imported', async () => {
  const rules = fs
    .readdirSync(path.join(REPO, 'rules'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `rules/${f}`)
    .sort();
  // Every rule rc1.build.ts names is among them.
  const named = [...fs.readFileSync(path.join(REPO, 'rc1.build.ts'), 'utf8').matchAll(/'(rules\/[\w.-]+\.ts)'/g)].map(
    (m) => m[1]!,
  );
  assert.ok(named.length > 0);
  for (const r of named) assert.ok(rules.includes(r), `${r} is a file of rules/`);
  const singles = await alone(REPO, rules);
  const { compiler, state } = compilerFor(REPO);
  const many = await compiler.compileMany(rules);
  assert.equal(compiler.compiles, rules.length);
  for (const r of rules) {
    const single = singles.get(r)!;
    assert.ok(!(single instanceof Error), `${r} compiles`);
    const got = many.get(r);
    assert.ok(got && !(got instanceof Error), `${r}: compileMany gave ${got}`);
    assert.equal(compiler.knownClosure(r), got, `${r}: the closure is recorded`);
    assertSameCompile(r, single, got, await compiler.compiled(r));
  }
  assert.equal(compiler.compiles, rules.length, 'compiled() after compileMany compiles nothing again');
  // A library file of several rules is in each of their closures, once.
  assert.ok(rules.filter((r) => Object.keys(many.get(r) as object).some((f) => f.startsWith('lib/'))).length > 1);
  // The records written: a compile alone's closure and file name, and the shared chunks.
  compiler.save();
  const records = JSON.parse(fs.readFileSync(path.join(state, 'compiled', 'closures-3.json'), 'utf8'));
  let shared = 0;
  for (const r of rules) {
    const single = singles.get(r) as { closure: Record<string, string>; file: string };
    const { chunks, ...rest } = records[r] as { chunks?: string[] };
    const file = await compiler.compiled(r);
    assert.deepEqual(rest, { files: single.closure, out: path.basename(file) });
    assert.deepEqual(
      [...(chunks ?? [])].sort(),
      compiledModuleFiles(file)
        .slice(1)
        .map((f) => path.basename(f))
        .sort(),
    );
    if (chunks?.length) shared++;
  }
  assert.ok(shared > 1, 'rules that share library code import it from shared chunks');
  // Each module runs as its alone-compiled twin: the same rule, with the same params schema.
  for (const r of rules) {
    const a = (await import(pathToFileURL(await compiler.compiled(r)).href)) as { default?: Record<string, unknown> };
    const single = singles.get(r) as { file: string };
    const b = (await import(pathToFileURL(single.file).href)) as { default?: Record<string, unknown> };
    assert.equal(a.default?.name, b.default?.name, `${r}: name`);
    assert.equal(a.default?.version, b.default?.version, `${r}: version`);
    assert.deepEqual(Object.keys(a.default ?? {}).sort(), Object.keys(b.default ?? {}).sort(), `${r}: fields`);
    assert.deepEqual(
      Object.keys((a.default?.params as { shape?: object } | undefined)?.shape ?? {}),
      Object.keys((b.default?.params as { shape?: object } | undefined)?.shape ?? {}),
      `${r}: params`,
    );
  }
});

/** Writes a file under `root`, making its folders. */
const writer =
  (root: string) =>
  (p: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), text);
  };

/** A pipeline of two targets, one and two, each with its rule (rules/one.ts, rules/two.ts) and one output. */
const ONE_AND_TWO = `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  targets: [
    defineTarget({ name: 'one', rule: 'rules/one.ts', outputs: ['out/one.txt'] }),
    defineTarget({ name: 'two', rule: 'rules/two.ts', outputs: ['out/two.txt'] }),
  ],
});
`;

/** A workspace whose modules import one another in the ways the closure walk must follow. */
function shapes(): string {
  const root = tempDir('rc1-compile-many-');
  const files: Record<string, string> = {
    'lib/shared.ts': 'export function red() { return "red"; }\nexport function blue() { return "blue"; }\n',
    // Types only: the file is read (it is in the closure) but gives no byte to any output.
    'lib/types.ts': 'export type Colour = "red" | "blue";\n',
    'lib/dyn.ts': 'export const later = 42;\n',
    'lib/legacy.cjs': 'module.exports = { legacy: true };\n',
    'lib/glob/one.ts': 'export default 1;\n',
    'lib/glob/two.ts': 'export default 2;\n',
    'node_modules/pkg-a/package.json': '{ "name": "pkg-a", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/pkg-a/index.js': 'module.exports = { a: 1 };\n',
    'node_modules/pkg-b/package.json': '{ "name": "pkg-b", "version": "2.0.0", "main": "index.js" }\n',
    'node_modules/pkg-b/index.js': 'module.exports = { b: 2 };\n',
    // a: a local library, a types-only file, an npm package, a built-in.
    'rules/a.ts':
      'import * as fs from "node:fs";\nimport pkgA from "pkg-a";\nimport "../lib/types.ts";\nimport { red } from "../lib/shared.ts";\nexport const a = [red(), pkgA, fs.existsSync];\n',
    // b: another entry point (a), require() and import() of local files, another npm package.
    'rules/b.ts':
      'import { a } from "./a.ts";\nimport pkgB from "pkg-b";\nconst shared = require("../lib/shared.ts");\nexport const b = [a, pkgB, shared.blue(), import("../lib/dyn.ts")];\n',
    // c: a CommonJS file and a glob import; no npm package.
    'rules/c.ts':
      'import legacy from "../lib/legacy.cjs";\nexport const c = (n: string) => [legacy, import(`../lib/glob/${n}.ts`)];\n',
    // d: the engine's API and its zod (resolved from the engine: not installed here).
    'rules/d.ts':
      'import { defineRule } from "rc1-build";\nimport { z } from "zod";\nexport default defineRule({ name: "d", version: 1, params: z.object({ n: z.number() }), run() {} });\n',
    'rules/broken.ts': 'import { red } from "../lib/shared.ts";\nexport default {{{ red;\n',
    'rules/missing.ts': 'import { nothing } from "../lib/nowhere.ts";\nexport default nothing;\n',
    'lib/bad.ts': 'export const bad = ;\n',
    'rules/uses-bad-1.ts': 'import { bad } from "../lib/bad.ts";\nexport default bad;\n',
    'rules/uses-bad-2.ts': 'import { bad } from "../lib/bad.ts";\nexport default [bad];\n',
  };
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), text);
  }
  return root;
}

/** compileMany of the entries in one compiler, each checked against its compile alone. */
async function compiledAlike(root: string, entries: string[]) {
  const singles = await alone(root, entries);
  const { compiler } = compilerFor(root);
  const many = await compiler.compileMany(entries);
  for (const e of entries) {
    const single = singles.get(e)!;
    assert.ok(!(single instanceof Error), `${e} compiles alone: ${single}`);
    const got = many.get(e);
    assert.ok(got && !(got instanceof Error), `${e}: ${got}`);
    assertSameCompile(e, single, got, await compiler.compiled(e));
  }
  return { many, compiler };
}

test('compileMany follows every import shape as a compile alone does: types-only files, require, import(), globs, CommonJS, an entry importing another, npm packages per module', async () => {
  const root = shapes();
  const entries = ['rules/a.ts', 'rules/b.ts', 'rules/c.ts', 'rules/d.ts'];
  const { many } = await compiledAlike(root, entries);
  const keys = (e: string): string[] => Object.keys(many.get(e) as Record<string, string>);
  // The types-only file gives no byte but is read: it is in a's closure.
  assert.ok(keys('rules/a.ts').includes('lib/types.ts'));
  // Each module's npm packages, and only those: b reaches pkg-a through a.
  assert.ok(keys('rules/a.ts').includes('node_modules/pkg-a/package.json'));
  assert.ok(!keys('rules/a.ts').includes('node_modules/pkg-b/package.json'));
  assert.ok(keys('rules/b.ts').includes('node_modules/pkg-a/package.json'));
  assert.ok(keys('rules/b.ts').includes('node_modules/pkg-b/package.json'));
  assert.ok(keys('rules/b.ts').includes('lib/dyn.ts'));
  assert.ok(!keys('rules/c.ts').some((f) => f.includes('node_modules')));
  assert.ok(keys('rules/c.ts').includes('lib/glob/two.ts'));
  assert.ok(!keys('rules/c.ts').includes('lib/shared.ts'));
  assert.ok(keys('rules/d.ts').some((f) => f.endsWith('/zod/package.json')));
  assert.ok(!keys('rules/d.ts').some((f) => f.includes('pkg-a')));
});

test('one bare name imported from several folders in one compileMany: each folder gets the package its node_modules holds, every importer lists that package.json, built-ins stay external', async () => {
  const root = tempDir('rc1-compile-many-');
  const files: Record<string, string> = {
    'node_modules/pkg/package.json': '{ "name": "pkg", "version": "2.0.0", "main": "index.js" }\n',
    'node_modules/pkg/index.js': 'module.exports = { v: 2 };\n',
    'rules/old/node_modules/pkg/package.json': '{ "name": "pkg", "version": "1.0.0", "main": "index.js" }\n',
    'rules/old/node_modules/pkg/index.js': 'module.exports = { v: 1 };\n',
    // Two importers in each folder: the second finds the first one's resolve.
    'rules/old/a.ts':
      'import pkg from "pkg";\nimport * as fs from "node:fs";\nexport default [pkg.v, typeof fs.existsSync];\n',
    'rules/old/b.ts':
      'import pkg from "pkg";\nimport * as fs from "fs";\nexport default [pkg.v, typeof fs.existsSync];\n',
    'rules/new/c.ts':
      'import pkg from "pkg";\nimport { readFileSync } from "node:fs";\nexport default [pkg.v, typeof readFileSync];\n',
    // A package whose name starts as `node:` does (`nod`): a bare name all the same.
    'node_modules/nod/package.json': '{ "name": "nod", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/nod/index.js': 'module.exports = { nod: true };\n',
    'rules/new/d.ts': 'import pkg from "pkg";\nimport nod from "nod";\nexport default [pkg.v, nod.nod];\n',
  };
  const write = writer(root);
  for (const [p, text] of Object.entries(files)) write(p, text);
  const entries = ['rules/old/a.ts', 'rules/old/b.ts', 'rules/new/c.ts', 'rules/new/d.ts'];
  const { many, compiler } = await compiledAlike(root, entries);
  const want: Record<string, [number, string]> = {
    'rules/old/a.ts': [1, 'rules/old/node_modules/pkg/package.json'],
    'rules/old/b.ts': [1, 'rules/old/node_modules/pkg/package.json'],
    'rules/new/c.ts': [2, 'node_modules/pkg/package.json'],
    'rules/new/d.ts': [2, 'node_modules/pkg/package.json'],
  };
  for (const e of entries) {
    const got = many.get(e) as Record<string, string>;
    const [v, pj] = want[e]!;
    const keys = Object.keys(got);
    assert.ok(keys.includes(pj), `${e} lists ${pj}: ${keys.join(', ')}`);
    assert.equal(keys.filter((k) => k.endsWith('pkg/package.json')).length, 1, `${e}: one pkg`);
    if (e === 'rules/new/d.ts') assert.ok(keys.includes('node_modules/nod/package.json'), `${e} lists nod`);
    const mod = (await import(pathToFileURL(await compiler.compiled(e)).href)) as { default: unknown[] };
    assert.equal(mod.default[0], v, `${e} runs pkg ${v}`);
    if (e === 'rules/new/d.ts') assert.equal(mod.default[1], true, `${e} runs nod`);
    else assert.equal(mod.default[1], 'function', `${e}: the built-in is Node's`);
  }
});

test('a module that does not compile is reported against itself with the message of a compile alone, and the others still compile (errors in a rule, in an import, in a shared library)', async () => {
  const root = shapes();
  const entries = [
    'rules/a.ts',
    'rules/broken.ts',
    'rules/c.ts',
    'rules/missing.ts',
    'rules/uses-bad-1.ts',
    'rules/uses-bad-2.ts',
    'rules/d.ts',
  ];
  const singles = await alone(root, entries);
  const { compiler } = compilerFor(root);
  const many = await compiler.compileMany(entries);
  for (const e of entries) {
    const single = singles.get(e)!;
    const got = many.get(e)!;
    if (['rules/broken.ts', 'rules/missing.ts', 'rules/uses-bad-1.ts', 'rules/uses-bad-2.ts'].includes(e)) {
      assert.ok(single instanceof CompileError, `${e} does not compile alone`);
      assert.ok(got instanceof CompileError, `${e}: compileMany gives a CompileError`);
      assert.equal(got.entry, e);
      assert.equal(got.message, single.message);
      // The error is still raised for the module whenever it is asked for.
      await assert.rejects(
        compiler.compiled(e),
        (err: unknown) => err instanceof CompileError && err.message === single.message,
      );
    } else {
      assert.ok(!(single instanceof Error) && !(got instanceof Error), `${e} compiles`);
      assertSameCompile(e, single, got, await compiler.compiled(e));
    }
  }
  assert.match((many.get('rules/broken.ts') as Error).message, /^rules\/broken\.ts:2:\d+: /);
  assert.match((many.get('rules/uses-bad-1.ts') as Error).message, /^lib\/bad\.ts:1:\d+: /);
});

test('a pipeline with a rule that does not compile: its target fails with the compiler message, the targets of the other rules (params read from their schemas) are built', () => {
  const rule = (name: string): string => `import { defineRule } from 'rc1-build';
import { z } from 'zod';
import * as fs from 'node:fs';
export default defineRule({
  name: '${name}', version: 1,
  params: z.object({ ${name}: z.object({ text: z.string() }) }),
  run(ctx) { fs.writeFileSync(ctx.output('out/${name}.txt'), ctx.params.${name}.text); },
});
`;
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  targets: [
    defineTarget({ name: 'one', rule: 'rules/one.ts', outputs: ['out/one.txt'] }),
    defineTarget({ name: 'bad', rule: 'rules/bad.ts', outputs: ['out/bad.txt'] }),
    defineTarget({ name: 'two', rule: 'rules/two.ts', outputs: ['out/two.txt'] }),
  ],
});
`,
    'rules/one.ts': rule('one'),
    'rules/two.ts': rule('two'),
    'rules/bad.ts': 'export default {{{',
    'configs/default.yaml': 'one:\n  text: "first"\ntwo:\n  text: "second"\n',
  });
  try {
    const r = rig.run(['-k'], { RC1_NO_SERVER: '1' });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /FAILED   bad: rules\/bad\.ts does not compile:\nrules\/bad\.ts:1:\d+: /);
    assert.equal(rig.read('out/one.txt'), 'first');
    assert.equal(rig.read('out/two.txt'), 'second');
    // Their params were read from their schemas (no key left unread, none missing).
    assert.doesNotMatch(r.stderr, /unread|missing/);
  } finally {
    rig.cleanup();
  }
});

test("rules compiled together share chunks: a throw in the shared library is reported at its TypeScript line, a rule edited alone keeps the others' chunks, a deleted chunk is rebuilt, no chunk outlives every module that imports it, and comment lines above a throw move its reported line", () => {
  const rule = (name: string): string => `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import { label } from '../lib/shared.ts';
export default defineRule({
  name: '${name}', version: 1,
  run(ctx) { fs.writeFileSync(ctx.output('out/${name}.txt'), label('${name}')); },
});
`;
  const shared = (body: string): string => `export function label(name: string): string {\n  ${body}\n}\n`;
  const rig = new TestRig({
    'rc1.build.ts': ONE_AND_TWO,
    'rules/one.ts': rule('one'),
    'rules/two.ts': rule('two'),
    'lib/shared.ts': shared("return 'made by ' + name;"),
  });
  const compiled = path.join(rig.dir, '.rc1', 'compiled');
  const records = (): Record<string, { out: string; chunks?: string[] }> =>
    JSON.parse(fs.readFileSync(path.join(compiled, 'closures-3.json'), 'utf8'));
  const chunkFiles = (): string[] =>
    fs
      .readdirSync(compiled)
      .filter((f) => /^chunk-.*\.mjs$/.test(f))
      .sort();
  /**
   * Every recorded module's chunks are the ones its file imports (all on disk: compiledModuleFiles
   * throws on a missing one), and, once gc has swept what is older than its grace period (every
   * compiled file is made an hour old first), every chunk on disk is imported by a recorded module.
   */
  const chunksAccounted = (): void => {
    const old = new Date(Date.now() - 3_600_000);
    for (const f of fs.readdirSync(compiled)) fs.utimesSync(path.join(compiled, f), old, old);
    const gc = rig.run(['gc'], { RC1_NO_SERVER: '1' });
    assert.equal(gc.code, 0, gc.stdout + gc.stderr);
    const used = new Set<string>();
    for (const [entry, r] of Object.entries(records())) {
      const imported = compiledModuleFiles(path.join(compiled, r.out))
        .slice(1)
        .map((f) => path.basename(f))
        .sort();
      assert.deepEqual(
        [...(r.chunks ?? [])].sort(),
        imported,
        `${entry}: its record names the chunks its file imports`,
      );
      for (const c of imported) used.add(c);
    }
    assert.deepEqual(chunkFiles(), [...used].sort());
  };
  try {
    let r = rig.run([], { RC1_NO_SERVER: '1' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/one.txt'), 'made by one');
    assert.ok(records()['rules/one.ts']?.chunks?.length, 'the two rules were compiled together, into shared chunks');
    assert.deepEqual(records()['rules/one.ts']?.chunks, records()['rules/two.ts']?.chunks);
    chunksAccounted();

    // A throw in the library: the stack names lib/shared.ts at the line of the throw (line 2).
    rig.write('lib/shared.ts', shared("throw new Error('shared kaboom ' + name);"));
    r = rig.run(['one'], { RC1_NO_SERVER: '1' });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const m = /error report (reports\/ERROR_\d{8}T\d{9}Z(?:-\d+)?\.json)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const rep = JSON.parse(rig.read(m[1]!)) as { error: string };
    assert.match(rep.error, /Error: shared kaboom one\n\s+at label \(.*lib\/shared\.ts:2:\d+\)/);
    assert.ok(compiledModuleFiles(path.join(compiled, records()['rules/one.ts']!.out)).length > 1);

    // Back to a library that works; then one rule edited alone: compiled alone, self-contained.
    rig.write('lib/shared.ts', shared("return 'made by ' + name;"));
    assert.equal(rig.run([], { RC1_NO_SERVER: '1' }).code, 0);
    chunksAccounted();
    rig.write('rules/one.ts', rule('one').replace("label('one')", "label('one') + '!'"));
    r = rig.run([], { RC1_NO_SERVER: '1' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/one.txt'), 'made by one!');
    assert.equal(records()['rules/one.ts']?.chunks, undefined);
    assert.ok(records()['rules/two.ts']?.chunks?.length, "two's chunks stay");
    chunksAccounted();

    // A chunk deleted under the compiled module: the module is compiled again (alone: the only
    // module of this build), and runs.
    for (const c of chunkFiles()) fs.rmSync(path.join(compiled, c));
    r = rig.run(['two', '--force'], { RC1_NO_SERVER: '1' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/two.txt'), 'made by two');
    chunksAccounted();

    // A throw in the rule's own code, then comment lines above it (the same code, lines moved):
    // the stack follows the line, so the map is the new one.
    const throwing = rule('two').replace('run(ctx) {', "run(ctx) { throw new Error('own kaboom');");
    const throwLine = throwing.split('\n').findIndex((l) => l.includes('own kaboom')) + 1;
    const stackLine = (): number => {
      const res = rig.run(['two', '--force'], { RC1_NO_SERVER: '1' });
      assert.equal(res.code, 1, res.stdout + res.stderr);
      const report = /error report (reports\/ERROR_\d{8}T\d{9}Z(?:-\d+)?\.json)/.exec(res.stdout);
      assert.ok(report, res.stdout);
      const err = (JSON.parse(rig.read(report[1]!)) as { error: string }).error;
      const at = /rules\/two\.ts:(\d+):\d+/.exec(err);
      assert.ok(at, err);
      return Number(at[1]);
    };
    rig.write('rules/two.ts', throwing);
    assert.equal(stackLine(), throwLine);
    rig.write('rules/two.ts', `// one\n// two\n\n${throwing}`);
    assert.equal(stackLine(), throwLine + 3);
  } finally {
    rig.cleanup();
  }
});

test('gc removes the compiled files no record names (a dry run of an edit, a deleted rule file, a crashed write) once they are older than the grace period; recorded modules stay and the build is still up to date', () => {
  const rule = (name: string, text: string): string => `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({
  name: '${name}', version: 1,
  run(ctx) { fs.writeFileSync(ctx.output('out/${name}.txt'), '${text}'); },
});
`;
  // one reads data/in.txt: an edit of it changes one's key without compiling anything.
  const pipeline = ONE_AND_TWO.replace(
    "name: 'one', rule: 'rules/one.ts',",
    "name: 'one', rule: 'rules/one.ts', inputs: { src: 'data/in.txt' },",
  );
  assert.notEqual(pipeline, ONE_AND_TWO);
  const rig = new TestRig({
    'rc1.build.ts': pipeline,
    'data/in.txt': 'in\n',
    'rules/one.ts': rule('one', 'one'),
    'rules/two.ts': rule('two', 'two'),
  });
  const env = { RC1_NO_SERVER: '1' };
  const compiled = path.join(rig.dir, '.rc1', 'compiled');
  const records = (): Record<string, { out: string; chunks?: string[] }> =>
    JSON.parse(fs.readFileSync(path.join(compiled, 'closures-3.json'), 'utf8'));
  const modules = (): string[] =>
    fs
      .readdirSync(compiled)
      .filter((f) => /\.mjs(\.map)?$/.test(f) || /\.tmp-/.test(f))
      .sort();
  const age = (files: string[], ms: number): void => {
    const t = new Date(Date.now() - ms);
    for (const f of files) fs.utimesSync(path.join(compiled, f), t, t);
  };
  try {
    assert.equal(rig.run([], env).code, 0);
    const kept = records()['rules/two.ts']!.out;
    // A dry run of an edit compiles the edited rule without saving the index: its module is named by no record.
    rig.write('rules/one.ts', rule('one', 'one, edited'));
    const dry = rig.run(['-n'], env);
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    rig.write('rules/one.ts', rule('one', 'one'));
    // Temp files of writes that crashed (a module's, the index's).
    fs.writeFileSync(path.join(compiled, `${kept}.tmp-99999-abc-0`), 'partial');
    fs.writeFileSync(path.join(compiled, 'closures-3.json.tmp-99999-abc-1'), '{');
    // A rule removed from the pipeline and its file deleted (the file's absence drops its record).
    rig.write('rc1.build.ts', pipeline.replace(/\n.*name: 'two'.*/, ''));
    fs.rmSync(path.join(rig.dir, 'rules/two.ts'));
    const namedBy = (recs: { out: string; chunks?: string[] }[]): string[] =>
      recs.flatMap((r) => [r.out, ...(r.chunks ?? [])]).flatMap((f) => [f, `${f}.map`]);
    const named = new Set(namedBy(Object.values(records())));
    const unnamed = modules().filter((f) => !named.has(f));
    assert.equal(unnamed.length, 4, `the dry run's module and map, and the two temp files: ${unnamed.join(', ')}`);

    // Young files are spared (a command without the lock may be about to import them).
    let r = rig.run(['gc', '--json'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as { compiled: unknown }).compiled, { files: 0, bytes: 0, records: 1 });
    for (const f of unnamed) assert.ok(fs.existsSync(path.join(compiled, f)), `${f} is younger than the grace period`);
    assert.equal(records()['rules/two.ts'], undefined, 'the record of a module whose file is gone is dropped');

    // Older than the grace period: every file no record names goes (the dry run's, the temp
    // files, the removed rule's module, and whatever the rule that stays was compiled into before).
    const nowNamed = new Set(namedBy(Object.values(records())));
    const stale = modules().filter((f) => !nowNamed.has(f));
    for (const f of [...unnamed, kept, `${kept}.map`]) assert.ok(stale.includes(f), f);
    age(modules(), 3_600_000);
    r = rig.run(['gc'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`gc: removed ${stale.length} compiled rule files no rule uses`));
    const left = namedBy(Object.values(records())).sort();
    assert.deepEqual(modules(), left);

    // What is left is what the build uses: nothing runs, and one's output is as it was.
    r = rig.run(['--json'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(
      r.events.filter((e) => e.event === 'start'),
      [],
      r.stdout,
    );
    assert.equal(rig.read('out/one.txt'), 'one');
    assert.deepEqual(modules(), left);

    // A build that changed something but compiled nothing does not look (an input edited); one
    // that compiled something sweeps too: an old stray goes, a young one stays.
    fs.writeFileSync(path.join(compiled, 'rules_gone.ts-0123456789abcdef.mjs'), 'export {};\n');
    age(['rules_gone.ts-0123456789abcdef.mjs'], 3_600_000);
    fs.writeFileSync(path.join(compiled, 'rules_new.ts-0123456789abcdef.mjs'), 'export {};\n');
    rig.write('data/in.txt', 'in, edited\n');
    r = rig.run(['--json'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(
      r.events.filter((e) => e.event === 'start').map((e) => e.target),
      ['one'],
      'the edit re-ran one',
    );
    assert.ok(fs.existsSync(path.join(compiled, 'rules_gone.ts-0123456789abcdef.mjs')));
    rig.write('rules/one.ts', rule('one', 'one, again'));
    assert.equal(rig.run([], env).code, 0);
    assert.ok(!fs.existsSync(path.join(compiled, 'rules_gone.ts-0123456789abcdef.mjs')));
    assert.ok(fs.existsSync(path.join(compiled, 'rules_new.ts-0123456789abcdef.mjs')));
  } finally {
    rig.cleanup();
  }
});

test('a compile of an edited rule leaves the module it replaces for a process that is about to import it; a process that finds its files swept after waiting for the lock compiles them again (revalidate)', async () => {
  const root = tempDir('rc1-compile-keep-');
  writeFiles(root, {
    'lib/shared.ts': 'export const word = "first";\n',
    'rules/r.ts': 'import { word } from "../lib/shared.ts";\nexport default word;\n',
    'rules/s.ts': 'import { word } from "../lib/shared.ts";\nexport default word + "!";\n',
  });
  const { compiler: a, state } = compilerFor(root);
  await a.compileMany(['rules/r.ts', 'rules/s.ts']);
  const first = await a.compiled('rules/r.ts');
  const firstFiles = compiledModuleFiles(first);
  assert.ok(firstFiles.length > 1, 'r imports a shared chunk');
  a.save();

  // Another process (a dry run, status) compiles r after an edit: r's earlier module and chunk stay.
  writeFiles(root, { 'rules/r.ts': 'import { word } from "../lib/shared.ts";\nexport default word + "?";\n' });
  const b = new ModuleCompiler(root, state, new StatCache(root, path.join(state, 'statcache-b.json')));
  const second = await b.compiled('rules/r.ts');
  assert.notEqual(second, first);
  for (const f of firstFiles) assert.ok(fs.existsSync(f), `${path.basename(f)} stays for a build that imports it`);
  assert.equal((await import(pathToFileURL(first).href)).default, 'first');
  assert.equal((await import(pathToFileURL(second).href)).default, 'first?');

  // b holds the lock and sweeps what its records and the saved index do not name, once old: a's
  // records of r (compiled before the edit, in memory only) are not among them.
  const old = new Date(Date.now() - 3_600_000);
  for (const f of fs.readdirSync(path.join(state, 'compiled')))
    fs.utimesSync(path.join(state, 'compiled', f), old, old);
  writeFiles(root, { 'rules/r.ts': 'import { word } from "../lib/shared.ts";\nexport default word;\n' });
  const swept = b.sweep();
  assert.ok(swept.files > 0);
  assert.ok(!fs.existsSync(first), "r's first module was swept");
  // a gets the lock: what it compiled is looked for again and compiled again where gone.
  a.revalidate();
  const again = await a.compiled('rules/r.ts'); // compiled alone this time: self-contained
  for (const f of compiledModuleFiles(again)) assert.ok(fs.existsSync(f), path.basename(f));
  assert.equal((await import(`${pathToFileURL(again).href}?again`)).default, 'first');
});

test('taking the workspace lock (acquire or acquireWaiting) makes the compiler look for its compiled files again: one removed meanwhile is compiled again', async () => {
  const rig = new TestRig({
    'rc1.build.ts': ONE_AND_TWO,
    'rules/one.ts':
      "import { defineRule } from 'rc1-build';\nexport default defineRule({ name: 'one', version: 1, run() {} });\n",
    'rules/two.ts':
      "import { defineRule } from 'rc1-build';\nexport default defineRule({ name: 'two', version: 1, run() {} });\n",
  });
  try {
    const ws = await openWorkspace(rig.dir, { ...process.env, RC1_NO_SERVER: '1' });
    for (const take of [() => ws.lock.acquire('test'), () => ws.lock.acquireWaiting('test', 1, () => {})]) {
      const file = await ws.compiler.compiled('rules/one.ts');
      for (const f of compiledModuleFiles(file)) fs.rmSync(f); // as another holder's sweep would
      await take();
      try {
        const again = await ws.compiler.compiled('rules/one.ts');
        for (const f of compiledModuleFiles(again)) assert.ok(fs.existsSync(f), path.basename(f));
      } finally {
        ws.lock.release();
      }
    }
  } finally {
    rig.cleanup();
  }
});

test('a module that imports another module of the same build by import() is compiled alone: editing the other changes what it runs', async () => {
  const root = tempDir('rc1-compile-many-dyn-');
  const write = writer(root);
  write('lib/shared.ts', 'export const shared = (s: string): string => `<${s}>`;\n');
  write(
    'rules/a.ts',
    'import { shared } from "../lib/shared.ts";\nexport async function fromB(): Promise<string> { return shared((await import("./b.ts")).b); }\n',
  );
  write('rules/b.ts', 'import { shared } from "../lib/shared.ts";\nexport const b = shared("b version 1");\n');
  const state = tempDir('rc1-compile-many-state-'); // one state dir: the second build sees what the first wrote
  const run = async (): Promise<string> => {
    const compiler = new ModuleCompiler(root, state, new StatCache(root, path.join(state, 'statcache.json')));
    const got = await compiler.compileMany(['rules/a.ts', 'rules/b.ts']);
    assert.ok(Object.keys(got.get('rules/a.ts') as object).includes('rules/b.ts'), 'b is in the closure of a');
    const file = await compiler.compiled('rules/a.ts');
    compiler.save();
    const records = JSON.parse(fs.readFileSync(path.join(state, 'compiled', 'closures-3.json'), 'utf8')) as Record<
      string,
      { chunks?: string[] }
    >;
    assert.equal(records['rules/a.ts']?.chunks, undefined, 'a is compiled alone: no shared chunks');
    assert.doesNotMatch(
      fs.readFileSync(file, 'utf8'),
      /import\(\s*["']\.\/e\d+\.mjs["']\)/,
      'and imports no module of the build by its place',
    );
    return ((await import(pathToFileURL(file).href)) as { fromB(): Promise<string> }).fromB();
  };
  assert.equal(await run(), '<<b version 1>>');
  write('rules/b.ts', 'import { shared } from "../lib/shared.ts";\nexport const b = shared("b version 2");\n');
  assert.equal(await run(), '<<b version 2>>');
});

test("two processes compiling in one workspace at once, with different modules beside the same one: each record names the chunks its module's file imports, and every module runs", async () => {
  const root = tempDir('rc1-compile-many-two-');
  const write = writer(root);
  write('lib/one.ts', 'export const one = (): string => "one";\n');
  write('lib/two.ts', 'export const two = (): string => "two";\n');
  write(
    'rules/a.ts',
    'import { one } from "../lib/one.ts";\nimport { two } from "../lib/two.ts";\nexport const a = one() + two();\n',
  );
  write('rules/b.ts', 'import { one } from "../lib/one.ts";\nexport const b = one();\n');
  write('rules/c.ts', 'import { two } from "../lib/two.ts";\nexport const c = two();\n');
  const state = tempDir('rc1-compile-many-state-');
  const make = (): ModuleCompiler =>
    new ModuleCompiler(root, state, new StatCache(root, path.join(state, 'statcache.json')));
  const p1 = make();
  const p2 = make();
  await p1.compileMany(['rules/a.ts', 'rules/b.ts']); // a's code split as {one} | {two}
  await p2.compileMany(['rules/a.ts', 'rules/c.ts']); // a's code split as {one} | {two} the other way round
  p2.save();
  p1.save(); // the last writer's records stand
  const dir = path.join(state, 'compiled');
  const records = JSON.parse(fs.readFileSync(path.join(dir, 'closures-3.json'), 'utf8')) as Record<
    string,
    { out: string; chunks?: string[] }
  >;
  for (const [entry, r] of Object.entries(records)) {
    const imported = compiledModuleFiles(path.join(dir, r.out))
      .slice(1)
      .map((f) => path.basename(f))
      .sort();
    assert.deepEqual([...(r.chunks ?? [])].sort(), imported, `${entry}: the record names the chunks its file imports`);
  }
  const fresh = make();
  assert.ok(
    fresh.knownClosure('rules/a.ts') && fresh.knownClosure('rules/b.ts'),
    "the last writer's records are valid",
  );
  assert.equal(fresh.knownClosure('rules/c.ts'), null, "c's record went with the other process's index");
  const mod = async (e: string): Promise<Record<string, string>> =>
    (await import(pathToFileURL(await fresh.compiled(`rules/${e}.ts`)).href)) as Record<string, string>;
  assert.equal((await mod('a')).a, 'onetwo');
  assert.equal((await mod('b')).b, 'one');
  assert.equal((await mod('c')).c, 'two');
  assert.equal(fresh.compiles, 1, 'only c is compiled again');
});

/**
 * The esbuild processes started by this process's main thread, where the engine runs (Linux:
 * /proc). tsx's own esbuild, started from its loader thread, is not among them.
 */
function esbuildChildren(): number[] {
  const out: number[] = [];
  const children = fs
    .readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .split(/\s+/)
    .filter(Boolean);
  for (const c of children) {
    try {
      if (fs.readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'esbuild') out.push(Number(c));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

test("stopCompilerService stops the esbuild service a compileMany started (the server's after every command); the next compileMany starts another", {
  skip: process.platform !== 'linux' ? 'reads /proc (Linux only)' : false,
}, async () => {
  const root = shapes();
  const settle = async (cond: () => boolean): Promise<void> => {
    const t0 = Date.now();
    while (!cond() && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
  };
  await stopCompilerService(); // the service earlier tests started
  await settle(() => esbuildChildren().length === 0);
  assert.deepEqual(esbuildChildren(), []);
  const first = compilerFor(root).compiler;
  const got = await first.compileMany(['rules/a.ts', 'rules/b.ts']);
  assert.ok(!(got.get('rules/a.ts') instanceof Error) && !(got.get('rules/b.ts') instanceof Error));
  assert.equal(esbuildChildren().length, 1, 'the service runs after a compile');
  await stopCompilerService();
  await settle(() => esbuildChildren().length === 0);
  assert.deepEqual(esbuildChildren(), [], 'no esbuild process of the engine left');
  const second = compilerFor(root).compiler;
  const again = await second.compileMany(['rules/a.ts', 'rules/b.ts']);
  assert.deepEqual(again.get('rules/a.ts'), got.get('rules/a.ts'));
  assert.deepEqual(again.get('rules/b.ts'), got.get('rules/b.ts'));
  assert.equal(esbuildChildren().length, 1, 'a new service');
  await stopCompilerService();
});

/** Writes files (path → text) under a directory. */
function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
}

/** A rule that writes what an npm package exports (and counts its runs). */
const PKG_RULE = (name: string): string => `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import pkg from 'pkg-v';
export default defineRule({
  name: '${name}', version: 1,
  run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    fs.writeFileSync(ctx.output('out/${name}.txt'), String(pkg.value));
  },
});
`;

test('a workspace opened through a symlink: compileMany gives the closures of a compile alone, npm package.json files included', async () => {
  const real = tempDir('rc1-compile-many-real-');
  writeFiles(real, {
    'node_modules/pkg-a/package.json': '{ "name": "pkg-a", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/pkg-a/index.js': 'module.exports = 1;\n',
    'lib/s.ts': 'import pa from "pkg-a";\nexport default [pa];\n',
    'lib/d.json': '{ "a": 1 }\n',
    'rules/r1.ts':
      'import s from "../lib/s.ts";\nimport d from "../lib/d.json" with { type: "json" };\nexport default [s, d];\n',
    'rules/r2.ts': 'import { check } from "rc1-build";\nimport s from "../lib/s.ts";\nexport default [s, check];\n',
  });
  // A link beside the real folder, and one a directory deeper (a metafile key resolved against the
  // wrong one of the two then names no file at all).
  const deeper = path.join(tempDir('rc1-compile-many-link-'), 'ws');
  fs.symlinkSync(real, deeper);
  for (const link of [siblingLink(real), deeper]) await symlinkedRootCompiles(link);
});

async function symlinkedRootCompiles(link: string): Promise<void> {
  const entries = ['rules/r1.ts', 'rules/r2.ts'];
  const singles = await alone(link, entries);
  const { compiler } = compilerFor(link);
  const many = await compiler.compileMany(entries);
  for (const e of entries) {
    const single = singles.get(e)!;
    assert.ok(!(single instanceof Error), `${e} compiles alone: ${single}`);
    const got = many.get(e);
    assert.ok(got && !(got instanceof Error), `${e}: ${got}`);
    assert.ok(
      Object.keys(got).some((f) => f.endsWith('node_modules/pkg-a/package.json')),
      `${e}: pkg-a's package.json is in the closure: ${Object.keys(got)}`,
    );
    assertSameCompile(e, single, got, await compiler.compiled(e));
  }
  const r2 = Object.keys(many.get('rules/r2.ts') as Record<string, string>);
  // The engine's API, outside the workspace, is in the closure of the rule that imports it.
  assert.ok(
    r2.some((f) => f.endsWith('/src/api/index.ts')),
    `${r2}`,
  );
  // Files inside the workspace are named relative to it, package.json files included (esbuild gives their real paths).
  assert.ok(r2.includes('node_modules/pkg-a/package.json') && r2.includes('lib/s.ts'), `${r2}`);
}

test('closures recorded before the symlinked-root and bare-name fixes (closures.json, closures-2.json) are not re-used: the rule is compiled again and its closure is complete', async () => {
  const root = tempDir('rc1-compile-many-old-');
  writeFiles(root, {
    'node_modules/pkg-a/package.json': '{ "name": "pkg-a", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/pkg-a/index.js': 'module.exports = 1;\n',
    'rules/r.ts': 'import pa from "pkg-a";\nexport default pa;\n',
  });
  const { compiler, state } = compilerFor(root);
  const full = await compiler.closure('rules/r.ts');
  assert.ok('node_modules/pkg-a/package.json' in full);
  // The record an earlier engine could write: the package.json missing, its compiled file present.
  const old = { files: { 'rules/r.ts': full['rules/r.ts'] }, out: 'old.mjs' };
  fs.writeFileSync(path.join(state, 'compiled', 'old.mjs'), 'export default 0;\n');
  for (const index of ['closures.json', 'closures-2.json']) {
    fs.writeFileSync(path.join(state, 'compiled', index), JSON.stringify({ 'rules/r.ts': old }));
    fs.rmSync(path.join(state, 'compiled', 'closures-3.json'), { force: true });
    const again = new ModuleCompiler(root, state, new StatCache(root, path.join(state, 'statcache.json')));
    assert.equal(again.knownClosure('rules/r.ts'), null, index);
    assert.deepEqual(await again.closure('rules/r.ts'), full);
    again.save();
    assert.ok(!fs.existsSync(path.join(state, 'compiled', index)), `the old index ${index} is removed`);
  }
});

/** A symlink to dir in dir's own parent folder (removed after the tests). */
function siblingLink(dir: string): string {
  const link = `${dir}-link`;
  fs.symlinkSync(dir, link);
  temps.push(link);
  return link;
}

test('a workspace opened through a symlink (-C): upgrading an npm package that two rules use re-runs them', () => {
  const rig = new TestRig({
    'rc1.build.ts': ONE_AND_TWO,
    'rules/one.ts': PKG_RULE('one'),
    'rules/two.ts': PKG_RULE('two'),
    'node_modules/pkg-v/package.json': '{ "name": "pkg-v", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/pkg-v/index.js': 'module.exports = { value: "v1" };\n',
  });
  const link = siblingLink(rig.dir);
  try {
    const build = (): void => {
      const r = rig.run(['-C', link], { RC1_NO_SERVER: '1' });
      assert.equal(r.code, 0, r.stdout + r.stderr);
    };
    build();
    assert.deepEqual(rig.runs(), ['one', 'two']);
    assert.equal(rig.read('out/one.txt'), 'v1');
    build();
    assert.deepEqual(rig.runs(), [], 'nothing changed: nothing runs');
    // The upgrade: a new version whose exports name another file.
    rig.write(
      'node_modules/pkg-v/package.json',
      '{ "name": "pkg-v", "version": "2.0.0", "exports": { ".": "./v2.js" } }\n',
    );
    rig.write('node_modules/pkg-v/v2.js', 'module.exports = { value: "v2" };\n');
    build();
    assert.deepEqual(rig.runs(), ['one', 'two']);
    assert.equal(rig.read('out/one.txt'), 'v2');
    assert.equal(rig.read('out/two.txt'), 'v2');
  } finally {
    rig.cleanup();
  }
});

/** A rule that writes what a module imported by `specifier` exports (and counts its runs). */
const LOCAL_RULE = (name: string, specifier: string): string => `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import { value } from '${specifier}';
export default defineRule({
  name: '${name}', version: 1,
  run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    fs.writeFileSync(ctx.output('out/${name}.txt'), value);
  },
});
`;

/**
 * Local files imported by a bare name, one rule each: a tsconfig `paths` alias, a package.json
 * `#imports` entry, an npm-workspace package (a link in node_modules to a folder of the workspace).
 */
const ALIASED: Record<string, string> = {
  'package.json':
    '{ "name": "ws", "private": true, "workspaces": ["packages/*"], "imports": { "#hashed/*": "./lib/hashed/*" } }\n',
  'tsconfig.json': '{ "compilerOptions": { "baseUrl": ".", "paths": { "@aliased/*": ["lib/aliased/*"] } } }\n',
  'lib/aliased/x.ts': 'export const value: string = "paths-1";\n',
  'lib/hashed/y.ts': 'export const value: string = "imports-1";\n',
  'packages/ws-pkg/package.json': '{ "name": "ws-pkg", "version": "1.0.0", "main": "src/index.ts" }\n',
  'packages/ws-pkg/src/index.ts': 'export { value } from "./value.ts";\n',
  'packages/ws-pkg/src/value.ts': 'export const value: string = "workspace-1";\n',
  'rules/paths.ts': LOCAL_RULE('paths', '@aliased/x.ts'),
  'rules/hashed.ts': LOCAL_RULE('hashed', '#hashed/y.ts'),
  'rules/wspkg.ts': LOCAL_RULE('wspkg', 'ws-pkg'),
};

test('files of the workspace imported by a bare name (tsconfig paths, #imports, an npm-workspace package) are bundled and in the closure, the same in compileMany and a compile alone; npm packages, a CommonJS workspace package and rc1-build stay as they were', async () => {
  const root = tempDir('rc1-compile-many-alias-');
  writeFiles(root, {
    ...ALIASED,
    'node_modules/pkg-a/package.json': '{ "name": "pkg-a", "version": "1.0.0", "main": "index.js" }\n',
    'node_modules/pkg-a/index.js': 'module.exports = { a: 1 };\n',
    'rules/npm.ts': 'import pkgA from "pkg-a";\nimport { check } from "rc1-build";\nexport default [pkgA, check];\n',
    // A CommonJS workspace package that requires an npm package: Node runs it (external), as before.
    'packages/ws-cjs/package.json': '{ "name": "ws-cjs", "version": "1.0.0", "main": "index.js" }\n',
    'packages/ws-cjs/index.js': 'const a = require("pkg-a");\nmodule.exports = { value: a.a, dir: __dirname };\n',
    'rules/cjs.ts': 'import wsCjs from "ws-cjs";\nexport default wsCjs;\n',
  });
  for (const p of ['ws-pkg', 'ws-cjs'])
    fs.symlinkSync(path.join('..', 'packages', p), path.join(root, 'node_modules', p));
  const entries = ['rules/paths.ts', 'rules/hashed.ts', 'rules/wspkg.ts', 'rules/npm.ts', 'rules/cjs.ts'];
  const singles = await alone(root, entries);
  const { compiler } = compilerFor(root);
  const many = await compiler.compileMany(entries);
  for (const e of entries) {
    const single = singles.get(e)!;
    assert.ok(!(single instanceof Error), `${e} compiles alone: ${single}`);
    const got = many.get(e);
    assert.ok(got && !(got instanceof Error), `${e}: ${got}`);
    assertSameCompile(e, single, got, await compiler.compiled(e));
  }
  const keys = (e: string): string[] => Object.keys(many.get(e) as Record<string, string>);
  // The files of the workspace (the engine's API, outside it, follows).
  const local = (e: string): string[] => keys(e).filter((f) => !path.isAbsolute(f));
  // The tsconfig.json and package.json that map a bare name to a workspace file are in the closure.
  assert.deepEqual(local('rules/paths.ts'), ['lib/aliased/x.ts', 'package.json', 'rules/paths.ts', 'tsconfig.json']);
  assert.deepEqual(local('rules/hashed.ts'), ['lib/hashed/y.ts', 'package.json', 'rules/hashed.ts', 'tsconfig.json']);
  assert.deepEqual(local('rules/wspkg.ts'), [
    'package.json',
    'packages/ws-pkg/package.json',
    'packages/ws-pkg/src/index.ts',
    'packages/ws-pkg/src/value.ts',
    'rules/wspkg.ts',
    'tsconfig.json',
  ]);
  // The local code is in the compiled file, which imports no TypeScript file.
  for (const e of ['rules/paths.ts', 'rules/hashed.ts', 'rules/wspkg.ts']) {
    const js = fs.readFileSync(await compiler.compiled(e), 'utf8');
    assert.doesNotMatch(js, /^import .*\.ts["']/m, e);
    assert.match(js, /-1"/, e);
  }
  // An npm package stays external (its package.json in the closure, imported by absolute path);
  // rc1-build is the engine's API, bundled.
  const npm = keys('rules/npm.ts');
  assert.ok(npm.includes('node_modules/pkg-a/package.json') && !npm.includes('node_modules/pkg-a/index.js'), `${npm}`);
  assert.ok(
    npm.some((f) => f.endsWith('/src/api/index.ts')),
    `${npm}`,
  );
  assert.match(
    fs.readFileSync(await compiler.compiled('rules/npm.ts'), 'utf8'),
    new RegExp(`from "${path.join(root, 'node_modules/pkg-a/index.js').replace(/[.\\/]/g, '\\$&')}"`),
  );
  // A JavaScript workspace package stays external; its files (and the npm package it requires) are
  // in the closure all the same.
  assert.deepEqual(local('rules/cjs.ts'), [
    'node_modules/pkg-a/package.json',
    'package.json',
    'packages/ws-cjs/index.js',
    'packages/ws-cjs/package.json',
    'rules/cjs.ts',
    'tsconfig.json',
  ]);
  const cjs = (await import(pathToFileURL(await compiler.compiled('rules/cjs.ts')).href)) as { default: unknown };
  assert.deepEqual(cjs.default, { value: 1, dir: path.join(root, 'packages', 'ws-cjs') });
});

test('editing a file of the workspace imported by a bare name re-runs the rule that imports it, and only it (tsconfig paths, #imports, an npm-workspace package)', () => {
  const rig = new TestRig({
    ...ALIASED,
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  targets: [
    defineTarget({ name: 'paths', rule: 'rules/paths.ts', outputs: ['out/paths.txt'] }),
    defineTarget({ name: 'hashed', rule: 'rules/hashed.ts', outputs: ['out/hashed.txt'] }),
    defineTarget({ name: 'wspkg', rule: 'rules/wspkg.ts', outputs: ['out/wspkg.txt'] }),
  ],
});
`,
  });
  fs.mkdirSync(path.join(rig.dir, 'node_modules'));
  fs.symlinkSync(path.join('..', 'packages', 'ws-pkg'), path.join(rig.dir, 'node_modules', 'ws-pkg'));
  try {
    const build = (): void => {
      const r = rig.run([], { RC1_NO_SERVER: '1' });
      assert.equal(r.code, 0, r.stdout + r.stderr);
    };
    build();
    assert.deepEqual(rig.runs(), ['hashed', 'paths', 'wspkg']);
    assert.equal(rig.read('out/paths.txt'), 'paths-1');
    assert.equal(rig.read('out/hashed.txt'), 'imports-1');
    assert.equal(rig.read('out/wspkg.txt'), 'workspace-1');
    build();
    assert.deepEqual(rig.runs(), []);
    for (const [file, target, value] of [
      ['lib/aliased/x.ts', 'paths', 'paths-2'],
      ['lib/hashed/y.ts', 'hashed', 'imports-2'],
      ['packages/ws-pkg/src/value.ts', 'wspkg', 'workspace-2'],
    ] as const) {
      rig.write(file, `export const value: string = "${value}";\n`);
      build();
      assert.deepEqual(rig.runs(), [target], `${file} edited`);
      assert.equal(rig.read(`out/${target}.txt`), value);
    }
  } finally {
    rig.cleanup();
  }
});

/** A workspace with an ESM JavaScript package that reads a data file beside itself (import.meta.url). */
const DATA_PKG: Record<string, string> = {
  'package.json': '{ "name": "ws", "private": true, "type": "module", "workspaces": ["packages/*"] }\n',
  'packages/data-pkg/package.json':
    '{ "name": "data-pkg", "version": "1.0.0", "type": "module", "main": "index.js" }\n',
  'packages/data-pkg/index.js':
    'import * as fs from "node:fs";\nimport { suffix } from "./suffix.js";\nexport const value = fs.readFileSync(new URL("./data.txt", import.meta.url), "utf8") + suffix;\n',
  'packages/data-pkg/suffix.js': 'export const suffix = "-1";\n',
  'packages/data-pkg/data.txt': 'hello',
};

test('an ESM JavaScript workspace package (linked into node_modules) runs where it is, so import.meta.url finds its files; its files are in the closure, the same in compileMany and a compile alone', async () => {
  const root = tempDir('rc1-compile-many-datapkg-');
  writeFiles(root, {
    ...DATA_PKG,
    'rules/r.ts': 'import { value } from "data-pkg";\nexport default value;\n',
    'rules/other.ts': 'export default 1;\n',
  });
  fs.mkdirSync(path.join(root, 'node_modules'));
  fs.symlinkSync(path.join('..', 'packages', 'data-pkg'), path.join(root, 'node_modules', 'data-pkg'));
  const entries = ['rules/r.ts', 'rules/other.ts'];
  const singles = await alone(root, entries);
  const { compiler, state } = compilerFor(root);
  const many = await compiler.compileMany(entries);
  for (const e of entries) {
    const single = singles.get(e)!;
    assert.ok(!(single instanceof Error), `${e} compiles alone: ${single}`);
    const got = many.get(e);
    assert.ok(got && !(got instanceof Error), `${e}: ${got}`);
    assertSameCompile(e, single, got, await compiler.compiled(e));
  }
  const mod = (await import(pathToFileURL(await compiler.compiled('rules/r.ts')).href)) as { default: string };
  assert.equal(mod.default, 'hello-1');
  assert.deepEqual(Object.keys(many.get('rules/r.ts') as Record<string, string>), [
    'package.json',
    'packages/data-pkg/index.js',
    'packages/data-pkg/package.json',
    'packages/data-pkg/suffix.js',
    'rules/r.ts',
  ]);
  // Editing a file the package imports makes the closure stale.
  compiler.save();
  fs.writeFileSync(path.join(root, 'packages/data-pkg/suffix.js'), 'export const suffix = "-2";\n');
  const again = new ModuleCompiler(root, state, new StatCache(root, path.join(state, 'statcache.json')));
  assert.equal(again.knownClosure('rules/r.ts'), null);
  assert.deepEqual(again.knownClosure('rules/other.ts'), many.get('rules/other.ts'));
});

/** The rig's build, which must succeed. */
function buildOk(rig: TestRig): void {
  const r = rig.run([], { RC1_NO_SERVER: '1' });
  assert.equal(r.code, 0, r.stdout + r.stderr);
}

const ONE_TARGET = (rule: string): string => `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  targets: [defineTarget({ name: 'v', rule: '${rule}', outputs: ['out/v.txt'] })],
});
`;

test('re-pointing a tsconfig paths alias to another folder re-runs the rule that imports through it', () => {
  const rig = new TestRig({
    'tsconfig.json': '{ "extends": "./tsconfig.base.json" }\n',
    'tsconfig.base.json':
      '{\n  // the aliases\n  "compilerOptions": { "baseUrl": ".", "paths": { "@v/*": ["lib/v1/*"] } },\n}\n',
    'lib/v1/x.ts': 'export const value: string = "v1";\n',
    'lib/v2/x.ts': 'export const value: string = "v2";\n',
    'rules/v.ts': LOCAL_RULE('v', '@v/x.ts'),
    'rc1.build.ts': ONE_TARGET('rules/v.ts'),
  });
  try {
    buildOk(rig);
    assert.deepEqual(rig.runs(), ['v']);
    assert.equal(rig.read('out/v.txt'), 'v1');
    buildOk(rig);
    assert.deepEqual(rig.runs(), []);
    // In the file the tsconfig.json extends.
    rig.write('tsconfig.base.json', '{ "compilerOptions": { "baseUrl": ".", "paths": { "@v/*": ["lib/v2/*"] } } }\n');
    buildOk(rig);
    assert.deepEqual(rig.runs(), ['v']);
    assert.equal(rig.read('out/v.txt'), 'v2');
  } finally {
    rig.cleanup();
  }
});

test('re-pointing an #imports entry of a package.json without a name re-runs the rule that imports through it', () => {
  const rig = new TestRig({
    'package.json': '{ "private": true, "imports": { "#v/*": "./lib/v1/*" } }\n',
    'lib/v1/x.ts': 'export const value: string = "v1";\n',
    'lib/v2/x.ts': 'export const value: string = "v2";\n',
    'rules/v.ts': LOCAL_RULE('v', '#v/x.ts'),
    'rc1.build.ts': ONE_TARGET('rules/v.ts'),
  });
  try {
    buildOk(rig);
    assert.deepEqual(rig.runs(), ['v']);
    assert.equal(rig.read('out/v.txt'), 'v1');
    buildOk(rig);
    assert.deepEqual(rig.runs(), []);
    rig.write('package.json', '{ "private": true, "imports": { "#v/*": "./lib/v2/*" } }\n');
    buildOk(rig);
    assert.deepEqual(rig.runs(), ['v']);
    assert.equal(rig.read('out/v.txt'), 'v2');
  } finally {
    rig.cleanup();
  }
});
