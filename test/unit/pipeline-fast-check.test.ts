// The quick declaration check (config/pipeline-fast-check.ts) lets a build skip zod: whatever it
// accepts, the zod schema (config/pipeline-schema.ts) must accept too. Held against the schema on
// typical declarations and on thousands of mutations of them (one field, one nested value, one
// extra key at a time, from a pool of awkward values).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineGate, definePipeline, defineTarget, target } from '../../packages/engine/src/api/index.ts';
import {
  certainlyValidDeclaration,
  certainlyValidPipeline,
  certainlyValidTarget,
} from '../../packages/engine/src/config/pipeline-fast-check.ts';
import { pipelineSchema, targetSchema } from '../../packages/engine/src/config/pipeline-schema.ts';

class Box {
  x = 'a';
}
const sparse: unknown[] = ['a'];
sparse[2] = 'b';
const withSymbol = { a: 'x', [Symbol('s')]: 'y' };
const hidden = Object.defineProperty({ a: 'x' }, 'b', { value: 'y', enumerable: false });
const getter = Object.defineProperty({}, 'a', { get: () => 'x', enumerable: true });
const nullProto = Object.assign(Object.create(null) as object, { a: 'x' });

/** Values that each sit on some edge of the schema. */
const POOL: unknown[] = [
  undefined,
  null,
  '',
  ' ',
  'x',
  'a b',
  '1abc',
  'shadow.n',
  'shadow..n',
  '.rc1/x',
  '.rc1/',
  'rc1/x',
  'https://example.com/x',
  ' https://example.com ',
  'http:example.com',
  'not a url',
  'local',
  'slurm',
  'pbs',
  'OPENAI_KEY',
  '__proto__',
  0,
  1,
  -1,
  1.5,
  2,
  2 ** 60,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  [],
  [''],
  ['a'],
  ['a', 'b'],
  ['a', 1],
  ['a', undefined],
  [null],
  [['a']],
  sparse,
  {},
  { a: 'x' },
  { a: '' },
  { 'a b': 'x' },
  { '1': 'x' },
  { a: ['x', 'y'] },
  { a: [] },
  { a: { kind: 'target', name: 'b' } },
  { a: 1 },
  { a: null },
  { a: Number.NaN },
  { a: { b: [1, 'x', null, true] } },
  { a: new Date(0) },
  { kind: 'target', name: 'b' },
  { kind: 'target', name: '' },
  { kind: 'target', name: 'b', output: 'o' },
  { kind: 'target', name: 'b', output: '' },
  { kind: 'target', name: 'b', extra: 1 },
  { kind: 'tgt', name: 'b' },
  { env: 'A_B', why: 'w' },
  { env: 'A_B', why: '' },
  { env: 'A_B', values: ['1'], optional: true, why: 'w' },
  { env: 'A_B', values: [1], why: 'w' },
  { env: '1A', why: 'w' },
  { url: 'https://x.org', why: 'w' },
  { url: 'nope', why: 'w' },
  { url: 3, why: 'w' },
  { executable: 'sh', why: 'w' },
  { executable: '', why: 'w' },
  { config: 'a.b', problem: 'p', why: 'w' },
  { config: 'a.b', why: 'w' },
  { path: '.rc1/s' },
  { path: '.rc1/s', cache: true },
  { path: '.rc1/s', cache: 'yes' },
  { path: 'x' },
  { kind: 'slurm' },
  { file: 'f', line: 1, col: 2 },
  { file: 'f', line: '1', col: 2 },
  { file: 'f', line: 1, col: 2, x: 1 },
  new Box(),
  new Date(0),
  withSymbol,
  hidden,
  getter,
  nullProto,
];

const TARGET_FIELDS = [
  'name',
  'rule',
  'inputs',
  'outputs',
  'params',
  'args',
  'secrets',
  'env',
  'requires',
  'state',
  'executor',
  'report',
  'description',
  'metrics',
  'gate',
  'site',
  'other',
];

function bases(): Record<string, unknown>[] {
  return [
    { name: 't_0001', rule: 'rules/concat.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/a.txt'] },
    {
      name: 'b',
      rule: 'rules/b.ts',
      inputs: { src: [target('a'), target('c', 'pool')], raw: 'data/raw/' },
      outputs: { pool: 'data/pool.jsonl', report: 'reports/b.json' },
      params: ['shadow.n', 'pool'],
      args: { stage: 3, tags: ['x', 'y'], nested: { on: true, none: null } },
      secrets: ['API_KEY'],
      env: ['HOME_DIR'],
      requires: [
        { env: 'API_KEY', why: 'the judge' },
        { env: 'MODE', values: ['a', 'b'], optional: true, why: 'w' },
        { url: 'http://127.0.0.1:8000/v1', why: 'the server' },
        { executable: 'python3', why: 'x' },
        { config: 'train.lr', problem: 'must be set', why: 'y' },
      ],
      state: ['.rc1/state/x', { path: '.rc1/state/y', cache: false }],
      executor: 'local',
      description: 'a target',
      metrics: ['reports/m.json'],
    },
    { name: 'g', rule: 'rules/g.ts', outputs: { report: 'reports/g.json' }, report: 'report', gate: true },
    {
      name: 's',
      rule: 'rules/s.ts',
      outputs: ['o'],
      executor: 'slurm',
      site: { file: 'rc1.build.ts', line: 3, col: 5 },
    },
  ];
}

const zodTarget = (t: unknown): boolean => targetSchema.safeParse(t).success;

/** Every target the mutations make: each field set to each pool value, nested values too. */
function mutations(): unknown[] {
  const out: unknown[] = [];
  for (const base of bases()) {
    out.push(base);
    for (const f of TARGET_FIELDS) {
      for (const v of POOL) {
        out.push({ ...base, [f]: v });
        const { [f]: _drop, ...without } = base;
        out.push(without);
      }
    }
    // one level down: an input group, an output, an args value, a requirement, a state item
    for (const v of POOL) {
      out.push({ ...base, inputs: { src: v } });
      out.push({ ...base, inputs: { src: ['a', v] } });
      out.push({ ...base, outputs: ['a', v] });
      out.push({ ...base, outputs: { a: v } });
      out.push({ ...base, args: { a: v } });
      out.push({ ...base, args: { a: [v] } });
      out.push({ ...base, requires: [v] });
      out.push({ ...base, state: [v] });
      out.push({ ...base, metrics: [v] });
      out.push({ ...base, params: [v] });
    }
  }
  return out;
}

test('every target the quick check accepts, zod accepts (thousands of mutations of typical targets)', () => {
  let accepted = 0;
  let rejected = 0;
  const all = mutations();
  for (const t of all) {
    if (certainlyValidTarget(t)) {
      accepted++;
      assert.ok(zodTarget(t), `the quick check accepts what zod rejects: ${describe(t)}`);
    } else rejected++;
  }
  // both answers occur: the check is neither "always no" (no gain) nor "always yes"
  assert.ok(accepted > 200, `accepted ${accepted} of ${all.length}`);
  assert.ok(rejected > 200, `rejected ${rejected} of ${all.length}`);
});

test('the typical targets are accepted without zod, and zod agrees', () => {
  for (const t of bases()) {
    assert.ok(certainlyValidTarget(t), describe(t));
    assert.ok(zodTarget(t), describe(t));
  }
});

test("define*'s lazy site is accepted without formatting a stack; a malformed site value is left to zod", () => {
  const t = defineTarget({ name: 'a', rule: 'rules/a.ts', outputs: ['o'] });
  const g = defineGate({ name: 'g', rule: 'rules/g.ts', outputs: { report: 'r.json' }, report: 'report' });
  let reads = 0;
  const d = Object.getOwnPropertyDescriptor(t, 'site')!;
  Object.defineProperty(t, 'site', {
    ...d,
    get() {
      reads++;
      return d.get!.call(t);
    },
  });
  assert.ok(certainlyValidTarget(t));
  assert.ok(certainlyValidTarget(g));
  assert.equal(reads, 0);
  const bad = { name: 'a', rule: 'r', outputs: ['o'], site: { file: 'f', line: 'x', col: 1 } };
  assert.equal(certainlyValidTarget(bad), false);
  assert.equal(zodTarget(bad), false);
  // an enumerable accessor is not define*'s
  const acc = Object.defineProperty({ name: 'a', rule: 'r', outputs: ['o'] }, 'site', {
    get: () => undefined,
    enumerable: true,
  });
  assert.equal(certainlyValidTarget(acc), false);
});

test('every pipeline the quick check accepts (its own fields), zod accepts', () => {
  const base = { defaultTargets: ['a'], manifestDir: 'reports/build', targets: [] as unknown[] };
  const fields = [
    'profiles',
    'defaultProfile',
    'manifestDir',
    'defaultTargets',
    'externalRoots',
    'cacheMaxSize',
    'freeFormConfig',
    'name',
    'historyKeep',
    'targets',
    'site',
    'commands',
    'executors',
    'remoteCache',
    'sync',
    'report',
    'other',
  ];
  let accepted = 0;
  for (const f of fields) {
    for (const v of [...POOL, ['dev', 'prod'], 'dev', '10G', 1e9]) {
      for (const p of [
        { ...base, [f]: v },
        { ...base, profiles: ['dev'], [f]: v },
      ]) {
        if (!certainlyValidPipeline(p)) continue;
        accepted++;
        assert.ok(pipelineSchema.safeParse(p).success, `the quick check accepts what zod rejects: ${describe(p)}`);
      }
    }
  }
  assert.ok(accepted > 50, `accepted ${accepted}`);
  const decl = definePipeline({
    profiles: ['dev', 'prod'],
    defaultProfile: 'dev',
    historyKeep: 5,
    cacheMaxSize: '10G',
    targets: [defineTarget({ name: 'a', rule: 'rules/a.ts', outputs: ['o'] })],
  });
  assert.ok(certainlyValidDeclaration(decl));
  assert.equal(certainlyValidDeclaration({ ...decl, targets: [{ name: 'a', rule: 'r' }] }), false);
  assert.equal(certainlyValidDeclaration({ ...decl, remoteCache: { url: 'https://c' } }), false);
});

function describe(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  } catch {
    return String(v);
  }
}
