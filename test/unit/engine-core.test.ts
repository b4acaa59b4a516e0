// Unit tests for the engine's pure parts: canonical JSON, cycle detection, fingerprint diffs,
// the stat cache's racy-entry rule, the trace log's torn-tail repair, glob bases, and checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { canonicalJson, sortedCopy } from '../../packages/engine/src/util/canonical-json.ts';
import { findCycle } from '../../packages/engine/src/graph/find-cycle.ts';
import {
  type Fingerprint,
  diffFingerprints,
  fingerprintKey,
  formatReason,
} from '../../packages/engine/src/hash/fingerprint.ts';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';
import { TraceLog, type TargetRecord } from '../../packages/engine/src/state/trace-log.ts';
import { globBase } from '../../packages/engine/src/hash/glob-cache.ts';
import { check, createRng, gatePasses, notApplicable, waive } from '../../packages/engine/src/api/index.ts';
import { didYouMean } from '../../packages/engine/src/config/usage-error.ts';

const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-unit-'));

test('canonical JSON sorts keys at every level and drops undefined', () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: undefined } }),
    '{"a":{"d":[2,{"y":2,"z":1}]},"b":1}',
  );
});

test('findCycle returns the cycle as a path, or null for a DAG', () => {
  // a --> b --> c --> a ; d --> a
  const deps: Record<string, string[]> = { a: ['c'], b: ['a'], c: ['b'], d: ['a'] };
  assert.deepEqual(
    findCycle(['d', 'a', 'b', 'c'], (n) => deps[n]!),
    ['a', 'c', 'b', 'a'],
  );
  assert.equal(
    findCycle(['x', 'y'], (n) => (n === 'y' ? ['x'] : [])),
    null,
  );
});

const fp = (over: Partial<Fingerprint> = {}): Fingerprint => ({
  format: 2,
  rule: 'rules/r.ts',
  args: {},
  code: { 'rules/r.ts': 'a'.repeat(64) },
  params: { shadow: { n: 245, seed: 1 } },
  env: { K: null },
  profile: 'dev',
  inputs: { raw: { 'x.jsonl': 'b'.repeat(64) } },
  outputs: ['o.json'],
  ...over,
});

test('fingerprint diffs name each changed field with old and new values', () => {
  const old = fp();
  const cur = fp({
    params: { shadow: { n: 200, seed: 1 } },
    inputs: { raw: { 'x.jsonl': 'c'.repeat(64), 'y.jsonl': 'd'.repeat(64) } },
    env: { K: 'e'.repeat(64) },
  });
  assert.deepEqual(diffFingerprints(old, cur).map(formatReason), [
    'param shadow.n changed: 245 → 200',
    'env K changed (value not shown)',
    `input x.jsonl changed: ${'b'.repeat(12)} → ${'c'.repeat(12)}`,
    'input y.jsonl added (raw)',
  ]);
  assert.notEqual(fingerprintKey(old), fingerprintKey(cur));
  assert.equal(fingerprintKey(fp()), fingerprintKey(fp()));
});

test('param values are copied with sorted keys, so YAML key order never changes a key', () => {
  const a = fp({ params: { shadow: sortedCopy({ seed: 1, n: 245, mix: { b: 0.5, a: 0.5 } }) } });
  const b = fp({ params: { shadow: sortedCopy({ n: 245, mix: { a: 0.5, b: 0.5 }, seed: 1 }) } });
  assert.equal(fingerprintKey(a), fingerprintKey(b));
});

test('reordered inputs change the key and are explained as such', () => {
  const a = fp({ inputs: { raw: { 'x.jsonl': 'b'.repeat(64), 'y.jsonl': 'c'.repeat(64) } } });
  const b = fp({ inputs: { raw: { 'y.jsonl': 'c'.repeat(64), 'x.jsonl': 'b'.repeat(64) } } });
  assert.notEqual(fingerprintKey(a), fingerprintKey(b));
  assert.deepEqual(diffFingerprints(a, b).map(formatReason), [
    'inputs of raw reordered (the rule sees them in declared order)',
  ]);
});

test('the stat cache re-reads a file modified in the same tick (racy entry) and trusts old entries', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'f'), 'one');
  const cache = new StatCache(dir, path.join(dir, 'sc.json'));
  const h1 = cache.hash('f')!;
  // Same size, and force the same mtime: only the racy rule can catch this.
  const st = fs.statSync(path.join(dir, 'f'));
  fs.writeFileSync(path.join(dir, 'f'), 'two');
  fs.utimesSync(path.join(dir, 'f'), st.atime, st.mtime);
  const h2 = cache.hash('f')!;
  assert.notEqual(h1.sha256, h2.sha256, 'a just-written file is racy and re-hashed');
  // An old file (mtime well in the past) is trusted after one hash.
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(dir, 'f'), past, past);
  cache.hash('f');
  cache.save();
  const again = new StatCache(dir, path.join(dir, 'sc.json'));
  again.hash('f');
  assert.equal(again.counters.hashed, 0);
  assert.equal(again.counters.statHits, 1);
  assert.equal(again.hash('missing'), null);
});

const rec = (name: string, key: string): TargetRecord => ({
  name,
  key,
  fingerprint: fp(),
  outputs: [],
  result: 'ok',
  how: 'ran',
  ms: 1,
  at: 'now',
});

test('the trace log keeps the last record per target and cuts off a torn last line', () => {
  const dir = tmp();
  const file = path.join(dir, 'trace.log');
  const log = new TraceLog(file);
  log.repair();
  log.put(rec('a', 'k1'));
  log.put(rec('b', 'k2'));
  log.put(rec('a', 'k3'));
  log.close();
  fs.appendFileSync(file, JSON.stringify(rec('b', 'k4')).slice(0, 40)); // killed mid-write
  const back = new TraceLog(file);
  assert.equal(back.records.get('a')!.key, 'k3');
  assert.equal(back.records.get('b')!.key, 'k2');
  assert.ok(back.tornBytes > 0);
  back.repair();
  back.put(rec('c', 'k5'));
  back.close();
  const third = new TraceLog(file);
  assert.equal(third.records.get('c')!.key, 'k5');
  assert.equal(third.tornBytes, 0);
});

test('a trace log of another format version is reported and everything rebuilds', () => {
  const dir = tmp();
  const file = path.join(dir, 'trace.log');
  fs.writeFileSync(file, '{"format":0}\n' + JSON.stringify(rec('a', 'k')) + '\n');
  const log = new TraceLog(file);
  assert.equal(log.records.size, 0);
  assert.match(log.formatChange!, /rc1 state format v0 → v1; all targets will rebuild/);
});

test('globBase finds the static directory and the depth of a pattern', () => {
  assert.deepEqual(globBase('data/raw/**/*.jsonl'), { base: 'data/raw', depth: Infinity });
  assert.deepEqual(globBase('templates/pack_v2/*.json'), { base: 'templates/pack_v2', depth: 1 });
  assert.deepEqual(globBase('*.txt'), { base: '.', depth: 1 });
});

test('check compares value and threshold; NaN and non-numbers never pass; waived is visible', () => {
  assert.equal(check('x', 0.6, '>=', 0.6).pass, true);
  assert.equal(check('x', Number.NaN, '>=', 0.6).pass, false);
  assert.equal(check('x', '0.9', '>=', 0.6).pass, false);
  assert.equal(check('x', 0.5, 'in', [0.02, 0.05]).pass, false);
  const w = waive(check('live', 0, '>=', 1), 'profile dev');
  assert.equal(w.status, 'waived');
  assert.equal(w.waived, 'profile dev');
  assert.equal(w.pass, false, 'a waived check is never recorded as a pass');
});

test('a check that cannot apply is n/a with its reason, never a pass, and n/a checks alone do not make a gate pass', () => {
  const na = notApplicable(check('overclar_drop', Number.NaN, '>=', 0.2, 'raise alpha'), 'no rollout over-clarifies');
  assert.deepEqual(
    [na.status, na.pass, na.not_applicable, na.hint],
    ['n/a', false, 'no rollout over-clarifies', undefined],
  );
  const ok = check('turns', 0, '<=', 0);
  const bad = check('success', -2, '>=', -1);
  assert.equal(gatePasses([ok, na]), true, 'a passing check with an n/a beside it');
  assert.equal(gatePasses([na]), false, 'only n/a: nothing was shown');
  assert.equal(gatePasses([]), false);
  assert.equal(gatePasses([ok, bad, na]), false);
  assert.equal(gatePasses([waive(bad, 'profile dev')]), true, 'a profile waiver still lets a dev gate pass, visibly');
});

test('the seeded PRNG gives the same sequence for the same seed', () => {
  const a = createRng(20250820);
  const b = createRng(20250820);
  const xs = Array.from({ length: 5 }, () => a.next());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b.next()),
  );
  assert.notDeepEqual(createRng(1).shuffle([1, 2, 3, 4, 5, 6, 7, 8]), createRng(2).shuffle([1, 2, 3, 4, 5, 6, 7, 8]));
});

test('did-you-mean suggests close names only', () => {
  assert.equal(didYouMean('shadow_st', ['shadow_set', 'seed_pool']), 'shadow_set');
  assert.equal(didYouMean('zzz', ['shadow_set', 'seed_pool']), undefined);
});
