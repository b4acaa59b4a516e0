// Label leakage: the dimension that agrees most with success is found among the dimensions whose
// agreement is defined; a dimension with constant scores (NaN agreement) is skipped wherever it
// stands, and none defined gives null (the calibration reports the check n/a with the reason).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dimensionAgreement, worstDimension } from '../../lib/evaluation/leakage.ts';

const success = [1, 1, 1, 0, 0, 0, 1, 0];

test('a constant first dimension is skipped, and the worst defined dimension is found', () => {
  const agreement = {
    correctness: dimensionAgreement([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], success),
    reasoning: dimensionAgreement([0.9, 0.8, 0.7, 0.1, 0.2, 0.3, 0.6, 0.4], success),
    clarity: dimensionAgreement([0.9, 0.1, 0.7, 0.8, 0.2, 0.3, 0.6, 0.4], success),
  };
  assert.ok(Number.isNaN(agreement.correctness.balanced), 'constant scores: no threshold inside the range');
  assert.equal(agreement.reasoning.balanced, 1);
  assert.deepEqual(worstDimension(agreement), { dimension: 'reasoning', agreement: agreement.reasoning });
});

test('no dimension with a defined agreement gives null, not NaN', () => {
  assert.equal(worstDimension({ correctness: dimensionAgreement([0.2, 0.2, 0.2], [1, 0, 1]) }), null);
  assert.equal(worstDimension({ correctness: dimensionAgreement([0.1, 0.5, 0.9], [1, 1, 1]) }), null);
});
