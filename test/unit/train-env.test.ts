// simulated-dialogue-v1: what each action reveals, when an answer succeeds, the reward, and that
// the observation never carries the needs_clarification label (only text cues of the request).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANSWER, ASK, CALC, WIKI, newState, stepEnv, type EnvOptions } from '../../src/train/env/dialogue-env.ts';
import { OBS_DIM, observe, staticFeatures, STATIC_FEATURES } from '../../src/train/env/features.ts';
import { difficultyFactor, overclarPenalty, rc1Reward } from '../../src/train/env/reward.ts';
import { scenarioSpec } from '../../src/train/env/scenario-spec.ts';
import { TrainRng } from '../../src/train/rng.ts';
import { DIMENSIONS } from '../../src/scoring/types.ts';
import { makeScenarios } from '../helpers/train-fixtures.ts';

const weights = Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / 7])) as Record<(typeof DIMENSIONS)[number], number>;
const env: EnvOptions = { maxTurns: 8, weights, reward: { use_overclar_penalty: true, alpha: 0.07, cap: 3, beta: 0.05 } };
const scenarios = makeScenarios(9);
const find = (task: string, needs: boolean) => scenarios.find((s) => s.task === task && s.needs_clarification === needs)!;

function play(s: ReturnType<typeof find>, actions: number[]) {
  const spec = scenarioSpec(s);
  const st = newState();
  const rng = new TrainRng(1);
  for (const a of actions) {
    const out = stepEnv(spec, st, a, rng, env);
    if (out) return { out, st };
  }
  throw new Error('episode did not end');
}

test('hotpotqa: both supporting articles, then the answer, succeeds; answering after one article does not', () => {
  const s = find('hotpotqa', false);
  const ok = play(s, [WIKI, WIKI, ANSWER]);
  assert.equal(ok.out.success, true);
  assert.equal(ok.out.finalAnswer, s.gold_answer);
  assert.deepEqual(ok.st.steps.map((x) => (x.type === 'tool_call' ? x.input : x.type)), s.reference.steps.flatMap((x) => (x.type === 'tool_call' ? [x.input] : [])));
  const early = play(s, [WIKI, ANSWER]);
  assert.equal(early.out.success, false);
});

test('a needed clarification reveals the hidden detail; tool calls before it find only distractors', () => {
  const s = find('hotpotqa', true);
  const before = play(s, [WIKI, WIKI, ANSWER]);
  assert.equal(before.out.success, false);
  assert.equal(before.st.wikiFound, 0);
  const after = play(s, [ASK, WIKI, WIKI, ANSWER]);
  assert.equal(after.out.success, true);
  const clar = after.st.steps[0]!;
  assert.equal(clar.type === 'clarify' && clar.reply, s.clarification);
  assert.equal(after.out.clarifications, 1);
  assert.equal(after.out.turns, 2);
});

test('gsm8k: each calc call reveals the next step; the answer needs all of them', () => {
  const s = find('gsm8k', false);
  assert.equal(play(s, [CALC, CALC, ANSWER]).out.success, true);
  assert.equal(play(s, [CALC, ANSWER]).out.success, false);
  const extra = play(s, [CALC, CALC, CALC, ANSWER]);
  assert.equal(extra.out.success, true);
  assert.equal(extra.out.toolCalls, 3);
});

test('running out of turns ends the episode unanswered and unsuccessful', () => {
  const r = play(find('gsm8k', false), Array(8).fill(WIKI));
  assert.equal(r.out.answered, false);
  assert.equal(r.out.success, false);
  assert.equal(r.out.actions, 8);
});

test('an unneeded clarification costs the over-clarification penalty', () => {
  const s = find('hotpotqa', false);
  const plain = play(s, [WIKI, WIKI, ANSWER]).out;
  const asked = play(s, [ASK, WIKI, WIKI, ANSWER]).out;
  assert.equal(asked.success, true);
  assert.ok(asked.reward < plain.reward - 0.06, `${asked.reward} vs ${plain.reward}`);
});

test('the reward is (Σ w·score − α·min(c, cap)) × (1 + β(I[hard] − I[easy]))', () => {
  const scores = Object.fromEntries(DIMENSIONS.map((d, i) => [d, i / 10])) as Record<(typeof DIMENSIONS)[number], number>;
  const base = DIMENSIONS.reduce((a, d, i) => a + (1 / 7) * (i / 10), 0);
  assert.equal(overclarPenalty({ needsClarification: false, clarifications: 5 }, env.reward), 0.07 * 3);
  assert.equal(overclarPenalty({ needsClarification: true, clarifications: 5 }, env.reward), 0);
  assert.equal(difficultyFactor('hard', 0.05), 1.05);
  assert.equal(difficultyFactor('easy', 0.05), 0.95);
  assert.equal(difficultyFactor(null, 0.05), 1);
  const r = rc1Reward(scores, weights, { needsClarification: false, clarifications: 2, difficulty: 'hard' }, env.reward);
  assert.ok(Math.abs(r - (base - 0.14) * 1.05) < 1e-12);
});

test('the observation does not carry the needs_clarification label: flipping it changes no feature', () => {
  for (const s of scenarios) {
    const flipped = { ...s, needs_clarification: !s.needs_clarification, clarification: s.clarification ?? 'a detail' };
    const [a, b] = [scenarioSpec(s), scenarioSpec(flipped)];
    const oa = new Float32Array(OBS_DIM);
    const ob = new Float32Array(OBS_DIM);
    observe(a, newState(), 8, oa);
    observe(b, newState(), 8, ob);
    assert.deepEqual([...oa], [...ob], s.id);
  }
});

test('the placeholder cue is a text feature: present in the under-specified requests of the fixtures, absent otherwise', () => {
  const cue = STATIC_FEATURES.indexOf('placeholder_cue');
  for (const s of scenarios) assert.equal(staticFeatures(s)[cue], s.needs_clarification ? 1 : 0, s.messages[0]!.content);
});
