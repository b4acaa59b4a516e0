// diffRuns: what changed between two recorded runs, as data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffRuns } from '../../packages/engine/src/report/run-diff.ts';
import type { RunRecord } from '../../packages/engine/src/state/run-history.ts';

function run(id: number, over: Partial<RunRecord>): RunRecord {
  return {
    id,
    at: `2026-01-0${id}T00:00:00.000Z`,
    ms: 1,
    exitCode: 0,
    command: 'rc1-build',
    profile: 'dev',
    git: { commit: null, dirty: null },
    counts: { ran: 0, restored: 0, upToDate: 0, failed: 0, gateFailed: 0, blocked: 0 },
    outcomes: {},
    trace: '',
    paramsHash: '',
    state: {},
    params: {},
    checks: {},
    metrics: {},
    ...over,
  };
}

test('a param holding a section is compared leaf by leaf, and a key only one run has shows as unset on the other side', () => {
  const a = run(1, { params: { ppo_eval: { seed: 1, thresholds: { kl: 1.5, gain: 5 } }, old: 3 } });
  const b = run(2, { params: { ppo_eval: { seed: 1, thresholds: { kl: 1.5, gain: 4 }, samples: 4 }, new: true } });
  assert.deepEqual(diffRuns(a, b).params, [
    { key: 'new', a: undefined, b: true },
    { key: 'old', a: 3, b: undefined },
    { key: 'ppo_eval.samples', a: undefined, b: 4 },
    { key: 'ppo_eval.thresholds.gain', a: 5, b: 4 },
  ]);
});

test('checks and metrics are side by side with numeric deltas; outputs list only the paths whose hash changed', () => {
  const check = (value: number, threshold: number) => ({
    name: 'acc',
    value,
    op: '>=' as const,
    threshold,
    pass: value >= threshold,
    status: (value >= threshold ? 'pass' : 'fail') as 'pass' | 'fail',
  });
  const a = run(1, {
    state: { t: { key: 'k1', outputs: { 'o/x': 'aa', 'o/y': 'bb' } } },
    checks: { g: [check(0.5, 0.6)] },
    metrics: { 'm.json': { loss: 0.25, steps: 10 } },
  });
  const b = run(2, {
    state: { t: { key: 'k2', outputs: { 'o/x': 'aa', 'o/y': 'cc' } } },
    checks: { g: [check(0.75, 0.6)] },
    metrics: { 'm.json': { loss: 0.125, steps: 10 } },
  });
  const d = diffRuns(a, b);
  assert.deepEqual(d.outputs, [{ target: 't', path: 'o/y', a: 'bb', b: 'cc' }]);
  assert.deepEqual(
    d.checks.map((c) => [c.check, c.a?.status, c.b?.status, c.delta, c.changed]),
    [['acc', 'fail', 'pass', 0.25, true]],
  );
  assert.deepEqual(
    d.metrics.map((m) => [m.key, m.delta, m.changed]),
    [
      ['loss', -0.125, true],
      ['steps', 0, false],
    ],
  );
});
