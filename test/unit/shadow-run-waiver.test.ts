// shadow_run's agreement checks outside prod: an inconclusive verdict (estimate clears the bound,
// the interval's lower bound does not) is waived visibly with its sample-size hint; prod fails it;
// a verdict of fail and every success check stay as they are in every profile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatePasses } from '../../packages/engine/src/api/index.ts';
import { waiveInconclusiveAgreement } from '../../lib/evaluation/shadow-run.ts';
import { intervalCheck } from '../../lib/stats/decisions.ts';

const iv = (lo: number, hi: number) => ({ lo, hi, median: (lo + hi) / 2, level: 0.95 });
const inconclusive = intervalCheck(
  'spearman_old_new',
  { estimate: 0.77, interval: iv(0.71, 0.83), clusters: 245 },
  '>=',
  0.75,
  'reorders',
);
const failing = intervalCheck(
  'top10_overlap',
  { estimate: 0.6, interval: iv(0.4, 0.75), clusters: 245 },
  '>=',
  0.7,
  'picks others',
);
const successInconclusive = intervalCheck(
  'success_rank_corr',
  { estimate: 0.35, interval: iv(0.2, 0.5), clusters: 245 },
  '>=',
  0.3,
  'floor',
);

test('outside prod an inconclusive agreement check is waived with the number of scenarios that would settle it', () => {
  const c = waiveInconclusiveAgreement(inconclusive, 'dev');
  assert.equal(c.status, 'waived');
  assert.equal(c.pass, false);
  assert.match(
    c.waived!,
    /profile dev: inconclusive over the shadow set; about \d+ more shadow scenarios would settle it; prod fails it/,
  );
});

test('in prod the same inconclusive agreement check fails', () => {
  const c = waiveInconclusiveAgreement(inconclusive, 'prod');
  assert.equal(c.status, 'fail');
  assert.equal(gatePasses([c]), false);
});

test('an agreement check whose estimate misses the bound fails in every profile, and success checks are never waived', () => {
  assert.equal(waiveInconclusiveAgreement(failing, 'dev').status, 'fail');
  assert.equal(waiveInconclusiveAgreement(successInconclusive, 'dev').status, 'fail');
});
