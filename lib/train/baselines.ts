// Scripted baselines: policies written by hand from the same observation vector the trained policy
// gets (features.ts), evaluated beside it in every ppo_eval report — the sceptic's comparison. Each
// is an Actor whose log-probabilities put all mass on one action, so it plays the same way greedy
// or sampled.
//   always-answer      answers at once
//   tools-then-answer  calls the task's tool until it has what the task usually needs — hotpotqa
//                      2 pages, strategyqa 1 page, gsm8k results until the calculator has nothing
//                      left to evaluate (an error that is not a time-out) — then answers; never asks
//   ask-first          asks once, then as tools-then-answer
//   hand-rule          the best rule written from the observations: asks when the request has a
//                      placeholder phrase or a pronoun before any name (again once if the reply
//                      brought no new word), or when the tool keeps failing before any result; reads
//                      pages until enough of them share a word with the request (or one spare page
//                      more), computes until the calculator has nothing left, retries time-outs,
//                      and answers on the last turn whatever it has
import { ANSWER, ASK, CALC, N_ACTIONS, WIKI } from './env/dialogue-env.ts';
import { feature } from './env/features.ts';
import type { Actor } from './policy.ts';

export const BASELINE_NAMES = ['always-answer', 'tools-then-answer', 'ask-first', 'hand-rule'] as const;
export type BaselineName = (typeof BASELINE_NAMES)[number];

type Rule = (f: (name: Parameters<typeof feature>[1]) => number) => number;

const task = (f: Parameters<Rule>[0]): 'hotpotqa' | 'strategyqa' | 'gsm8k' =>
  f('task_gsm8k') ? 'gsm8k' : f('task_strategyqa') ? 'strategyqa' : 'hotpotqa';

/** The task's tool until it has what the task usually needs, then the answer. */
function toolsThenAnswer(f: Parameters<Rule>[0]): number {
  if (f('last_turn')) return ANSWER;
  switch (task(f)) {
    case 'hotpotqa':
      return f('wiki_pages') >= 2 ? ANSWER : WIKI;
    case 'strategyqa':
      return f('wiki_pages') >= 1 ? ANSWER : WIKI;
    case 'gsm8k':
      return f('last_error') && !f('last_timeout') ? ANSWER : CALC;
  }
}

function handRule(f: Parameters<Rule>[0]): number {
  if (f('last_turn')) return ANSWER;
  const asked = f('asked');
  const cue = f('placeholder_cue') > 0 || f('pronoun_before_name') > 0;
  if (cue && asked === 0) return ASK;
  if (cue && asked === 1 && f('reply_new_words') === 0) return ASK;
  const t = task(f);
  if (t === 'gsm8k') {
    const results = f('calc_results');
    const hardError = f('last_error') && !f('last_timeout');
    if (hardError && results === 0 && asked === 0) return ASK;
    if (hardError && results > 0) return ANSWER;
    return f('calc_calls') >= 9 ? ANSWER : CALC;
  }
  const need = t === 'hotpotqa' ? 2 : 1;
  const pages = f('wiki_pages');
  const onTopic = f('wiki_pages_on_topic');
  if (pages >= 2 && onTopic === 0 && asked === 0) return ASK;
  if (onTopic >= need || pages >= need + 1 || f('last_no_article')) return ANSWER;
  return WIKI;
}

const RULES: Record<BaselineName, Rule> = {
  'always-answer': () => ANSWER,
  'tools-then-answer': toolsThenAnswer,
  'ask-first': (f) => (f('asked') === 0 && !f('last_turn') ? ASK : toolsThenAnswer(f)),
  'hand-rule': handRule,
};

/** A scripted baseline as an Actor: all probability on the rule's action. */
export function baselineActor(name: BaselineName, maxTurns: number): Actor {
  const rule = RULES[name];
  return {
    maxTurns,
    logProbs(obs, offset = 0) {
      const a = rule((n) => feature(obs, n, offset));
      const lp = new Float64Array(N_ACTIONS).fill(-Infinity);
      lp[a] = 0;
      return lp;
    },
  };
}
