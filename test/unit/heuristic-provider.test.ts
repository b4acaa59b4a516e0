// The heuristic provider (lib/scoring/heuristic-provider.ts), the rubric and the judge prompt:
// deterministic scores with provenance on every sample, samples that differ by sample index, the
// rubric's anchors implemented as rules, and a prompt that asks for the seven keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRollout, type ErrorMode, type Rollout } from '../../lib/rollouts/index.ts';
import {
  DIMENSIONS,
  PROMPT_VERSION,
  RUBRIC,
  RUBRIC_VERSION,
  createHeuristicProvider,
  heuristicBase,
  itemHash,
  renderJudgeMessages,
  type ScoreRequest,
} from '../../lib/scoring/index.ts';
import { fixtureRollouts, fixtureScenarios } from '../helpers/scoring-fixtures.ts';

const OPTS = { jitter: 0.03, ambiguityJitter: 0.4 };
const signal = new AbortController().signal;

function request(r: Rollout, sampleIndex: number): ScoreRequest {
  return {
    itemHash: itemHash(r),
    sampleIndex,
    rubricVersion: RUBRIC_VERSION,
    promptVersion: PROMPT_VERSION,
    temperature: 0.7,
    messages: renderJudgeMessages(r),
    rollout: r,
  };
}

test('every heuristic sample says provider heuristic, live false, billable false, untimed', async () => {
  const p = createHeuristicProvider(OPTS);
  assert.deepEqual([p.provider, p.live, p.billable], ['heuristic', false, false]);
  for (const r of await fixtureRollouts(5)) {
    const out = await p.score(request(r, 0), signal);
    assert.ok(out.ok);
    const s = out.sample;
    assert.deepEqual(
      [s.provider, s.model, s.live, s.billable, s.cached, s.latencyMs, s.promptTokens, s.completionTokens],
      ['heuristic', 'heuristic-v1', false, false, false, 0, 0, 0],
    );
    assert.deepEqual(Object.keys(s.scores), [...DIMENSIONS]);
    for (const d of DIMENSIONS) assert.ok(s.scores[d] >= 0 && s.scores[d] <= 1, `${d} ${s.scores[d]}`);
  }
});

test('heuristic scores are deterministic, and the K samples of an item differ by sample index', async () => {
  const p = createHeuristicProvider(OPTS);
  const again = createHeuristicProvider(OPTS);
  let differing = 0;
  for (const r of await fixtureRollouts(5)) {
    const [a0, a1, b0] = await Promise.all([
      p.score(request(r, 0), signal),
      p.score(request(r, 1), signal),
      again.score(request(r, 0), signal),
    ]);
    assert.ok(a0.ok && a1.ok && b0.ok);
    assert.deepEqual(a0.sample, b0.sample);
    if (JSON.stringify(a0.sample.scores) !== JSON.stringify(a1.sample.scores)) differing++;
  }
  assert.ok(differing > 0);
});

test('the heuristic follows the rubric anchors for each error mode', async () => {
  const scenarios = await fixtureScenarios(9);
  const with1 = (mode: ErrorMode) =>
    fixtureRollouts(9).then((rs) => rs.filter((r) => r.error_modes.length === 1 && r.error_modes[0] === mode));
  for (const s of scenarios) {
    const clean = heuristicBase(
      buildRollout(s, s.reference, { source: 'synthetic', policy: 'p', candidate_index: 0, error_modes: [] }),
    ).scores;
    for (const d of DIMENSIONS) assert.equal(clean[d], 1, `${s.id}: the reference trajectory scores 1 on ${d}`);
  }
  for (const r of await with1('wrong_answer')) {
    const b = heuristicBase(r).scores;
    assert.ok(b.correctness < 1 && b.reasoning <= 0.6 + 0.4 * b.correctness, r.rollout_id);
  }
  for (const r of await with1('unnecessary_clarification')) assert.equal(heuristicBase(r).scores.clarification, 0.5);
  for (const r of await with1('skipped_clarification')) assert.equal(heuristicBase(r).scores.clarification, 0);
  for (const r of await with1('missing_tool_call')) assert.ok(heuristicBase(r).scores.tool_use < 1);
  for (const r of await with1('verbosity'))
    assert.ok(heuristicBase(r).scores.conciseness < 0.5 && heuristicBase(r).scores.clarity < 1);
});

test('a hotpotqa answer with partial overlap gets partial correctness and the widest jitter', async () => {
  const s = (await fixtureScenarios(3)).find((x) => x.task === 'hotpotqa' && x.gold_answer.split(' ').length >= 2)!;
  const partial = buildRollout(
    s,
    { steps: s.reference.steps, final_answer: s.gold_answer.split(' ')[0]! },
    { source: 'synthetic', policy: 'p', candidate_index: 0, error_modes: [] },
  );
  const base = heuristicBase(partial);
  assert.equal(base.scores.correctness, partial.f1);
  assert.ok(partial.f1! > 0 && partial.f1! < 1);
  assert.ok(base.ambiguity.correctness > 0);
});

test('a request without a rollout is a failed outcome, not a guess', async () => {
  const out = await createHeuristicProvider(OPTS).score(
    { ...request((await fixtureRollouts(1))[0]!, 0), rollout: null },
    signal,
  );
  assert.deepEqual(out, {
    ok: false,
    error: 'heuristic provider: the request carries no rollout to score',
    attempts: 1,
    retryable: false,
  });
});

test('the rubric defines all seven dimensions with anchors for 0, 0.5 and 1, and the prompt asks for them as strict JSON', async () => {
  assert.deepEqual(Object.keys(RUBRIC), [...DIMENSIONS]);
  for (const d of DIMENSIONS) for (const a of [0, 0.5, 1] as const) assert.ok(RUBRIC[d].anchors[a].length > 20);
  assert.match(RUBRIC_VERSION, /^rc1-rubric-v\d+$/);
  const r = (await fixtureRollouts(1))[1]!;
  const [sys, user] = renderJudgeMessages(r);
  assert.equal(sys!.role, 'system');
  for (const d of DIMENSIONS) assert.ok(sys!.content.includes(`"${d}": 0.0`));
  assert.match(sys!.content, /exactly one JSON object/);
  assert.ok(user!.content.includes(`Reference answer: ${r.gold_answer}`));
  assert.ok(user!.content.includes(`Final answer: ${r.trajectory.final_answer}`));
  assert.deepEqual(renderJudgeMessages(r), renderJudgeMessages(r));
});
