// Bands and buckets: every band edge of configs/difficulty.yaml, bucketing by the mean band score
// (thirds of [0, 2]), dimensions that do not vote for a task, the need for clarification refused as
// a dimension (it is the separate axis), and the config schema refusing contradictory conditions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import YAML from 'yaml';
import {
  bandOf,
  bandsSchema,
  bucketOf,
  dimensionsSchema,
  meanBand,
  type Dimension,
} from '../../lib/difficulty/index.ts';
import { metrics } from '../fixtures/difficulty/scenarios.ts';

const config = (
  YAML.parse(readFileSync(join(import.meta.dirname, '../../configs/difficulty.yaml'), 'utf8')) as {
    difficulty: { bands: unknown; dimensions: unknown };
  }
).difficulty;
const bands = bandsSchema.parse(config.bands);
const dims = dimensionsSchema.parse(config.dimensions);
const band = (dim: Dimension, value: number | boolean, extra: object = {}) =>
  bandOf(bands, dim, metrics({ id: 'x', task: 'hotpotqa', [dim]: value, ...extra }));

test("each dimension's band edges follow the seeds' table", () => {
  const cases: [Dimension, number, string][] = [
    ['len_tokens', 199, 'easy'],
    ['len_tokens', 200, 'medium'],
    ['len_tokens', 600, 'medium'],
    ['len_tokens', 601, 'hard'],
    ['turns', 2, 'easy'],
    ['turns', 3, 'medium'],
    ['turns', 4, 'medium'],
    ['turns', 5, 'hard'],
    ['tool_hops', 1, 'easy'],
    ['tool_hops', 2, 'medium'],
    ['tool_hops', 3, 'medium'],
    ['tool_hops', 4, 'hard'],
    ['ops_numeric', 0, 'easy'],
    ['ops_numeric', 1, 'easy'],
    ['ops_numeric', 2, 'medium'],
    ['ops_numeric', 4, 'hard'],
    ['entities', 3, 'easy'],
    ['entities', 4, 'medium'],
    ['entities', 6, 'medium'],
    ['entities', 7, 'hard'],
    ['connector_density', 2.9999, 'easy'],
    ['connector_density', 3, 'medium'],
    ['connector_density', 6, 'medium'],
    ['connector_density', 6.0001, 'hard'],
    ['clue_overlap', 0.4001, 'easy'],
    ['clue_overlap', 0.4, 'medium'],
    ['clue_overlap', 0.2, 'medium'],
    ['clue_overlap', 0.1999, 'hard'],
    ['hops', 2, 'easy'],
    ['hops', 3, 'medium'],
    ['hops', 4, 'hard'],
    ['distractors', 0, 'easy'],
    ['distractors', 2, 'easy'],
    ['distractors', 7, 'medium'],
    ['distractors', 8, 'hard'],
  ];
  for (const [dim, value, expected] of cases) assert.equal(band(dim, value), expected, `${dim} ${value}`);
});

test('needs_clarification is refused as a difficulty dimension: it is the separate clarification axis', () => {
  const r = dimensionsSchema.safeParse({ gsm8k: ['hops', 'needs_clarification'] });
  assert.equal(r.success, false);
  assert.match(r.error!.issues[0]!.message, /separate clarification axis/);
  assert.equal(dimensionsSchema.safeParse({ gsm8k: ['hops', 'no_such_dim'] }).success, false);
  assert.equal('needs_clarification' in bands, false);
});

test('a null metric casts no vote', () => {
  assert.equal(bandOf(bands, 'clue_overlap', metrics({ id: 'g', task: 'gsm8k' })), null);
});

test('the bucket is the third of [0, 2] that holds the mean band score; 2/3 and 4/3 are medium; no votes is medium', () => {
  assert.equal(meanBand({ easy: 2, medium: 0, hard: 0 }), 'easy');
  assert.equal(meanBand({ easy: 1, medium: 1, hard: 0 }), 'easy'); // 0.5
  assert.equal(meanBand({ easy: 2, medium: 0, hard: 1 }), 'medium'); // 2/3
  assert.equal(meanBand({ easy: 1, medium: 0, hard: 1 }), 'medium'); // 1
  assert.equal(meanBand({ easy: 1, medium: 0, hard: 2 }), 'medium'); // 4/3
  assert.equal(meanBand({ easy: 0, medium: 1, hard: 1 }), 'hard'); // 1.5
  assert.equal(meanBand({ easy: 0, medium: 0, hard: 3 }), 'hard');
  assert.equal(meanBand({ easy: 0, medium: 0, hard: 0 }), 'medium');
});

test('a hotpotqa item votes with length, distractor paragraphs and clue overlap only: turns, entities and clarification never vote', () => {
  const m = metrics({
    id: 'h',
    task: 'hotpotqa',
    len_tokens: 1400,
    turns: 7,
    tool_hops: 2,
    hops: 2,
    distractors: 8,
    entities: 9,
    ops_numeric: 9,
    connector_density: 7.7,
    clue_overlap: 0.05,
    needs_clarification: true,
  });
  const r = bucketOf(bands, dims, m);
  assert.deepEqual(r.votes, { len_tokens: 'hard', distractors: 'hard', clue_overlap: 'hard' });
  assert.equal(r.bucket, 'hard');
  assert.equal(
    bucketOf(bands, dims, { ...m, needs_clarification: false, turns: 2 }).bucket,
    'hard',
    'the need for clarification changes nothing',
  );
  assert.equal(
    bucketOf(bands, dims, { ...m, clue_overlap: 0.9 }).bucket,
    'medium',
    'a quoted supporting sentence: 4/3',
  );
  assert.equal(
    bucketOf(bands, dims, { ...m, len_tokens: 350, distractors: 0, clue_overlap: 0.9 }).bucket,
    'easy',
    'gold paragraphs and a quoted sentence',
  );
});

test('a gsm8k item votes with reasoning steps and arithmetic; a strategyqa item with decomposition steps and clue overlap', () => {
  const g = bucketOf(bands, dims, metrics({ id: 'g', task: 'gsm8k', hops: 5, ops_numeric: 6, len_tokens: 120 }));
  assert.deepEqual(g.votes, { hops: 'hard', ops_numeric: 'hard' });
  assert.equal(g.bucket, 'hard');
  assert.equal(bucketOf(bands, dims, metrics({ id: 'g2', task: 'gsm8k', hops: 2, ops_numeric: 3 })).bucket, 'easy');
  const s = bucketOf(bands, dims, metrics({ id: 's', task: 'strategyqa', hops: 3, clue_overlap: 0.1 }));
  assert.deepEqual(s.votes, { hops: 'medium', clue_overlap: 'hard' });
  assert.equal(s.bucket, 'hard');
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
