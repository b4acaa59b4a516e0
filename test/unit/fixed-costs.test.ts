// The fixed per-build work a no-op pays before its first decision, made cheaper without changing
// what it checks: the plan's closure computed once per resolved pipeline (graph/resolved.ts), and
// the params stamps made once per (rule, closure, params) (config/validate-params.ts), the stat
// cache's paths joined by string (hash/stat-cache.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';
import { forgetParsedState } from '../../packages/engine/src/state/parsed-state.ts';
import { type ResolvedPipeline, type ResolvedTarget, closureOf } from '../../packages/engine/src/graph/resolved.ts';
import { paramStamp, validateParams } from '../../packages/engine/src/config/validate-params.ts';
import type { ModuleCompiler } from '../../packages/engine/src/config/compile-module.ts';
import { UsageError } from '../../packages/engine/src/config/usage-error.ts';

function target(name: string, deps: string[], rule = 'rules/r.mjs', params: string[] = []): ResolvedTarget {
  return {
    name,
    rule,
    gate: false,
    inputs: [],
    outputs: [{ path: `out/${name}`, dir: false }],
    params,
    args: {},
    env: [],
    secrets: [],
    deps,
  };
}

function pipeline(targets: ResolvedTarget[], frozen = true): ResolvedPipeline {
  const p = {
    root: '/w',
    targets: new Map(targets.map((t) => [t.name, t])),
    order: targets.map((t) => t.name),
    producers: new Map(),
    defaultTargets: [],
    manifestDir: 'reports/build',
    externalRoots: [],
    configFiles: [],
    profile: 'dev',
    commands: {},
  } as ResolvedPipeline;
  return frozen ? Object.freeze(p) : p;
}

test('closureOf gives the same plan on every call, each caller its own copy, and a new pipeline object its own answer', () => {
  const p1 = pipeline([target('a', []), target('b', ['a']), target('c', ['a', 'b']), target('d', [])]);
  const first = closureOf(p1, ['c']);
  assert.deepEqual(first, ['a', 'b', 'c']);
  first.push('mutated by a caller');
  assert.deepEqual(closureOf(p1, ['c']), ['a', 'b', 'c']);
  assert.deepEqual(closureOf(p1, ['d', 'c']), ['d', 'a', 'b', 'c']);
  assert.deepEqual(closureOf(p1, ['c', 'd']), ['a', 'b', 'c', 'd']);
  // The same names in another pipeline (what a changed rc1.build.ts resolves to) are walked anew.
  const p2 = pipeline([target('a', []), target('b', []), target('c', ['b'])]);
  assert.deepEqual(closureOf(p2, ['c']), ['b', 'c']);
  // A pipeline that is not frozen (built in memory, may still change) is never remembered.
  const open = pipeline([target('a', []), target('c', ['a'])], false);
  assert.deepEqual(closureOf(open, ['c']), ['a', 'c']);
  (open.targets as Map<string, ResolvedTarget>).set('c', target('c', []));
  assert.deepEqual(closureOf(open, ['c']), ['c']);
});

/**
 * A temp workspace with a rule whose schema accepts { n: number } (duck-typed like zod's
 * safeParse), a compiler that knows its closure, and two targets of it (params a.n and b.n).
 */
function paramsRig(prefix: string): {
  root: string;
  stateDir: string;
  compiler: ModuleCompiler;
  targets: ReturnType<typeof target>[];
  closure: Record<string, string>;
} {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const stateDir = path.join(root, '.rc1');
  fs.mkdirSync(path.join(stateDir, 'compiled'), { recursive: true });
  const mod = path.join(root, 'rule.mjs');
  fs.writeFileSync(
    mod,
    `export default { name: 'r', version: 1, params: { safeParse(p) {
       return Object.values(p).every((v) => typeof v?.n === 'number') ? { success: true, data: p }
         : { success: false, error: { issues: [{ code: 'invalid_type', path: ['n'], message: 'Expected number, received string' }] } };
     } }, run() {} };\n`,
  );
  const closure = { 'rules/r.mjs': 'c0' };
  const compiler = {
    knownClosure: () => closure,
    closure: async () => closure,
    compiled: async () => mod,
  } as unknown as ModuleCompiler;
  const targets = [target('t1', [], 'rules/r.mjs', ['a.n']), target('t2', [], 'rules/r.mjs', ['b.n'])];
  return { root, stateDir, compiler, targets, closure };
}

test('validateParams stamps each target with the stamp of its (rule, closure, params), so stamps of earlier builds stay valid, and still refuses a bad value', async () => {
  const { root, stateDir, compiler, targets, closure } = paramsRig('rc1-fixed-costs-');
  const values = { a: { n: 1 }, b: { n: 2 } };
  const env = { root, stateDir, compiler, config: { values, files: [] } };
  await validateParams(env, targets);
  const stamps = JSON.parse(fs.readFileSync(path.join(stateDir, 'compiled', 'params-validated.json'), 'utf8'));
  assert.deepEqual(stamps, {
    t1: paramStamp('rules/r.mjs', closure, { a: { n: 1 } }),
    t2: paramStamp('rules/r.mjs', closure, { b: { n: 2 } }),
  });
  assert.notEqual(stamps.t1, stamps.t2);
  // A value that changed since is checked again and refused, naming its target only.
  const bad = { ...env, config: { values: { a: { n: 1 }, b: { n: 'two' } }, files: [] } };
  await assert.rejects(validateParams(bad, targets), (e: unknown) => {
    assert.ok(e instanceof UsageError);
    assert.match(e.message, /target t2/);
    assert.doesNotMatch(e.message, /target t1/);
    return true;
  });
});

test('the stat cache finds a file by any spelling of its path, joined by string only where that is what path.resolve gives', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-fixed-costs-stat-'));
  fs.mkdirSync(path.join(root, 'd'));
  fs.writeFileSync(path.join(root, 'a.txt'), 'A');
  fs.writeFileSync(path.join(root, 'd', 'b.txt'), 'B');
  fs.writeFileSync(path.join(root, '.hidden'), 'H');
  const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
  for (const cacheRoot of [root, `${root}/`, `${root}/d/..`]) {
    const cache = new StatCache(cacheRoot, path.join(root, 'statcache.json'));
    const cases: [string, string | null][] = [
      ['a.txt', 'A'],
      ['d/b.txt', 'B'],
      ['./a.txt', 'A'],
      ['d/../a.txt', 'A'],
      ['d//b.txt', 'B'],
      ['d/./b.txt', 'B'],
      ['.hidden', 'H'],
      [path.join(root, 'd', 'b.txt'), 'B'],
      ['d', null], // a directory is no file
      ['d/', null],
      ['nope.txt', null],
    ];
    for (const [rel, body] of cases) {
      assert.equal(cache.hash(rel)?.sha256 ?? null, body === null ? null : sha(body), `${cacheRoot} + ${rel}`);
    }
  }
});

test('validateParams in a long-lived process: stamps read from a kept (frozen) parse are copied before new ones are recorded', async () => {
  forgetParsedState();
  const { root, stateDir, compiler, targets, closure } = paramsRig('rc1-fixed-costs-kept-');
  const env = (b: number | string) => ({
    root,
    stateDir,
    compiler,
    config: { values: { a: { n: 1 }, b: { n: b } }, files: [] },
  });
  const file = path.join(stateDir, 'compiled', 'params-validated.json');
  await validateParams(env(2), targets);
  const old = new Date(Date.now() - 10_000);
  fs.utimesSync(file, old, old);
  await new Promise((r) => setTimeout(r, 150)); // past the file's timestamp tick: it can be kept
  for (let i = 0; i < 3; i++) await validateParams(env(2), targets); // the second read on: kept
  await validateParams(env(3), targets); // t2's stamp changes: recorded in a copy, not in the kept parse
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).t2, paramStamp('rules/r.mjs', closure, { b: { n: 3 } }));
  await assert.rejects(validateParams(env('x'), targets), UsageError);
});
