// lib/stats correlations and top-k overlap: Pearson, Spearman (average ranks), Kendall τ-b
// (Knight's O(n log n) method), point-biserial, top-k% overlap, against published examples,
// hand computations and O(n²) / enumeration brute force on seeded random data with ties.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  kendallTauB,
  pearson,
  pointBiserial,
  rankAverage,
  rankCorrelations,
  spearman,
  topCount,
  topKOverlap,
} from '../../lib/stats/index.ts';

const close = (a: number, b: number, tol = 1e-12): void =>
  assert.ok(Math.abs(a - b) <= tol, `${a} is not within ${tol} of ${b}`);

/** τ-b by definition: Σ sign(Δx)·sign(Δy) over all pairs / √((n₀ − n₁)(n₀ − n₂)). */
function kendallBrute(x: readonly number[], y: readonly number[]): number {
  let s = 0;
  let tx = 0;
  let ty = 0;
  const n = x.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      s += Math.sign(x[i]! - x[j]!) * Math.sign(y[i]! - y[j]!);
      if (x[i] === x[j]) tx++;
      if (y[i] === y[j]) ty++;
    }
  }
  const n0 = (n * (n - 1)) / 2;
  return s / Math.sqrt((n0 - tx) * (n0 - ty));
}

/** Integer-valued data with many ties in both variables. */
function tiedSample(seed: number, n: number): { x: number[]; y: number[] } {
  const rng = createRng(seed);
  const x = Array.from({ length: n }, () => rng.int(8));
  const y = x.map((v) => v + rng.int(6) - rng.int(6));
  return { x, y };
}

// Hollander & Wolfe (1973), p. 187f., the example of R's ?cor.test (no ties):
// R gives tau = 0.4444444 (= 16/36, 26 concordant and 10 discordant of 36 pairs) and
// rho = 0.6 (Σd² = 48, 1 − 6·48/(9·80) = 0.6).
const HW_X = [44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1];
const HW_Y = [2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8];

test('Spearman and Kendall reproduce the Hollander & Wolfe example of R cor.test', () => {
  close(spearman(HW_X, HW_Y), 0.6);
  close(kendallTauB(HW_X, HW_Y), 4 / 9);
});

test('Spearman with a tie in y matches the scipy.stats.spearmanr documentation example', () => {
  // x = 1..5, y = 5 6 7 8 7 → y ranks 1 2 3.5 5 3.5; centred: (−2 −1 0 1 2)·(−2 −1 .5 2 .5) = 8,
  // Σdx² = 10, Σdy² = 9.5, ρ = 8/√95 = 0.8207826816681233 (the value scipy documents).
  close(spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]), 8 / Math.sqrt(95));
  close(spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]), 0.8207826816681233);
});

test('Kendall τ-b with ties in both variables matches the scipy.stats.kendalltau documentation example', () => {
  // x = 12 2 1 12 2, y = 1 4 7 1 0: 2 concordant, 6 discordant of n₀ = 10 pairs; x ties n₁ = 2,
  // y ties n₂ = 1, joint tie n₃ = 1; τ-b = (2 − 6)/√((10 − 2)(10 − 1)) = −4/√72 = −0.47140452079103173.
  close(kendallTauB([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]), -4 / Math.sqrt(72));
  close(kendallTauB([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]), -0.4714045207910317);
});

test('Kendall τ-b by merge sort equals the O(n²) definition on tied random data of many sizes', () => {
  for (let seed = 1; seed <= 60; seed++) {
    const { x, y } = tiedSample(seed, 2 + ((seed * 7) % 90));
    const fast = kendallTauB(x, y);
    const slow = kendallBrute(x, y);
    if (Number.isNaN(slow)) assert.ok(Number.isNaN(fast));
    else close(fast, slow, 1e-12);
  }
  const { x, y } = tiedSample(99, 3000);
  close(kendallTauB(x, y), kendallBrute(x, y), 1e-12);
});

test('Kendall τ-b is 1 for identical rankings, −1 for reversed ones, and symmetric in its arguments', () => {
  const { x, y } = tiedSample(7, 200);
  assert.equal(kendallTauB(x, x), 1);
  assert.equal(
    kendallTauB(
      x,
      x.map((v) => -v),
    ),
    -1,
  );
  close(kendallTauB(x, y), kendallTauB(y, x), 1e-15);
});

test('Kendall τ-b runs on 30 000 items with ties in O(n log n)', () => {
  const { x, y } = tiedSample(3, 30_000);
  const t0 = performance.now();
  const tau = kendallTauB(x, y);
  assert.ok(performance.now() - t0 < 2000, 'far below the O(n²) time');
  assert.ok(tau > 0.3 && tau < 1);
});

test('Spearman and Kendall from one shared sort equal the separate functions, with or without precomputed y ranks', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const { x, y } = tiedSample(200 + seed, 5 + seed * 13);
    const both = rankCorrelations(x, y);
    assert.equal(both.spearman, spearman(x, y));
    assert.equal(both.kendall, kendallTauB(x, y));
    assert.deepEqual(rankCorrelations(x, y, rankAverage(y)), both);
  }
  assert.throws(() => rankCorrelations([1, 2], [1, 2], [1]), /2 values but 1 ranks/);
});

test('Spearman equals Pearson on the average ranks and ignores monotone transforms', () => {
  const { x, y } = tiedSample(5, 300);
  close(
    spearman(x, y),
    spearman(
      x.map((v) => Math.exp(v)),
      y.map((v) => v ** 3),
    ),
    1e-12,
  );
});

test('Pearson matches the hand computation and is undefined (NaN) for a constant variable', () => {
  // x = 1 2 3, y = 2 4 7: centred (−1 0 1)·(−7/3 −1/3 8/3) = 5, Σdx² = 2, Σdy² = 38/3 → 5/√(76/3).
  close(pearson([1, 2, 3], [2, 4, 7]), 5 / Math.sqrt(76 / 3));
  assert.ok(Number.isNaN(pearson([1, 1, 1], [1, 2, 3])));
  assert.ok(Number.isNaN(spearman([4], [2])));
  assert.ok(Number.isNaN(kendallTauB([1, 1], [1, 2])));
});

test('point-biserial equals the hand value and Pearson with success coded 0/1', () => {
  // x = 1..6, success = 0 0 1 0 1 1: M₁ = 14/3, M₀ = 7/3, σ² = 35/12, √(n₁n₀/n²) = 1/2,
  // r_pb = (7/3)/√(35/12) · 1/2, so r_pb² = 7/15.
  const x = [1, 2, 3, 4, 5, 6];
  const s = [0, 0, 1, 0, 1, 1];
  close(pointBiserial(x, s), Math.sqrt(7 / 15));
  close(
    pointBiserial(
      x,
      s.map((v) => v === 1),
    ),
    Math.sqrt(7 / 15),
  );
  for (let seed = 1; seed <= 20; seed++) {
    const rng = createRng(seed);
    const xs = Array.from({ length: 50 }, () => rng.next());
    const ss = xs.map((v) => (rng.next() < v ? 1 : 0));
    close(pointBiserial(xs, ss), pearson(xs, ss), 1e-12);
  }
});

test('point-biserial is NaN when every item has the same success and refuses non-binary success', () => {
  assert.ok(Number.isNaN(pointBiserial([1, 2, 3], [1, 1, 1])));
  assert.throws(() => pointBiserial([1, 2], [0, 2]), /success 1 is 2; expected 0, 1, false or true/);
});

test('k for top-k% is ⌈p·n⌉ without floating-point overshoot', () => {
  assert.equal(topCount(0.07, 100), 7);
  assert.equal(topCount(0.1, 30_000), 3000);
  assert.equal(topCount(0.1, 245), 25);
  assert.equal(topCount(0.2, 245), 49);
  assert.equal(topCount(0.001, 10), 1);
  assert.throws(() => topCount(0, 10), /p must be in \(0, 1\]/);
});

test('top-k overlap without ties counts the shared items of the two top sets', () => {
  // k = 3: top by a = items {0, 1, 2}, top by b = items {2, 1, 3}; they share 2 → 2/3.
  const a = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1];
  const b = [1, 9, 10, 8, 7, 2, 3, 4, 5, 6];
  close(topKOverlap(a, b, 0.3), 2 / 3);
  assert.equal(topKOverlap(a, a, 0.3), 1);
  assert.equal(
    topKOverlap(
      a,
      a.map((v) => -v),
      0.5,
    ),
    0,
  );
});

test('top-k overlap shares ties at the cut-off out evenly instead of by item order', () => {
  // k = 2: a has three items tied at the top (each in with probability 2/3); b has item 0 above
  // the cut and items 1..3 tied at it (each in with 1/3). Expected shared: 2/3·1 + 2·(2/3·1/3) = 10/9.
  close(topKOverlap([5, 5, 5, 1], [5, 1, 1, 1], 0.5), 10 / 9 / 2);
  close(topKOverlap([5, 5, 5, 1], [5, 1, 1, 1], 0.25), 1 / 3);
});

/** P(item in top k) under uniformly random tie-breaking, by enumerating every order of the items. */
function membershipByEnumeration(s: readonly number[], k: number): number[] {
  const n = s.length;
  const counts = new Array<number>(n).fill(0);
  let orders = 0;
  const perm = s.map((_, i) => i);
  const visit = (m: number): void => {
    if (m === n) {
      orders++;
      const pos = new Array<number>(n);
      perm.forEach((item, p) => (pos[item] = p));
      const top = s
        .map((_, i) => i)
        .sort((i, j) => s[j]! - s[i]! || pos[i]! - pos[j]!)
        .slice(0, k);
      for (const i of top) counts[i]!++;
      return;
    }
    for (let i = m; i < n; i++) {
      [perm[m], perm[i]] = [perm[i]!, perm[m]!];
      visit(m + 1);
      [perm[m], perm[i]] = [perm[i]!, perm[m]!];
    }
  };
  visit(0);
  return counts.map((c) => c / orders);
}

test('top-k overlap equals the expected overlap over all random tie-breaks, by enumeration', () => {
  for (let seed = 1; seed <= 25; seed++) {
    const rng = createRng(seed);
    const n = 3 + rng.int(4);
    const a = Array.from({ length: n }, () => rng.int(3));
    const b = Array.from({ length: n }, () => rng.int(3));
    const p = 0.2 + 0.8 * rng.next();
    const k = topCount(p, n);
    const pa = membershipByEnumeration(a, k);
    const pb = membershipByEnumeration(b, k);
    close(topKOverlap(a, b, p), pa.reduce((s, v, i) => s + v * pb[i]!, 0) / k, 1e-12);
  }
});

test('top-k overlap does not depend on the order of the items', () => {
  const rng = createRng(11);
  const a = Array.from({ length: 200 }, () => rng.int(20));
  const b = a.map((v) => v + rng.int(10));
  const order = rng.shuffle(a.map((_, i) => i));
  close(
    topKOverlap(a, b, 0.1),
    topKOverlap(
      order.map((i) => a[i]!),
      order.map((i) => b[i]!),
      0.1,
    ),
    1e-12,
  );
});
