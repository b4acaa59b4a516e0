// The no-op's fast path in decide(): a fresh fingerprint that is the recorded one field for field
// (sameJson) is up to date without serialising and hashing it again. sameJson must never say "same"
// where the JSON texts (and so the keys) would differ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type FingerprintParts,
  buildFingerprint,
  matchesRecord,
  sameJson,
} from '../../packages/engine/src/rebuild/decide.ts';
import type { Fingerprint } from '../../packages/engine/src/hash/fingerprint.ts';

test('sameJson says "same" exactly when JSON.stringify would print the same text, key order included', () => {
  const cases: [unknown, unknown][] = [
    [
      { a: 1, b: [1, 2, { c: 'x' }] },
      { a: 1, b: [1, 2, { c: 'x' }] },
    ],
    [
      { a: 1, b: 2 },
      { b: 2, a: 1 },
    ],
    [{ a: 1 }, { a: 1, b: 2 }],
    [
      [1, 2],
      [1, 2, 3],
    ],
    [[1, 2], { 0: 1, 1: 2 }],
    [{ a: null }, { a: null }],
    [{ a: null }, { a: 0 }],
    [{ a: '1' }, { a: 1 }],
    [{ a: true }, { a: 1 }],
    [{ inputs: { src: { 'src/a.txt': 'aa' } } }, { inputs: { src: { 'src/a.txt': 'ab' } } }],
    ['x', 'x'],
    [0, -0],
  ];
  for (const [a, b] of cases) {
    assert.equal(
      sameJson(a, b),
      JSON.stringify(a) === JSON.stringify(b),
      `${JSON.stringify(a)} vs ${JSON.stringify(b)}`,
    );
  }
});

test('sameJson never says "same" for values JSON would print alike but it cannot vouch for', () => {
  // NaN prints as null, an undefined property vanishes: "not same" here only costs the full key.
  assert.equal(sameJson({ a: Number.NaN }, { a: null }), false);
  assert.equal(sameJson({ a: undefined, b: 1 }, { b: 1 }), false);
});

// matchesRecord: the no-op compares the gathered parts with the recorded fingerprint without
// building the fresh one. It must answer exactly what sameJson(buildFingerprint(parts), recorded)
// answers, for every recorded fingerprint as it comes back from the trace (JSON.parse).
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomParts(r: () => number): FingerprintParts {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const pathPool = ['src/a.txt', 'out/t_1.txt', '10', '2', '__proto__', 'data/x y.json', 'constructor', 'b'];
  const groups: FingerprintParts['groups'] = [];
  const nGroups = Math.floor(r() * 3);
  for (let g = 0; g < nGroups; g++) {
    const paths = [...new Set(Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(pathPool)))];
    groups.push({
      group: pick(['src', 'src', 'cfg', '0', '__proto__']),
      paths,
      hashes: paths.map(() => (r() < 0.1 ? null : pick(['aa', 'bb']))),
    });
  }
  return {
    base: {
      format: 2,
      rule: pick(['rules/a.ts', 'rules/b.ts']),
      code: r() < 0.5 ? { 'rules/a.ts': 'c1' } : { 'rules/a.ts': 'c1', 'lib/x.ts': 'c2' },
      args: r() < 0.5 ? {} : { n: pick([1, 2]) },
      params: r() < 0.5 ? {} : { 'a.b': pick([1, 'x', null]) },
      env: r() < 0.7 ? {} : { HOME: pick([null, 'h']) },
      profile: pick(['dev', 'prod']),
      outputs: [pick(['out/a.txt', 'out/b/'])],
    },
    groups,
  };
}

/** A recorded fingerprint near the fresh one: a copy, or a copy with one thing changed or reordered. */
function mutate(fp: Fingerprint, r: () => number): unknown {
  const o = JSON.parse(JSON.stringify(fp)) as Record<string, unknown>;
  const inputs = o.inputs as Record<string, Record<string, string>>;
  const groupNames = Object.keys(inputs);
  switch (Math.floor(r() * 10)) {
    case 0:
      return o;
    case 1: {
      // fields in another order
      const { format, ...rest } = o;
      return { ...rest, format };
    }
    case 2:
      o.profile = o.profile === 'dev' ? 'prod' : 'dev';
      return o;
    case 3:
      if (groupNames.length) {
        const m = inputs[groupNames[0]!]!;
        const ks = Object.keys(m);
        if (ks.length) m[ks[0]!] = 'changed';
      }
      return o;
    case 4:
      if (groupNames.length) {
        // the paths of a group in reverse order
        const m = inputs[groupNames[0]!]!;
        inputs[groupNames[0]!] = Object.fromEntries(Object.entries(m).reverse());
      }
      return o;
    case 5:
      if (groupNames.length) inputs[groupNames[0]!]!['src/extra.txt'] = 'aa';
      return o;
    case 6:
      if (groupNames.length) delete inputs[groupNames[groupNames.length - 1]!];
      return o;
    case 7:
      o.code = { ...(o.code as object), 'lib/new.ts': 'c3' };
      return o;
    case 8:
      o.outputs = [];
      return o;
    default:
      o.inputs = Object.fromEntries(Object.entries(inputs).reverse());
      return o;
  }
}

const oddName = (k: string): boolean => k === '__proto__' || /^(0|[1-9][0-9]*)$/.test(k);

test('matchesRecord never says "same" where sameJson of the built fingerprint says not, and agrees with it wherever no name is __proto__ or integer-like and groups are distinct, as declared (4 000 random pairs)', () => {
  const r = rng(12);
  let matched = 0;
  let plain = 0;
  for (let i = 0; i < 4000; i++) {
    const parts = randomParts(r);
    const built = buildFingerprint(parts);
    const recorded = JSON.parse(JSON.stringify(mutate(built, r))) as Fingerprint;
    const want = sameJson(built, recorded);
    const got = matchesRecord(parts, recorded);
    const what = `${JSON.stringify(parts)} vs ${JSON.stringify(recorded)}`;
    if (got) assert.ok(want, `matchesRecord said "same" wrongly: ${what}`);
    const names = parts.groups.map((g) => g.group);
    if (new Set(names).size === names.length && !parts.groups.some((g) => oddName(g.group) || g.paths.some(oddName))) {
      plain++;
      if (want) matched++;
      assert.equal(got, want, what);
    }
  }
  // both answers occur often enough for the comparison to mean something
  assert.ok(plain > 1000 && matched > 200 && matched < plain - 200, `matched ${matched} of ${plain}`);
});

test('matchesRecord: a recorded path map holding __proto__ or integer-like paths is never taken for a match it is not', () => {
  const parts: FingerprintParts = {
    base: {
      format: 2,
      rule: 'r.ts',
      code: {},
      args: {},
      params: {},
      env: {},
      profile: 'dev',
      outputs: ['o'],
    },
    groups: [{ group: 'src', paths: ['__proto__', 'a'], hashes: ['aa', 'bb'] }],
  };
  // JSON.parse makes __proto__ an own key; an assignment (buildFingerprint) makes none.
  const recorded = JSON.parse(
    '{"format":2,"rule":"r.ts","code":{},"args":{},"params":{},"env":{},"profile":"dev","inputs":{"src":{"__proto__":"aa","a":"bb"}},"outputs":["o"]}',
  ) as Fingerprint;
  assert.equal(sameJson(buildFingerprint(parts), recorded), false);
  assert.equal(matchesRecord(parts, recorded), false);
  // integer-like keys enumerate first: paths ['b', '1'] build a map that prints {"1":…,"b":…}
  const ints: FingerprintParts = { ...parts, groups: [{ group: 'src', paths: ['b', '1'], hashes: ['x', 'y'] }] };
  const rec2 = JSON.parse(JSON.stringify(buildFingerprint(ints))) as Fingerprint;
  assert.equal(sameJson(buildFingerprint(ints), rec2), true);
  assert.equal(matchesRecord(ints, rec2), false); // left to the full comparison, never a wrong "same"
});
