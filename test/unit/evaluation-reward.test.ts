// The reward definitions (lib/evaluation/reward.ts) by hand-computed values, and the weights
// file's validation (weights-file.ts): each malformed file fails the check that names its fault.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  difficultyFactor,
  newReward,
  normalise,
  oldScore,
  overclarPenalty,
  weightsChecks,
} from '../../lib/evaluation/index.ts';
import { DIMENSIONS, type DimScores } from '../../lib/scoring/types.ts';

const medians: DimScores = {
  correctness: 1,
  reasoning: 0.8,
  clarity: 0.6,
  conciseness: 0.4,
  clarification: 0.2,
  tool_use: 0,
  format_safety: 1,
};
const equal = normalise(Object.fromEntries(DIMENSIONS.map((d) => [d, 1])));
const cal = {
  correctness: 0.5,
  reasoning: 0.3,
  clarity: 0.05,
  conciseness: 0.05,
  clarification: 0.05,
  tool_use: 0.05,
  format_safety: 0,
};
const item = (
  o: Partial<{ difficulty: 'easy' | 'medium' | 'hard' | null; needs_clarification: boolean; clarifications: number }>,
) => ({
  rollout_id: 'x#0',
  difficulty: 'medium' as const,
  needs_clarification: false,
  clarifications: 0,
  scores: medians,
  ...o,
});

test('the old score is the mean of the seven medians when the old weights are equal', () => {
  assert.ok(Math.abs(oldScore({ scores: medians }, equal) - 4 / 7) < 1e-12);
});

test('old weights are normalised by their sum, and a weight below 0 is refused', () => {
  const w = normalise({ ...Object.fromEntries(DIMENSIONS.map((d) => [d, 1])), correctness: 4 });
  assert.ok(Math.abs(w.correctness - 0.4) < 1e-12 && Math.abs(w.reasoning - 0.1) < 1e-12);
  assert.throws(() => normalise({ ...equal, clarity: -1 }), /clarity must be a number ≥ 0/);
});

test('the penalty is α·min(c, cap) on items that need no clarification and 0 on items that do', () => {
  const p = { alpha: 0.07, cap: 3 };
  assert.equal(overclarPenalty({ needs_clarification: false, clarifications: 0 }, p), 0);
  assert.ok(Math.abs(overclarPenalty({ needs_clarification: false, clarifications: 2 }, p) - 0.14) < 1e-12);
  assert.ok(Math.abs(overclarPenalty({ needs_clarification: false, clarifications: 5 }, p) - 0.21) < 1e-12);
  assert.equal(overclarPenalty({ needs_clarification: true, clarifications: 5 }, p), 0);
});

test('the difficulty factor is 1 + β for hard, 1 − β for easy and 1 for medium', () => {
  assert.equal(difficultyFactor('hard', 0.05), 1.05);
  assert.equal(difficultyFactor('easy', 0.05), 0.95);
  assert.equal(difficultyFactor('medium', 0.05), 1);
});

test('the new reward subtracts the penalty from the calibrated score, then applies the difficulty factor', () => {
  const base = 0.5 * 1 + 0.3 * 0.8 + 0.05 * (0.6 + 0.4 + 0.2 + 0);
  const s = { weights: cal, penalty: { alpha: 0.07, cap: 3 }, beta: 0.1 };
  assert.ok(Math.abs(newReward(item({ difficulty: 'hard', clarifications: 1 }), s) - (base - 0.07) * 1.1) < 1e-12);
  assert.ok(
    Math.abs(newReward(item({ difficulty: 'easy', needs_clarification: true, clarifications: 1 }), s) - base * 0.9) <
      1e-12,
  );
  assert.ok(Math.abs(newReward(item({ clarifications: 1 }), { ...s, penalty: null }) - base) < 1e-12);
});

test('a rollout without a difficulty bucket has no new reward', () => {
  assert.throws(
    () => newReward(item({ difficulty: null }), { weights: cal, penalty: null, beta: 0.05 }),
    /x#0: no difficulty bucket/,
  );
});

const o = { sumTolerance: 1e-6, maxWeight: 0.5 };
const file = (weights: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify({ version: 1, weights }));
const failing = (bytes: Buffer): string[] =>
  weightsChecks(bytes, o)
    .checks.filter((c) => !c.pass)
    .map((c) => c.name);

test('a valid weights file passes every check', () => {
  const v = weightsChecks(file(cal), o);
  assert.deepEqual(
    v.checks.filter((c) => !c.pass),
    [],
  );
  assert.equal(v.ok, true);
  assert.match(v.sha256, /^[0-9a-f]{64}$/);
});

test('a weights file with a negative weight fails weights.min and nothing else', () => {
  assert.deepEqual(failing(file({ ...cal, reasoning: 0.4, tool_use: -0.05 })), ['weights.min']);
});

test('a weights file summing to 0.98 fails weights.sum', () => {
  assert.deepEqual(failing(file({ ...cal, reasoning: 0.28 })), ['weights.sum']);
  const sum = weightsChecks(file({ ...cal, reasoning: 0.28 }), o).checks.find((c) => c.name === 'weights.sum')!;
  assert.ok(Math.abs((sum.value as number) - 0.98) < 1e-12);
});

test('a weights file with a 0.6 weight fails weights.max', () => {
  assert.deepEqual(failing(file({ ...cal, correctness: 0.6, reasoning: 0.2 })), ['weights.max']);
});

test('a missing or unknown dimension, a wrong version and a file that is not JSON each fail by name', () => {
  const { format_safety: _, ...six } = cal;
  assert.deepEqual(failing(file(six)), ['weights.missing_dimensions', 'weights.min', 'weights.sum', 'weights.max']);
  assert.deepEqual(failing(file({ ...cal, safety: 0 })), ['weights.unknown_dimensions']);
  assert.deepEqual(failing(Buffer.from(JSON.stringify({ version: 2, weights: cal }))), ['weights.version']);
  assert.equal(failing(Buffer.from('{ not json'))[0], 'weights.file_parses');
});
