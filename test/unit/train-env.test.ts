// simulated-dialogue-v3: what each action reveals (noise off), the seeded stochastic events (noise
// on), when an answer succeeds, the reward, that the observation is a function of the visible
// transcript only, and that v2's give-aways are gone (a search past the last page, a calculator
// without the request's number, a vague reply by its wording).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANSWER,
  ASK,
  CALC,
  NO_ARTICLE,
  NOTHING_TO_ADD_REPLIES,
  REPLY_WRAPPERS,
  TIMEOUT,
  VAGUE_REPLIES,
  VAGUE_REPLY,
  WIKI,
  newState,
  stepEnv,
  type EnvOptions,
} from '../../lib/train/env/dialogue-env.ts';
import { OBS_DIM, agentView, feature, observe, observeState } from '../../lib/train/env/features.ts';
import { baselineActor } from '../../lib/train/baselines.ts';
import { difficultyFactor, overclarPenalty, rc1Reward } from '../../lib/train/env/reward.ts';
import { scenarioSpec, scenarioSpecs } from '../../lib/train/env/scenario-spec.ts';
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
  assert.ok(after.st.events[0]!.text.includes(s.clarification!), after.st.events[0]!.text);
  assert.equal(after.out.turns, 2);
});

test('gsm8k: each calc call reveals the next step; past the last one the calculator re-checks it (the same text again)', () => {
  const s = find('gsm8k', false);
  assert.equal(play(s, [CALC, CALC, ANSWER]).out.success, true);
  assert.equal(play(s, [CALC, ANSWER]).out.success, false);
  const extra = play(s, [CALC, CALC, CALC, ANSWER]);
  assert.equal(extra.out.success, true);
  assert.equal(extra.st.events[2]!.text, extra.st.events[1]!.text);
  assert.match(extra.st.events[1]!.text, /^\S+ = \d+$/);
});

test('gsm8k missing its number: the calculator computes with a stand-in value, which reads like any result and does not count; after the reply the real steps follow', () => {
  const s = find('gsm8k', true);
  const a = Number(/\d+/.exec(s.clarification!)![0]);
  const b = Number(/with (\d+) pens/.exec(s.messages[0]!.content)![1]);
  const guess = play(s, [CALC, CALC, CALC, ANSWER], quiet, 5);
  const [g1, g2, g3] = guess.st.events.map((e) => e.text);
  const m = /^(\d+)\*(\d+) = (\d+)$/.exec(g1!);
  assert.ok(m, g1);
  assert.notEqual(Number(m[1]), a, 'a stand-in, not the missing number');
  assert.equal(Number(m[2]), b);
  assert.equal(Number(m[3]), Number(m[1]) * b);
  assert.equal(g2, `${m[3]}-2 = ${Number(m[3]) - 2}`, 'the next step uses the stand-in result');
  assert.equal(g3, g2, 'past the last step: a re-check');
  assert.equal(guess.out.success, false);
  assert.equal(guess.out.finalAnswer, String(Number(m[3]) - 2));
  const asked = play(s, [CALC, ASK, CALC, CALC, ANSWER], quiet, 5);
  assert.equal(asked.out.success, true);
  assert.equal(asked.st.events[2]!.text, `${a}*${b} = ${a * b}`);
});

test('a search past the last supporting page returns a distractor page, not "nothing left"; "No further article found." only where no page is left at all', () => {
  const s = find('hotpotqa', false);
  const r = play(s, [WIKI, WIKI, WIKI, ANSWER]);
  assert.equal(r.st.events[2]!.title, 'Unrelated Place');
  assert.equal(r.out.success, true);
  const bare = play({ ...s, context: s.context.filter((d) => d.supporting) }, [WIKI, WIKI, WIKI, ANSWER]);
  assert.equal(bare.st.events[2]!.text, NO_ARTICLE);
});

test('a scenario without distractor pages, in a set: a search that cannot find its page (the request misses its detail, or a search miss) returns another scenario\'s page of the same task, drawn by the seed; "No further article found." only where the set has no other page', () => {
  const set = scenarioSpecs(scenarios);
  const needy = set.find((sp) => sp.task === 'strategyqa' && sp.needsClarification && sp.distractors.length === 0)!;
  const plain = set.find((sp) => sp.task === 'strategyqa' && !sp.needsClarification && sp.distractors.length === 0)!;
  assert.ok(needy && plain, 'the fixture has strategyqa scenarios without distractor pages');
  const first = (spec: typeof needy, env: EnvOptions, seed: number) => {
    const st = newState();
    assert.equal(stepEnv(spec, st, WIKI, new TrainRng(seed), env), null);
    return st.events[0]!;
  };
  const ownTitles = (spec: typeof needy) => new Set(spec.wiki.map((d) => d.title));
  const others = new Set(
    set.filter((sp) => sp.task === 'strategyqa' && sp.id !== needy.id).flatMap((sp) => sp.wiki.map((d) => d.text)),
  );
  const titles = new Set<string>();
  for (let seed = 1; seed <= 30; seed++) {
    const e = first(needy, quiet, seed);
    assert.notEqual(e.text, NO_ARTICLE);
    assert.ok(others.has(e.text) && !ownTitles(needy).has(e.title!), `${e.title}: another scenario's page`);
    assert.deepEqual(first(needy, quiet, seed), e, 'the same seed draws the same page');
    titles.add(e.title!);
  }
  assert.ok(titles.size > 1, 'the page is drawn, not fixed');
  // a complete request finds its page, and after a search miss gets an unrelated page as well
  assert.equal(first(plain, quiet, 1).title, plain.wiki[0]!.title);
  const missed = first(plain, { ...quiet, noise: { tool_failure: 0, search_miss: 0.999, vague_reply: 0 } }, 1);
  assert.ok(others.has(missed.text) || missed.title !== plain.wiki[0]!.title);
  assert.notEqual(missed.text, NO_ARTICLE);
  // past its last page too
  const st = newState();
  const rng = new TrainRng(3);
  for (let k = 0; k < plain.wiki.length + 2; k++) stepEnv(plain, st, WIKI, rng, quiet);
  assert.ok(st.events.every((e) => e.text !== NO_ARTICLE));
  // built alone (no set), such a scenario has no page to show: "No further article found."
  assert.equal(first(scenarioSpec(needy.scenario), quiet, 1).text, NO_ARTICLE);
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
    if ((VAGUE_REPLIES as readonly string[]).includes(r.st.events[0]!.text)) vague += 1;
    else if (r.st.events[1]!.text === TIMEOUT) timeouts += 1;
    else if (r.st.events[1]!.title === 'Unrelated Place') misses += 1;
  }
  assert.ok(Math.abs(vague / n - 0.5) < 0.04, `vague ${vague / n}`);
  assert.ok(Math.abs(timeouts / (n - vague) - 0.3) < 0.04, `timeouts ${timeouts / (n - vague)}`);
  assert.ok(Math.abs(misses / (n - vague - timeouts) - 0.3) < 0.05, `misses ${misses / (n - vague - timeouts)}`);
});

test('asking where nothing is missing gets a "nothing to add" reply and costs the over-clarification penalty', () => {
  const s = find('hotpotqa', false);
  const plain = play(s, [WIKI, WIKI, ANSWER]).out;
  const asked = play(s, [ASK, WIKI, WIKI, ANSWER]);
  assert.ok((NOTHING_TO_ADD_REPLIES as readonly string[]).includes(asked.st.events[0]!.text));
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

test('the usefulness of a reply is not in its length or its new words: vague replies bring content words and one names someone, detail replies come wrapped in chat, every variant occurs; the hand rule asks again while the reply holds no number or name', () => {
  const view = agentView({
    task: 'hotpotqa',
    messages: [{ role: 'user', content: 'Who directed the film my brother likes?' }],
  } as Parameters<typeof agentView>[0]);
  const x = new Float32Array(OBS_DIM);
  const seen = (text: string) => {
    observe(view, [{ action: 'ask', text }], 1, 8, x);
    return { words: feature(x, 'reply_new_words'), value: feature(x, 'reply_has_value') };
  };
  assert.ok(VAGUE_REPLIES.filter((r) => seen(r).words >= 3).length >= 3, 'long vague replies');
  assert.ok(
    VAGUE_REPLIES.some((r) => seen(r).value === 1),
    'a vague reply that names someone',
  );
  assert.deepEqual(seen('Casablanca.'), { words: 1, value: 1 });
  assert.deepEqual(seen('As I said: Casablanca.'), { words: 1, value: 1 });
  const [before, after] = REPLY_WRAPPERS[0]!;
  assert.deepEqual(seen(`${before} Casablanca. ${after}`), { words: 3, value: 1 });
  const s = find('hotpotqa', true);
  const texts = new Set<string>();
  for (let seed = 0; seed < 400; seed++)
    texts.add(
      play(s, [ASK, ANSWER], { ...quiet, noise: { ...quiet.noise, vague_reply: 0.5 } }, seed).st.events[0]!.text,
    );
  for (const r of VAGUE_REPLIES) assert.ok(texts.has(r), r);
  assert.ok(texts.has(s.clarification!));
  assert.ok([...texts].some((t) => t.length > s.clarification!.length + 20 && t.includes(s.clarification!)));
  const hand = baselineActor('hand-rule', 8);
  observe(view, [], 0, 8, x);
  assert.equal(hand.logProbs(x).indexOf(0), ASK, 'asks first');
  observe(view, [{ action: 'ask', text: VAGUE_REPLY }], 1, 8, x);
  assert.equal(hand.logProbs(x).indexOf(0), ASK);
  observe(view, [{ action: 'ask', text: VAGUE_REPLIES[1] }], 1, 8, x);
  assert.equal(hand.logProbs(x).indexOf(0), ASK);
  observe(view, [{ action: 'ask', text: 'Casablanca.' }], 1, 8, x);
  assert.notEqual(hand.logProbs(x).indexOf(0), ASK);
});
