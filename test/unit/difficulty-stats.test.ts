// The difficulty report's summaries and histograms (lib/difficulty/stats.ts) against their plain
// definitions: summariseSorted (the values sorted) for the quantiles and the mean, a Map for the
// bins. summarise() counts small-range integers instead of sorting, and histogram() counts the low
// bins in an array: both must give exactly the definition's numbers, on every kind of input; and
// one summary is checked against numbers worked out by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { histogram, summarise, summariseSorted } from '../../lib/difficulty/stats.ts';

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

function referenceHistogram(values: readonly (number | null)[], width: number) {
  const counts = new Map<number, number>();
  for (const x of values) {
    if (x === null) continue;
    const k = Math.floor(x / width + 1e-9);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const bins = [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([k, count]) => ({ from: round4(k * width), to: round4((k + 1) * width), count }));
  return { bin_width: width, bins };
}

const rng = createRng(20261127);
const draw = (n: number, value: () => number, nulls = 0.1): (number | null)[] =>
  Array.from({ length: n }, () => (rng.next() < nulls ? null : value()));

const CASES: [string, (number | null)[], number][] = [
  ['no values', [], 1],
  ['only nulls', [null, null, null], 1],
  ['one value', [7], 1],
  ['counts (turns-like), with nulls', draw(3001, () => 1 + Math.floor(rng.next() * 9)), 1],
  ['Qwen3 lengths 76–2 702', draw(5000, () => 76 + Math.floor(rng.next() * 2627)), 100],
  ['negative and positive integers', draw(999, () => Math.floor(rng.next() * 41) - 20), 1],
  ['integers wider than the counted span', draw(777, () => Math.floor(rng.next() * 10_000_000)), 100],
  ['fractions (clue_overlap-like)', draw(4000, () => round4(rng.next())), 0.05],
  ['integers and one fraction', [...draw(500, () => Math.floor(rng.next() * 5)), 2.5], 1],
  ['bins past the array (values ≥ 1 024 widths)', draw(800, () => Math.floor(rng.next() * 5000)), 1],
  ['an even count (interpolated quantiles)', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1],
];

for (const [name, values, width] of CASES) {
  test(`summarise and histogram give the reference's numbers: ${name}`, () => {
    assert.deepEqual(summarise(values), summariseSorted(values));
    assert.deepEqual(histogram(values, width), referenceHistogram(values, width));
  });
}

test('summarise of integers gives the interpolated quantiles and the exact mean', () => {
  assert.deepEqual(summarise([10, null, 1, 2, 3, 4]), { n: 5, min: 1, p10: 1.4, p50: 3, p90: 7.6, max: 10, mean: 4 });
});
