// The no-op's fast path in decide(): a fresh fingerprint that is the recorded one field for field
// (sameJson) is up to date without serialising and hashing it again. sameJson must never say "same"
// where the JSON texts (and so the keys) would differ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sameJson } from '../../packages/engine/src/rebuild/decide.ts';

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
