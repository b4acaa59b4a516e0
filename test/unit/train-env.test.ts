// simulated-dialogue-v2: what each action reveals (noise off), the seeded stochastic events (noise
// on), when an answer succeeds, the reward, and that the observation is a function of the visible
// transcript only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANSWER,
  ASK,
  CALC,
  NO_ARTICLE,
  NOTHING_TO_ADD,
  TIMEOUT,
  VAGUE_REPLY,
  WIKI,
  newState,
  stepEnv,
  type EnvOptions,
} from '../../lib/train/env/dialogue-env.ts';
import { OBS_DIM, agentView, feature, observe, observeState } from '../../lib/train/env/features.ts';
import { baselineActor } from '../../lib/train/baselines.ts';
import { difficultyFactor, overclarPenalty, rc1Reward } from '../../lib/train/env/reward.ts';
import { scenarioSpec } from '../../lib/train/env/scenario-spec.ts';
import { TrainRng } from '../../lib/train/rng.ts';
import { DIMENSIONS } from '../../lib/scoring/types.ts';
import { makeScenarios } from '../helpers/train-fixtures.ts';

const weights = Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / 7])) as Record<(typeof DIMENSIONS)[number], number>;
const reward = { use_overclar_penalty: true, alpha: 0.07, cap: 3, beta: 0.05 };
const quiet: EnvOptions = { maxTurns: 8, weights, reward, noise: { tool_failure: 0, search_miss: 0, vague_reply: 0 } };
const noisy: EnvOptions = { ...quiet, noise: { tool_failure: 0.3, search_miss: 0.3, vague_reply: 0.5 } };
const scenarios = makeScenarios(9);
const find = (task: string, needs: boolean) =>
  scenarios.find((s) => s.task === task && s.needs_clarification === needs)!;

function play(s: ReturnType<typeof find>, actions: number[], env = quiet, seed = 1) {
  const spec = scenarioSpec(s);
  const st = newState();
  const rng = new TrainRng(seed);
  for (const a of actions) {
    const out = stepEnv(spec, st, a, rng, env);
    if (out) return { out, st, spec };
  }
  throw new Error('episode did not end');
}

/** The state after some actions (the episode still running). */
function walk(s: ReturnType<typeof find>, actions: number[], env = quiet, seed = 1) {
  const spec = scenarioSpec(s);
  const st = newState();
  const rng = new TrainRng(seed);
  for (const a of actions) assert.equal(stepEnv(spec, st, a, rng, env), null);
  return { st, spec };
}

test('hotpotqa without noise: both supporting pages, then the answer, succeeds; answering after one page does not', () => {
  const s = find('hotpotqa', false);
  const ok = play(s, [WIKI, WIKI, ANSWER]);
  assert.equal(ok.out.success, true);
  assert.equal(ok.out.finalAnswer, s.gold_answer);
  assert.equal(play(s, [WIKI, ANSWER]).out.success, false);
});

test('a needed clarification reveals the hidden detail; searches before it find only distractor pages', () => {
  const s = find('hotpotqa', true);
  const before = play(s, [WIKI, WIKI, ANSWER]);
  assert.equal(before.out.success, false);
  assert.deepEqual(
    before.st.events.map((e) => e.title),
    ['Unrelated Place', 'Unrelated Place'],
  );
  const after = play(s, [ASK, WIKI, WIKI, ANSWER]);
  assert.equal(after.out.success, true);
  assert.equal(after.st.events[0]!.text, s.clarification);
  assert.equal(after.out.turns, 2);
});

test('gsm8k: each calc call reveals the next step; past the last one the calculator answers with the same error as before a needed detail', () => {
  const s = find('gsm8k', false);
  assert.equal(play(s, [CALC, CALC, ANSWER]).out.success, true);
  assert.equal(play(s, [CALC, ANSWER]).out.success, false);
  const extra = play(s, [CALC, CALC, CALC, ANSWER]);
  assert.equal(extra.out.success, true);
  const missing = play(find('gsm8k', true), [CALC, ANSWER]);
  assert.equal(extra.st.events[2]!.text, missing.st.events[0]!.text, 'done and missing a value read the same');
});

test('running out of turns ends the episode unanswered and unsuccessful', () => {
  const r = play(find('gsm8k', false), Array(8).fill(WIKI));
  assert.equal(r.out.answered, false);
  assert.equal(r.out.success, false);
  assert.equal(r.out.actions, 8);
});

test('with noise on, the same seed gives the same transcript, and time-outs, search misses and vague replies all occur at about their rates', () => {
  const s = find('hotpotqa', true);
  const a = play(s, [ASK, ASK, WIKI, WIKI, WIKI, ANSWER], noisy, 7);
  const b = play(s, [ASK, ASK, WIKI, WIKI, WIKI, ANSWER], noisy, 7);
  assert.deepEqual(a.st.events, b.st.events);
  let timeouts = 0;
  let vague = 0;
  let misses = 0;
  const n = 2000;
  for (let seed = 0; seed < n; seed++) {
    const r = play(s, [ASK, WIKI, ANSWER], noisy, seed);
    if (r.st.events[0]!.text === VAGUE_REPLY) vague += 1;
    else if (r.st.events[1]!.text === TIMEOUT) timeouts += 1;
    else if (r.st.events[1]!.title === 'Unrelated Place') misses += 1;
  }
  assert.ok(Math.abs(vague / n - 0.5) < 0.04, `vague ${vague / n}`);
  assert.ok(Math.abs(timeouts / (n - vague) - 0.3) < 0.04, `timeouts ${timeouts / (n - vague)}`);
  assert.ok(Math.abs(misses / (n - vague - timeouts) - 0.3) < 0.05, `misses ${misses / (n - vague - timeouts)}`);
});

test('asking where nothing is missing gets "nothing to add" and costs the over-clarification penalty', () => {
  const s = find('hotpotqa', false);
  const plain = play(s, [WIKI, WIKI, ANSWER]).out;
  const asked = play(s, [ASK, WIKI, WIKI, ANSWER]);
  assert.equal(asked.st.events[0]!.text, NOTHING_TO_ADD);
  assert.equal(asked.out.success, true);
  assert.ok(asked.out.reward < plain.reward - 0.06, `${asked.out.reward} vs ${plain.reward}`);
});

test('the reward is (Σ w·score − α·min(c, cap)) × (1 + β(I[hard] − I[easy]))', () => {
  const scores = Object.fromEntries(DIMENSIONS.map((d, i) => [d, i / 10])) as Record<
    (typeof DIMENSIONS)[number],
    number
  >;
  const base = DIMENSIONS.reduce((a, _d, i) => a + (1 / 7) * (i / 10), 0);
  assert.equal(overclarPenalty({ needsClarification: false, clarifications: 5 }, reward), 0.07 * 3);
  assert.equal(overclarPenalty({ needsClarification: true, clarifications: 5 }, reward), 0);
  assert.equal(difficultyFactor('hard', 0.05), 1.05);
  assert.equal(difficultyFactor(null, 0.05), 1);
  const r = rc1Reward(scores, weights, { needsClarification: false, clarifications: 2, difficulty: 'hard' }, reward);
  assert.ok(Math.abs(r - (base - 0.14) * 1.05) < 1e-12);
});

test('the observation reads the transcript, not the simulator: the same visible events give the same features whatever the label and the hidden counters', () => {
  const s = find('hotpotqa', true);
  const spec = scenarioSpec(s);
  const flipped = scenarioSpec({ ...s, needs_clarification: false, clarification: null });
  const r = walk(s, [WIKI, ASK, WIKI], quiet, 3);
  const hidden = { ...r.st, clarified: !r.st.clarified, wikiFound: 9, calcFound: 9 };
  const [x, y] = [new Float32Array(OBS_DIM), new Float32Array(OBS_DIM)];
  observeState(spec, r.st, 8, x);
  observeState(flipped, hidden, 8, y);
  assert.deepEqual([...x], [...y]);
  observe(spec.view, [{ action: 'wiki', text: NO_ARTICLE, title: '' }], 1, 8, x);
  assert.equal(feature(x, 'last_no_article'), 1);
  assert.equal(feature(x, 'wiki_pages'), 0);
});

test('no canned reply of the environment has a content word: a vague reply, "nothing to add" and "As I said:" count 0 new words, a real one-word detail counts 1, and the hand rule asks again after a vague reply', () => {
  const view = agentView({
    task: 'hotpotqa',
    messages: [{ role: 'user', content: 'Who directed a certain film?' }],
  } as Parameters<typeof agentView>[0]);
  const x = new Float32Array(OBS_DIM);
  const newWords = (text: string): number => {
    observe(view, [{ action: 'ask', text }], 1, 8, x);
    return feature(x, 'reply_new_words');
  };
  for (const reply of [VAGUE_REPLY, NOTHING_TO_ADD, 'As I said:']) assert.equal(newWords(reply), 0, reply);
  assert.equal(newWords('Casablanca.'), 1);
  assert.equal(newWords('As I said: Casablanca.'), 1);
  const hand = baselineActor('hand-rule', 8);
  observe(view, [{ action: 'ask', text: VAGUE_REPLY }], 1, 8, x);
  assert.equal(hand.logProbs(x).indexOf(0), ASK);
  observe(view, [{ action: 'ask', text: 'Casablanca.' }], 1, 8, x);
  assert.notEqual(hand.logProbs(x).indexOf(0), ASK);
});
