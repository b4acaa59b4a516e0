// Bands and buckets: every band edge of configs/difficulty.yaml (the seeds' table), the
// needs_clarification "mixed" band, plurality bucketing with ties going to medium, dimensions that
// do not apply to a task, and the config schema refusing contradictory conditions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import YAML from 'yaml';
import { bandOf, bandsSchema, bucketOf, dimensionsSchema, plurality, type Dimension } from '../../src/difficulty/index.ts';
import { metrics } from '../fixtures/difficulty/scenarios.ts';

const config = (YAML.parse(readFileSync(join(import.meta.dirname, '../../configs/difficulty.yaml'), 'utf8')) as { difficulty: { bands: unknown; dimensions: unknown } }).difficulty;
const bands = bandsSchema.parse(config.bands);
const dims = dimensionsSchema.parse(config.dimensions);
const band = (dim: Dimension, value: number | boolean, extra: object = {}) =>
  bandOf(bands, dim, metrics({ id: 'x', task: 'hotpotqa', [dim]: value, ...extra }));

test('each dimension\'s band edges follow the seeds\' table', () => {
  const cases: [Dimension, number, string][] = [
    ['len_tokens', 199, 'easy'], ['len_tokens', 200, 'medium'], ['len_tokens', 600, 'medium'], ['len_tokens', 601, 'hard'],
    ['turns', 2, 'easy'], ['turns', 3, 'medium'], ['turns', 4, 'medium'], ['turns', 5, 'hard'],
    ['tool_hops', 1, 'easy'], ['tool_hops', 2, 'medium'], ['tool_hops', 3, 'medium'], ['tool_hops', 4, 'hard'],
    ['ops_numeric', 0, 'easy'], ['ops_numeric', 1, 'easy'], ['ops_numeric', 2, 'medium'], ['ops_numeric', 4, 'hard'],
    ['entities', 3, 'easy'], ['entities', 4, 'medium'], ['entities', 6, 'medium'], ['entities', 7, 'hard'],
    ['connector_density', 2.9999, 'easy'], ['connector_density', 3, 'medium'], ['connector_density', 6, 'medium'], ['connector_density', 6.0001, 'hard'],
    ['clue_overlap', 0.4001, 'easy'], ['clue_overlap', 0.4, 'medium'], ['clue_overlap', 0.2, 'medium'], ['clue_overlap', 0.1999, 'hard'],
  ];
  for (const [dim, value, expected] of cases) assert.equal(band(dim, value), expected, `${dim} ${value}`);
});

test('needs_clarification is easy when false, medium ("mixed") below 4 turns, hard from 4 turns', () => {
  assert.equal(band('needs_clarification', false, { turns: 6 }), 'easy');
  assert.equal(band('needs_clarification', true, { turns: 3 }), 'medium');
  assert.equal(band('needs_clarification', true, { turns: 4 }), 'hard');
});

test('a null metric casts no vote', () => {
  assert.equal(bandOf(bands, 'clue_overlap', metrics({ id: 'g', task: 'gsm8k' })), null);
});

test('the bucket is the band with strictly the most votes; any tie is medium', () => {
  assert.equal(plurality({ easy: 4, medium: 2, hard: 1 }), 'easy');
  assert.equal(plurality({ easy: 1, medium: 2, hard: 4 }), 'hard');
  assert.equal(plurality({ easy: 3, medium: 1, hard: 3 }), 'medium');
  assert.equal(plurality({ easy: 3, medium: 3, hard: 1 }), 'medium');
  assert.equal(plurality({ easy: 1, medium: 3, hard: 3 }), 'medium');
  assert.equal(plurality({ easy: 2, medium: 2, hard: 2 }), 'medium');
  assert.equal(plurality({ easy: 0, medium: 0, hard: 0 }), 'medium');
});

test('a hotpotqa item votes with its seven dimensions; ops_numeric is not one of them', () => {
  // hard: len_tokens, connector_density, clue_overlap; easy: turns, entities, needs_clarification; medium: tool_hops.
  const m = metrics({ id: 'h', task: 'hotpotqa', len_tokens: 1400, turns: 2, tool_hops: 2, entities: 2, ops_numeric: 9, connector_density: 7.7, clue_overlap: 0.05 });
  const r = bucketOf(bands, dims, m);
  assert.deepEqual(r.votes, { len_tokens: 'hard', turns: 'easy', tool_hops: 'medium', entities: 'easy', connector_density: 'hard', clue_overlap: 'hard', needs_clarification: 'easy' });
  assert.equal(r.bucket, 'medium', '3 hard, 3 easy, 1 medium is a tie');
  assert.equal(bucketOf(bands, dims, { ...m, entities: 8 }).bucket, 'hard');
});

test('a gsm8k item has no clue_overlap vote and a strategyqa item no tool_hops vote', () => {
  const g = bucketOf(bands, dims, metrics({ id: 'g', task: 'gsm8k', tool_hops: 5, ops_numeric: 6, entities: 8, connector_density: 7 }));
  assert.equal('clue_overlap' in g.votes, false);
  assert.equal(g.bucket, 'hard'); // 4 hard against 3 easy
  const s = bucketOf(bands, dims, metrics({ id: 's', task: 'strategyqa', tool_hops: 0 }));
  assert.equal('tool_hops' in s.votes, false);
  assert.equal('ops_numeric' in s.votes, true);
  assert.throws(() => bucketOf(bands, dims, metrics({ id: 'q', task: 'mmlu' })), /lists no dimensions for task 'mmlu'/);
});

test('band conditions must be well-formed, point in opposite directions and not overlap', () => {
  const ok = bandsSchema.safeParse(config.bands);
  assert.equal(ok.success, true);
  const withBand = (b: object) => bandsSchema.safeParse({ ...(config.bands as object), turns: b }).success;
  assert.equal(withBand({ easy: '<= 2', hard: '>= 5' }), true);
  assert.equal(withBand({ easy: '<= 5', hard: '>= 2' }), false, 'overlapping');
  assert.equal(withBand({ easy: '<= 3', hard: '>= 3' }), false, 'both hold at 3');
  assert.equal(withBand({ easy: '< 3', hard: '>= 3' }), true);
  assert.equal(withBand({ easy: '>= 2', hard: '>= 5' }), false, 'same direction');
  assert.equal(withBand({ easy: 'two', hard: '>= 5' }), false, 'not a condition');
  assert.equal(withBand({ easy: '<= 2', hard: '>= 5', medium: '3-4' }), false, 'unknown key');
  assert.equal(dimensionsSchema.safeParse({ gsm8k: ['turns', 'turns'] }).success, false);
  assert.equal(dimensionsSchema.safeParse({ gsm8k: ['difficulty'] }).success, false);
});
