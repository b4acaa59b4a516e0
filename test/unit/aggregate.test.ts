// K-sample aggregation (lib/scoring/aggregate.ts) and the per-stage stability check: median per
// dimension, population variance, item variance = the max over dimensions, unstable above the
// threshold with the configured weight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  aggregateSamples,
  median,
  populationVariance,
  stabilityCheck,
  unstableShare,
  DIMENSIONS,
  type DimScores,
} from '../../lib/scoring/index.ts';

const flat = (v: number, over: Partial<DimScores> = {}): DimScores => ({
  ...(Object.fromEntries(DIMENSIONS.map((d) => [d, v])) as DimScores),
  ...over,
});
const O = { unstableVariance: 0.08, unstableWeight: 0.5 };

test('the median of K samples is the middle value, and the mean of the two middle ones for even K', () => {
  assert.equal(median([0.9, 0.1, 0.5]), 0.5);
  assert.equal(median([1, 0, 0.2, 0.6]), 0.4);
  assert.equal(median([0.3]), 0.3);
});

test('variance is the population variance: sum of squared deviations over K', () => {
  // mean 0.5; deviations -0.5, 0, 0.5; (0.25 + 0 + 0.25) / 3
  assert.equal(populationVariance([0, 0.5, 1]), 0.5 / 3);
  assert.equal(populationVariance([0.25, 0.25, 0.25]), 0);
});

test('an item is unstable when its largest per-dimension variance exceeds the threshold, and weighs unstable_weight', () => {
  // reasoning: 0, 0.6, 0.6 → mean 0.4, variance (0.16 + 0.04 + 0.04) / 3 = 0.08: not above 0.08
  const edge = aggregateSamples(
    [flat(1, { reasoning: 0 }), flat(1, { reasoning: 0.6 }), flat(1, { reasoning: 0.6 })],
    O,
  );
  assert.equal(edge.variance.reasoning, 0.08);
  assert.equal(edge.itemVariance, 0.08);
  assert.equal(edge.unstable, false);
  assert.equal(edge.weight, 1);
  assert.equal(edge.median.reasoning, 0.6);
  // clarity: 0, 0.5, 1 → variance 0.1667 > 0.08
  const wide = aggregateSamples([flat(0.9, { clarity: 0 }), flat(0.9, { clarity: 0.5 }), flat(0.9, { clarity: 1 })], O);
  assert.equal(wide.worstDimension, 'clarity');
  assert.equal(wide.itemVariance, 0.166667);
  assert.equal(wide.unstable, true);
  assert.equal(wide.weight, 0.5);
  assert.deepEqual(wide.median, flat(0.9, { clarity: 0.5 }));
  assert.equal(wide.variance.correctness, 0);
});

test('the stability check counts unstable and failed items over all items against the threshold', () => {
  const records = [
    { status: 'scored' as const, unstable: false },
    { status: 'scored' as const, unstable: true },
    { status: 'failed' as const, unstable: false },
    { status: 'scored' as const, unstable: false },
  ];
  assert.equal(unstableShare(records), 0.5);
  const c = stabilityCheck(records, 0.1);
  assert.deepEqual(
    [c.name, c.value, c.op, c.threshold, c.pass, c.status],
    ['unstable_share', 0.5, '<=', 0.1, false, 'fail'],
  );
  assert.ok(c.hint);
  assert.equal(stabilityCheck(records.slice(3), 0.1).pass, true);
  assert.equal(unstableShare([]), 0);
});
