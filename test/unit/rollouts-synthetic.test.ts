// The synthetic rollout source (lib/rollouts/synthetic.ts) over fixture scenarios built from the
// raw datasets: declared error-mode rates are met among eligible candidates, every record says
// it is synthetic, and the output is a pure function of scenarios, seed and rates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  ERROR_MODES,
  buildRollout,
  eligible,
  judgeSuccess,
  rolloutSchema,
  syntheticRollout,
  syntheticRollouts,
  wrongAnswer,
} from '../../lib/rollouts/index.ts';
import { RATES, fixtureScenarios, toJsonlText } from '../helpers/scoring-fixtures.ts';

const OPTS = { seed: 11, candidates: 4, policy: 'reference-perturbed-v1', rates: RATES };

test('synthetic rollouts hit each declared error-mode rate among eligible candidates, within 4 standard errors', async () => {
  const scenarios = await fixtureScenarios(150);
  const rollouts = syntheticRollouts(scenarios, OPTS);
  assert.equal(rollouts.length, scenarios.length * 4);
  for (const mode of ERROR_MODES) {
    const pool = rollouts.filter((_, i) => eligible(mode, scenarios[Math.floor(i / 4)]!));
    assert.ok(pool.length >= 300, `${mode}: ${pool.length} eligible candidates`);
    const share = pool.filter((r) => r.error_modes.includes(mode)).length / pool.length;
    const se = Math.sqrt((RATES[mode] * (1 - RATES[mode])) / pool.length);
    assert.ok(
      Math.abs(share - RATES[mode]) <= 4 * se,
      `${mode}: share ${share.toFixed(3)} vs rate ${RATES[mode]} (n ${pool.length})`,
    );
  }
  for (let i = 0; i < rollouts.length; i++) {
    const r = rollouts[i]!;
    for (const m of r.error_modes)
      assert.ok(eligible(m, scenarios[Math.floor(i / 4)]!), `${r.rollout_id}: ${m} applied to an ineligible scenario`);
  }
});

test('a rate of 0 never applies a mode and a rate of 1 applies it to every eligible candidate', async () => {
  const scenarios = await fixtureScenarios(20);
  const none = syntheticRollouts(scenarios, { ...OPTS, rates: { ...RATES, wrong_answer: 0, verbosity: 1 } });
  assert.ok(none.every((r) => !r.error_modes.includes('wrong_answer') && r.error_modes.includes('verbosity')));
  assert.ok(none.every((r) => r.success));
});

test('every synthetic record says source synthetic, validates against the rollout schema, and its success matches its answer', async () => {
  const scenarios = await fixtureScenarios(40);
  for (const r of syntheticRollouts(scenarios, OPTS)) {
    assert.equal(r.source, 'synthetic');
    assert.equal(r.policy, 'reference-perturbed-v1');
    assert.ok(rolloutSchema.safeParse(r).success, r.rollout_id);
    assert.equal(
      r.success,
      !r.error_modes.includes('wrong_answer'),
      `${r.rollout_id}: only wrong_answer changes success`,
    );
    assert.equal(r.success, judgeSuccess(r.task, r.trajectory.final_answer, r.gold_answer).success);
    assert.equal(r.turns, r.clarifications + 1);
  }
});

test('each error mode changes the trajectory the way it says', async () => {
  const scenarios = await fixtureScenarios(30);
  const only = (mode: (typeof ERROR_MODES)[number]) => ({
    ...OPTS,
    rates: {
      wrong_answer: 0,
      missing_tool_call: 0,
      unnecessary_clarification: 0,
      skipped_clarification: 0,
      verbosity: 0,
      [mode]: 1,
    },
  });
  for (const s of scenarios) {
    const clean = buildRollout(s, s.reference, {
      source: 'synthetic',
      policy: 'p',
      candidate_index: 0,
      error_modes: [],
    });
    if (eligible('missing_tool_call', s))
      assert.equal(syntheticRollout(s, 0, only('missing_tool_call')).tool_calls, clean.tool_calls - 1);
    if (eligible('unnecessary_clarification', s))
      assert.equal(syntheticRollout(s, 0, only('unnecessary_clarification')).clarifications, 1);
    if (eligible('skipped_clarification', s))
      assert.equal(syntheticRollout(s, 0, only('skipped_clarification')).clarifications, 0);
    assert.ok(syntheticRollout(s, 0, only('verbosity')).words > clean.words);
    assert.equal(syntheticRollout(s, 0, only('wrong_answer')).success, false);
  }
});

test('a wrong answer is plausible for its task and always fails the task metric', async () => {
  const scenarios = await fixtureScenarios(30);
  for (const s of scenarios) {
    const a = wrongAnswer(s, createRng(3));
    assert.equal(judgeSuccess(s.task, a, s.gold_answer).success, false, `${s.id}: ${a}`);
    if (s.task === 'strategyqa') assert.match(a, /^(yes|no)$/);
    if (s.task === 'gsm8k') assert.match(a, /^-?\d+(\.\d+)?$/);
  }
});

test('synthetic rollouts are deterministic and a candidate does not depend on the other scenarios', async () => {
  const scenarios = await fixtureScenarios(30);
  const a = toJsonlText(syntheticRollouts(scenarios, OPTS));
  const b = toJsonlText(syntheticRollouts(scenarios, OPTS));
  assert.equal(a, b);
  const reversed = syntheticRollouts([...scenarios].reverse(), OPTS);
  const byId = new Map(reversed.map((r) => [r.rollout_id, JSON.stringify(r)]));
  for (const r of syntheticRollouts(scenarios, OPTS)) assert.equal(byId.get(r.rollout_id), JSON.stringify(r));
  assert.notEqual(
    toJsonlText(syntheticRollouts(scenarios, { ...OPTS, seed: 12 })),
    a,
    'another seed draws other perturbations',
  );
});

test('a balanced-pool scenario carries its difficulty bucket into its rollouts, and a shadow scenario gives null', async () => {
  const [s] = await fixtureScenarios(1);
  assert.equal(syntheticRollout(s!, 0, OPTS).difficulty, null);
  assert.equal(syntheticRollout({ ...s!, difficulty: 'hard' }, 0, OPTS).difficulty, 'hard');
});
