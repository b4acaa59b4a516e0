// simulated-dialogue-v1: the environment the built-in policy is trained and evaluated in. It is a
// simulation built from the data — every episode plays one scenario of the balanced pool (or the
// shadow set) from the scenario's own fields, with no language model anywhere:
//   ask     the user answers a clarifying question: with the hidden detail (scenario.clarification)
//           the first time, when the scenario needs it; otherwise "nothing to add" / a repeat
//   wiki    returns the next supporting article (scenario-spec.ts); before a needed clarification
//           the search can only hit a distractor article (the name it needs is missing); with no
//           article left, or no articles for the task, "no further article"
//   calc    returns the next arithmetic step of the reference (expression, result, the sentence
//           using it); before a needed clarification, or with no step left, an error
//   answer  ends the episode. With everything needed gathered, the answer is the reference's final
//           answer; otherwise a premature answer: strategyqa a yes/no guess (a coin flip from the
//           run's seeded RNG), gsm8k the last number computed or written, hotpotqa the title of the
//           last article read — then judged by the task's success metric like any other answer.
// An episode also ends, unanswered, after max_turns actions. The trajectory (clarify / tool_call /
// thought steps, final answer) becomes a rollout (src/rollouts buildRollout: success by
// judgeSuccess), scored on the seven rubric dimensions by the heuristic rules (src/scoring
// heuristicBase, no jitter) and turned into RC1's reward (reward.ts).
import { buildRollout, type Step } from '../../rollouts/index.ts';
import { heuristicBase } from '../../scoring/heuristic-provider.ts';
import type { DimScores } from '../../scoring/types.ts';
import type { TrainRng } from '../rng.ts';
import { rc1Reward, type RewardOptions, type Weights } from './reward.ts';
import type { EnvScenario } from './scenario-spec.ts';

export const ACTIONS = ['ask', 'wiki', 'calc', 'answer'] as const;
export type ActionName = (typeof ACTIONS)[number];
export const N_ACTIONS = ACTIONS.length;
export const ASK = 0;
export const WIKI = 1;
export const CALC = 2;
export const ANSWER = 3;

export const GENERIC_ASK = 'Could you tell me a bit more about what you need?';
export const NOTHING_TO_ADD = 'There is nothing to add: everything is in my question.';

export interface DialogueState {
  turn: number;
  clarifications: number;
  /** The user's reply has revealed the hidden detail. */
  clarified: boolean;
  wikiCalls: number;
  wikiFound: number;
  calcCalls: number;
  calcFound: number;
  lastNothingNew: boolean;
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
  /** Rollout turns: clarifying questions + the answer turn (src/rollouts). */
  turns: number;
  toolCalls: number;
  finalAnswer: string;
}

export interface EnvOptions {
  maxTurns: number;
  weights: Weights;
  reward: RewardOptions;
}

export function newState(): DialogueState {
  return { turn: 0, clarifications: 0, clarified: false, wikiCalls: 0, wikiFound: 0, calcCalls: 0, calcFound: 0, lastNothingNew: false, done: false, steps: [] };
}

function ready(spec: EnvScenario, st: DialogueState): boolean {
  return !spec.needsClarification || st.clarified;
}

function act(spec: EnvScenario, st: DialogueState, a: number): void {
  switch (a) {
    case ASK: {
      st.clarifications += 1;
      if (spec.needsClarification && !st.clarified) {
        st.steps.push({ type: 'clarify', ask: spec.clarifyAsk ?? GENERIC_ASK, reply: spec.scenario.clarification ?? '' });
        st.clarified = true;
        st.lastNothingNew = false;
      } else {
        const reply = spec.needsClarification ? `As I said: ${spec.scenario.clarification ?? ''}` : NOTHING_TO_ADD;
        st.steps.push({ type: 'clarify', ask: GENERIC_ASK, reply });
        st.lastNothingNew = true;
      }
      return;
    }
    case WIKI: {
      st.wikiCalls += 1;
      const doc = spec.wiki[st.wikiFound];
      if (doc && ready(spec, st)) {
        st.steps.push({ type: 'tool_call', tool: 'wiki', input: doc.title, output: doc.text });
        st.wikiFound += 1;
        st.lastNothingNew = false;
      } else if (doc && spec.distractors.length > 0) {
        const d = spec.distractors[(st.wikiCalls - 1) % spec.distractors.length]!;
        st.steps.push({ type: 'tool_call', tool: 'wiki', input: d.title, output: d.text });
        st.lastNothingNew = true;
      } else {
        st.steps.push({ type: 'tool_call', tool: 'wiki', input: spec.task, output: 'No further article found.' });
        st.lastNothingNew = true;
      }
      return;
    }
    case CALC: {
      st.calcCalls += 1;
      const c = spec.calc[st.calcFound];
      if (c && ready(spec, st)) {
        st.steps.push({ type: 'tool_call', tool: 'calc', input: c.expr, output: c.result });
        for (const t of c.thoughts) st.steps.push({ type: 'thought', text: t });
        st.calcFound += 1;
        st.lastNothingNew = false;
      } else {
        st.steps.push({ type: 'tool_call', tool: 'calc', input: '?', output: c ? 'error: a value in the expression is unknown' : 'error: nothing to compute' });
        st.lastNothingNew = true;
      }
      return;
    }
  }
}

/** The answer the episode ends with (see the head of this file). */
function answerOf(spec: EnvScenario, st: DialogueState, rng: TrainRng): string {
  const gathered = ready(spec, st) && st.wikiFound >= spec.wiki.length && st.calcFound >= spec.calc.length;
  if (gathered) {
    for (const t of spec.answerThoughts) st.steps.push({ type: 'thought', text: t });
    return spec.finalAnswer;
  }
  switch (spec.task) {
    case 'strategyqa':
      return rng.next() < 0.5 ? 'yes' : 'no';
    case 'gsm8k': {
      const found = st.calcFound > 0 && ready(spec, st) ? spec.calc[st.calcFound - 1]!.result : null;
      return found ?? spec.lastNumber ?? '0';
    }
    case 'hotpotqa':
      return st.wikiFound > 0 && ready(spec, st) ? spec.wiki[st.wikiFound - 1]!.title : 'I could not find it.';
  }
}

/** Scores the finished trajectory and computes its reward. */
function outcome(spec: EnvScenario, st: DialogueState, finalAnswer: string, answered: boolean, o: EnvOptions): EpisodeOutcome {
  const r = buildRollout(spec.scenario, { steps: st.steps, final_answer: finalAnswer }, { source: 'synthetic', policy: 'rc1-train-policy', candidate_index: 0, error_modes: [] });
  const { scores } = heuristicBase(r);
  const reward = rc1Reward(scores, o.weights, { needsClarification: spec.needsClarification, clarifications: st.clarifications, difficulty: spec.difficulty }, o.reward);
  return {
    success: r.success, reward, scores, answered, actions: st.turn, clarifications: st.clarifications,
    turns: r.turns, toolCalls: r.tool_calls, finalAnswer,
  };
}

/**
 * Applies one action. Returns the outcome when the episode ends (an answer, or max_turns reached),
 * else null. `rng` draws the guesses of a premature answer.
 */
export function stepEnv(spec: EnvScenario, st: DialogueState, a: number, rng: TrainRng, o: EnvOptions): EpisodeOutcome | null {
  if (st.done) throw new Error('internal error: stepEnv on a finished episode; please report this');
  st.turn += 1;
  if (a === ANSWER) {
    st.done = true;
    return outcome(spec, st, answerOf(spec, st, rng), true, o);
  }
  act(spec, st, a);
  if (st.turn >= o.maxTurns) {
    st.done = true;
    return outcome(spec, st, '', false, o);
  }
  return null;
}
