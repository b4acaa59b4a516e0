// simulated-dialogue-v3: the environment the built-in policy is trained and evaluated in. It is a
// simulation built from the data — every episode plays one scenario of the balanced pool (or the
// shadow set) from the scenario's own fields, with no language model anywhere — and it is
// stochastic the way an agent's world is: tools fail, search returns the wrong page, users answer
// vaguely. Every random draw comes from the episode's seeded TrainRng (train.env.noise rates).
// v3 (over v2) takes away what a real agent's world does not hand out: the search never says
// "nothing left" while it has pages to show, the calculator does not know that the request was
// missing a number, and the user's replies are not recognisable by their length or wording.
//   ask     a scenario that needs a detail: the user gives it (scenario.clarification, half the
//           time wrapped in a sentence of chat) with probability 1 − vague_reply, else a vague
//           reply drawn from several (some long, with content words or a name, that add nothing);
//           once given, a repeat. A scenario that needs none: one of several "nothing to add"
//           replies. Asking there costs the over-clarification penalty α·min(c, cap) (reward.ts).
//   wiki    with probability tool_failure a time-out error. Otherwise, while the request still
//           misses its detail, only a distractor page (the name it needs is missing); once it is
//           complete, the next supporting page — except that with probability search_miss the
//           search returns a distractor instead. Once every supporting page was shown, a search
//           returns distractor pages (as a search engine returns its next-best hits). A distractor
//           is one of the scenario's own non-supporting pages; a scenario with none (every
//           strategyqa one, many hotpotqa ones) gets an unrelated page instead, drawn from the
//           other scenarios' pages of its task in its set (scenarioSpecs) — the same for a
//           complete request after a miss as for one missing its detail, so the result's form
//           does not tell the label. "No further article found." only where there is no page to
//           show at all (gsm8k, or a spec built alone with no distractor).
//   calc    with probability tool_failure a time-out error. Once the request is complete, the
//           next arithmetic step of the gsm8k reference (expression = result); past the last one,
//           the last step evaluated again (a re-check: the same text). While the request misses
//           its number, the agent computes with a stand-in value it assumed (one per episode,
//           drawn): each step of the reference with the missing number, and every result that
//           depends on it, replaced — a well-formed "expression = result" that looks like any
//           other and does not count as the step (the calculator cannot know the number was
//           made up). A problem with no arithmetic step: "error: could not evaluate the expression".
//   answer  ends the episode. With everything needed gathered (the detail if needed, every
//           supporting page, every calc step) the answer is the reference's final answer;
//           otherwise a premature one (strategyqa a seeded coin flip, gsm8k the last number
//           computed — a stand-in computation's too — or written, hotpotqa the last page's
//           title) — judged by the task's metric.
// The agent sees only the transcript's text (`view`, features.ts); the counters below it
// (clarified, wikiFound, calcFound, the stand-in computation) are the simulator's, never
// observed. max_turns actions without an answer end the episode unanswered. The trajectory
// becomes a rollout (lib/rollouts buildRollout), scored by the heuristic rubric and turned into
// RC1's reward (reward.ts).
import { evaluate, formatResult } from '../../rollouts/calc.ts';
import { buildRollout, type Step } from '../../rollouts/index.ts';
import { heuristicBase } from '../../scoring/heuristic-provider.ts';
import type { DimScores } from '../../scoring/types.ts';
import type { TrainRng } from '../rng.ts';
import { rc1Reward, type RewardOptions, type Weights } from './reward.ts';
import type { EnvScenario, WikiDoc } from './scenario-spec.ts';
import {
  CALC_ERROR,
  GENERIC_ASK,
  NO_ARTICLE,
  NOTHING_TO_ADD_REPLIES,
  REPLY_WRAPPERS,
  TIMEOUT,
  VAGUE_REPLIES,
  type VisibleEvent,
} from './visible-text.ts';

export const ENV_VERSION = 'simulated-dialogue-v3';
export const ACTIONS = ['ask', 'wiki', 'calc', 'answer'] as const;
export type ActionName = (typeof ACTIONS)[number];
export const N_ACTIONS = ACTIONS.length;
export const ASK = 0;
export const WIKI = 1;
export const CALC = 2;
export const ANSWER = 3;

export {
  CALC_ERROR,
  GENERIC_ASK,
  NO_ARTICLE,
  NOTHING_TO_ADD,
  NOTHING_TO_ADD_REPLIES,
  REPLY_WRAPPERS,
  TIMEOUT,
  VAGUE_REPLY,
  VAGUE_REPLIES,
  type VisibleEvent,
} from './visible-text.ts';

/** Rates of the environment's stochastic events (train.env.noise). */
export interface EnvNoise {
  /** A wiki or calc call times out. */
  tool_failure: number;
  /** A search, once the request is complete, returns a distractor page instead of the next supporting one. */
  search_miss: number;
  /** The user, asked for a needed detail, replies vaguely. */
  vague_reply: number;
}

export interface DialogueState {
  turn: number;
  clarifications: number;
  /** What the agent has seen, in order (the only thing observe() reads besides the request). */
  events: VisibleEvent[];
  // The simulator's hidden counters:
  clarified: boolean;
  wikiCalls: number;
  wikiFound: number;
  calcCalls: number;
  calcFound: number;
  /** The stand-in computation while the request misses its number: the value assumed, the steps shown. */
  standIn: number | null;
  guessed: { expr: string; result: string }[];
  done: boolean;
  steps: Step[];
}

export interface EpisodeOutcome {
  success: boolean;
  reward: number;
  scores: DimScores;
  answered: boolean;
  /** Assistant actions taken (the episode length). */
  actions: number;
  clarifications: number;
  /** Rollout turns: clarifying questions + the answer turn (lib/rollouts). */
  turns: number;
  toolCalls: number;
  finalAnswer: string;
}

export interface EnvOptions {
  maxTurns: number;
  weights: Weights;
  reward: RewardOptions;
  noise: EnvNoise;
}

export function newState(): DialogueState {
  return {
    turn: 0,
    clarifications: 0,
    events: [],
    clarified: false,
    wikiCalls: 0,
    wikiFound: 0,
    calcCalls: 0,
    calcFound: 0,
    standIn: null,
    guessed: [],
    done: false,
    steps: [],
  };
}

function ready(spec: EnvScenario, st: DialogueState): boolean {
  return !spec.needsClarification || st.clarified;
}

function ask(spec: EnvScenario, st: DialogueState, rng: TrainRng, noise: EnvNoise): void {
  st.clarifications += 1;
  let reply: string;
  if (!spec.needsClarification) reply = NOTHING_TO_ADD_REPLIES[rng.int(NOTHING_TO_ADD_REPLIES.length)]!;
  else if (st.clarified) reply = `As I said: ${spec.scenario.clarification ?? ''}`;
  else if (rng.next() < noise.vague_reply) reply = VAGUE_REPLIES[rng.int(VAGUE_REPLIES.length)]!;
  else {
    reply = spec.scenario.clarification ?? '';
    if (rng.next() < 0.5) {
      const [before, after] = REPLY_WRAPPERS[rng.int(REPLY_WRAPPERS.length)]!;
      reply = `${before} ${reply} ${after}`;
    }
    st.clarified = true;
  }
  st.steps.push({
    type: 'clarify',
    ask: !st.clarified || reply.startsWith('As I said') ? GENERIC_ASK : (spec.clarifyAsk ?? GENERIC_ASK),
    reply,
  });
  st.events.push({ action: 'ask', text: reply });
}

function wiki(spec: EnvScenario, st: DialogueState, rng: TrainRng, noise: EnvNoise): void {
  st.wikiCalls += 1;
  const see = (title: string, text: string, input = title): void => {
    st.steps.push({ type: 'tool_call', tool: 'wiki', input, output: text });
    st.events.push({ action: 'wiki', text, title });
  };
  if (rng.next() < noise.tool_failure) {
    see('', TIMEOUT, spec.task);
    return;
  }
  const doc = spec.wiki[st.wikiFound];
  const distractor =
    spec.distractors.length > 0 ? spec.distractors[rng.int(spec.distractors.length)]! : offTopic(spec, rng);
  if (doc && ready(spec, st) && !(distractor && rng.next() < noise.search_miss)) {
    see(doc.title, doc.text);
    st.wikiFound += 1;
  } else if (distractor) {
    see(distractor.title, distractor.text);
  } else {
    see('', NO_ARTICLE, spec.task);
  }
}

/**
 * An unrelated page for a scenario with no distractor of its own: one of the other scenarios' pages
 * of the same task (spec.offTopic), drawn; a page of the scenario's own source question is passed
 * over for the next one. Null when there is none (a spec built alone, or gsm8k, which has no pages).
 */
function offTopic(spec: EnvScenario, rng: TrainRng): WikiDoc | null {
  const n = spec.offTopic.length;
  if (n === 0) return null;
  const start = rng.int(n);
  const own = spec.scenario.source_id;
  for (let k = 0; k < n; k++) {
    const d = spec.offTopic[(start + k) % n]!;
    if (d.source !== own) return { title: d.title, text: d.text };
  }
  return null;
}

/** Stand-in values an agent assumes for a missing number (one is drawn per episode). */
const STAND_INS = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 50, 100];
const NUMBER = /\d[\d,]*(?:\.\d+)?/g;
const num = (s: string): number => Number(s.replace(/,/g, ''));

/**
 * Step `i` of the reference computed with the stand-in: the missing number and every earlier
 * step's result replaced by their stand-in values, evaluated. A step that uses none of them is the
 * reference's own.
 */
function guessedStep(spec: EnvScenario, st: DialogueState, i: number): { expr: string; result: string } {
  const ref = spec.calc[i]!;
  const swap = new Map<number, string>();
  if (spec.detailNumber !== null) swap.set(spec.detailNumber, formatResult(st.standIn!));
  for (let j = 0; j < i && j < st.guessed.length; j++) swap.set(num(spec.calc[j]!.result), st.guessed[j]!.result);
  let changed = false;
  const expr = ref.expr.replace(NUMBER, (m) => {
    const v = swap.get(num(m));
    if (v === undefined) return m;
    changed = true;
    return v;
  });
  if (!changed) return { expr: ref.expr, result: ref.result };
  const r = evaluate(expr);
  return r.ok ? { expr, result: r.text } : { expr: ref.expr, result: ref.result };
}

function calc(spec: EnvScenario, st: DialogueState, rng: TrainRng, noise: EnvNoise): void {
  st.calcCalls += 1;
  const show = (expr: string, result: string, thoughts: readonly string[] = []): void => {
    st.steps.push({ type: 'tool_call', tool: 'calc', input: expr, output: result });
    for (const t of thoughts) st.steps.push({ type: 'thought', text: t });
    st.events.push({ action: 'calc', text: `${expr} = ${result}` });
  };
  const fail = (out: string): void => {
    st.steps.push({ type: 'tool_call', tool: 'calc', input: '?', output: out });
    st.events.push({ action: 'calc', text: out });
  };
  if (rng.next() < noise.tool_failure) return fail(TIMEOUT);
  const n = spec.calc.length;
  if (n === 0) return fail(CALC_ERROR);
  if (ready(spec, st)) {
    const c = spec.calc[Math.min(st.calcFound, n - 1)]!;
    show(c.expr, c.result, st.calcFound < n ? c.thoughts : []);
    if (st.calcFound < n) st.calcFound += 1;
    return;
  }
  if (st.standIn === null) {
    const options = STAND_INS.filter((v) => v !== spec.detailNumber);
    st.standIn = options[rng.int(options.length)]!;
  }
  if (st.guessed.length < n) st.guessed.push(guessedStep(spec, st, st.guessed.length));
  const g = st.guessed[st.guessed.length - 1]!;
  show(g.expr, g.result);
}

/** Whether everything the answer needs has been gathered (the simulator's view; never observed). */
export function gathered(spec: EnvScenario, st: DialogueState): boolean {
  return ready(spec, st) && st.wikiFound >= spec.wiki.length && st.calcFound >= spec.calc.length;
}

/** The answer the episode ends with (see the head of this file). */
function answerOf(spec: EnvScenario, st: DialogueState, rng: TrainRng): string {
  if (gathered(spec, st)) {
    for (const t of spec.answerThoughts) st.steps.push({ type: 'thought', text: t });
    return spec.finalAnswer;
  }
  switch (spec.task) {
    case 'strategyqa':
      return rng.next() < 0.5 ? 'yes' : 'no';
    case 'gsm8k': {
      const found = ready(spec, st)
        ? st.calcFound > 0
          ? spec.calc[st.calcFound - 1]!.result
          : null
        : (st.guessed.at(-1)?.result ?? null);
      return found ?? spec.lastNumber ?? '0';
    }
    case 'hotpotqa':
      return st.wikiFound > 0 && ready(spec, st) ? spec.wiki[st.wikiFound - 1]!.title : 'I could not find it.';
  }
}

/** Scores the finished trajectory and computes its reward. */
function outcome(
  spec: EnvScenario,
  st: DialogueState,
  finalAnswer: string,
  answered: boolean,
  o: EnvOptions,
): EpisodeOutcome {
  const r = buildRollout(
    spec.scenario,
    { steps: st.steps, final_answer: finalAnswer },
    { source: 'synthetic', policy: 'rc1-train-policy', candidate_index: 0, error_modes: [] },
  );
  const { scores } = heuristicBase(r);
  const reward = rc1Reward(
    scores,
    o.weights,
    { needsClarification: spec.needsClarification, clarifications: st.clarifications, difficulty: spec.difficulty },
    o.reward,
  );
  return {
    success: r.success,
    reward,
    scores,
    answered,
    actions: st.turn,
    clarifications: st.clarifications,
    turns: r.turns,
    toolCalls: r.tool_calls,
    finalAnswer,
  };
}

/**
 * Applies one action. Returns the outcome when the episode ends (an answer, or max_turns reached),
 * else null. `rng` draws the environment's stochastic events and a premature answer's guesses.
 */
export function stepEnv(
  spec: EnvScenario,
  st: DialogueState,
  a: number,
  rng: TrainRng,
  o: EnvOptions,
): EpisodeOutcome | null {
  if (st.done) throw new Error('internal error: stepEnv on a finished episode; please report this');
  st.turn += 1;
  if (a === ANSWER) {
    st.done = true;
    return outcome(spec, st, answerOf(spec, st, rng), true, o);
  }
  if (a === ASK) ask(spec, st, rng, o.noise);
  else if (a === WIKI) wiki(spec, st, rng, o.noise);
  else calc(spec, st, rng, o.noise);
  if (st.turn >= o.maxTurns) {
    st.done = true;
    return outcome(spec, st, '', false, o);
  }
  return null;
}
