// Text statistics (lib/text) on tiny corpora whose values are computed by hand in the comments.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Rng } from '../../packages/engine/src/api/index.ts';
import {
  corpusOf,
  countNgrams,
  countTokens,
  coverage,
  distinctN,
  distinctNBatched,
  klFromCounts,
  ngramKl,
  ngrams,
  ngramTotal,
  normalizeText,
  tokenize,
  typeTokenRatio,
  zipfSlope,
} from '../../lib/text/index.ts';

const close = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);
/** An rng whose shuffle keeps the order, so batches are consecutive documents. */
const keep: Rng = { next: () => 0, int: () => 0, shuffle: (xs) => xs.slice() };

// Corpus A: segments [a b a b] and [a c].
//   tokens a b a b a c: 6, types {a, b, c}: 3            → distinct-1 = TTR = 3/6 = 0.5
//   bigrams "a b" "b a" "a b" | "a c": 4, types 3        → distinct-2 = 3/4 = 0.75
//   (across the boundary "b a" would add a 5th bigram: 3/5 = 0.6 — it must not be counted)
const A = [
  ['a', 'b', 'a', 'b'],
  ['a', 'c'],
];

test('distinct-n is distinct n-grams over all n-grams, never across a segment boundary', () => {
  close(distinctN(A, 1), 0.5);
  close(distinctN(A, 2), 0.75);
  assert.equal(ngramTotal(A, 2), 4);
  assert.deepEqual([...countNgrams(A, 2)].sort(), [
    ['a b', 2],
    ['a c', 1],
    ['b a', 1],
  ]);
  close(distinctN([A.flat()], 2), 0.6);
});

test('an n-gram is each window of n consecutive tokens joined by one space; fewer than n tokens give none', () => {
  assert.deepEqual(ngrams(['a', 'b', 'c', 'd'], 3), ['a b c', 'b c d']);
  assert.deepEqual(ngrams(['a', 'b', 'c'], 1), ['a', 'b', 'c']);
  assert.deepEqual(ngrams(['a', 'b'], 2), ['a b']);
  assert.deepEqual(ngrams(['a', 'b'], 3), []);
  assert.deepEqual(ngrams([], 2), []);
});

test('countTokens is the number of tokenize() tokens, in ASCII and in any other text', () => {
  const cases: [string, number][] = [
    ["Don't stop-gap 3.5 times, a--b a-'b -x- y' 'z", 12],
    ['', 0],
    ['  \n\t', 0],
    ['naïve café-bar', 2],
    ['a-é', 1], // a joiner before a non-ASCII letter joins it
    ['Ｆｕｌｌ width', 2], // NFKC makes the full-width letters ASCII
    ['中文ab', 3],
    ['x\u2019s', 1],
  ];
  for (const [text, n] of cases) {
    assert.equal(tokenize(text).length, n, text);
    assert.equal(countTokens(text), n, text);
  }
  // Random texts: half over ASCII alone (letters, digits, joiners, spaces, punctuation, _, `, DEL, NUL
  // and other control characters: the one-pass count), half adding accented, full-width, CJK and ’.
  const asciiAlphabet = "aZ09'- .,\n_`\x7f\0\t\x01";
  const alphabet = `${asciiAlphabet}’é中Ｆ`;
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (let i = 0; i < 3000; i++) {
    const ascii = i % 2 === 0;
    let text = '';
    for (let k = next() % 24; k > 0; k--)
      text += ascii ? asciiAlphabet[next() % asciiAlphabet.length] : alphabet[next() % alphabet.length];
    if (ascii) assert.ok(/^[\x00-\x7f]*$/.test(text), 'an ASCII text');
    assert.equal(countTokens(text), tokenize(text).length, JSON.stringify(text));
  }
});

test('TTR is distinct tokens over tokens, and an empty corpus gives 0 rather than NaN', () => {
  close(typeTokenRatio(A), 0.5);
  assert.equal(distinctN([], 2), 0);
  assert.equal(distinctN([['solo']], 2), 0);
});

test('distinct-n per batch averages over batches of a fixed size, so repetition across batches does not count', () => {
  // docs x = [a b], x, y = [c d], y. Batches of 2 in order: {x, x} → 1 type / 2 bigrams = 0.5, {y, y} → 0.5.
  // In the order x y x y: {x, y} → 2/2 = 1, twice.
  const x = [['a', 'b']];
  const y = [['c', 'd']];
  const same = distinctNBatched([x, x, y, y], 2, 2, 10, keep);
  assert.deepEqual(same, { mean: 0.5, min: 0.5, max: 0.5, batches: 2, size: 2 });
  assert.equal(distinctNBatched([x, y, x, y], 2, 2, 10, keep).mean, 1);
  assert.equal(distinctNBatched([x, y, x, y], 2, 2, 1, keep).batches, 1, 'at most maxBatches');
  assert.equal(distinctNBatched([x, x, y], 2, 2, 10, keep).batches, 1, 'a partial batch is left out');
  assert.deepEqual(
    distinctNBatched([x], 2, 4, 10, keep),
    { mean: 1, min: 1, max: 1, batches: 1, size: 1 },
    'fewer documents than a batch: one short batch',
  );
});

test('KL(P‖Q) with add-α smoothing over the union vocabulary matches the hand computation', () => {
  // P = a a b, Q = a c, unigrams, α = 1. V = {a, b, c}, |V| = 3.
  //   p(a) = (2+1)/(3+3) = 1/2, p(b) = 2/6 = 1/3, p(c) = 1/6
  //   q(a) = (1+1)/(2+3) = 2/5, q(b) = 1/5,       q(c) = 2/5
  //   KL = 1/2·ln(5/4) + 1/3·ln(5/3) + 1/6·ln(5/12) = 0.111572 + 0.170275 − 0.145911 = 0.135936 nats
  close(ngramKl([['a', 'a', 'b']], [['a', 'c']], 1, 1), 0.1359355273534518);
  close(
    klFromCounts(
      new Map([
        ['a', 2],
        ['b', 1],
      ]),
      new Map([
        ['a', 1],
        ['c', 1],
      ]),
      1,
    ),
    0.1359355273534518,
  );
});

test('KL of a corpus against itself is 0, and against a different one is positive', () => {
  const p = corpusOf(['please solve this problem step by step', 'what is the answer']);
  assert.equal(ngramKl(p, p, 3, 1), 0);
  assert.ok(ngramKl(p, corpusOf(['answer the question']), 3, 1) > 0);
  assert.equal(ngramKl([], [], 3, 1), 0);
  assert.throws(() => ngramKl(p, p, 3, 0), /α must be > 0/);
});

test('Zipf slope is the least-squares slope of ln frequency on ln rank over the stated rank range', () => {
  // counts a 6, b 3, c 2: ln f = ln 6 − ln r exactly → slope −1.
  close(zipfSlope([['a', 'a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'c', 'c']], 1000)!, -1);
  // counts a 4, b 2, c 2 (the tie b, c ranked in code-unit order): ranks 1..2 → (ln 2 − ln 4)/ln 2 = −1;
  // ranks 1..3: x = (0, ln 2, ln 3), y = (ln 4, ln 2, ln 2) → slope = −0.670672.
  const B = [['a', 'a', 'a', 'a', 'c', 'c', 'b', 'b']];
  close(zipfSlope(B, 2)!, -1);
  close(zipfSlope(B, 3)!, -0.6706719891559408);
  assert.equal(zipfSlope([['only']], 1000), null, 'fewer than two ranks');
});

test('coverage counts the declared labels that occur, and lists the missing and the undeclared ones', () => {
  assert.deepEqual(coverage(['a', 'b', 'c'], ['a', 'a', 'd']), {
    declared: 3,
    count: 1,
    fraction: 1 / 3,
    missing: ['b', 'c'],
    unexpected: ['d'],
  });
});

test('normalisation for duplicates ignores case, punctuation and spacing', () => {
  assert.equal(normalizeText("Hello,  WORLD!\n don't"), "hello world don't");
  assert.equal(normalizeText("Hello world, don't."), normalizeText("hello WORLD don't"));
});
