// Per-scenario measures shared by the seed pool and its validation, each with the definition the
// reports quote. Length counts what the model is shown: the user turns and the documents of the
// wiki context (title and text), in `tokenize` tokens (the Qwen3 BPE length is len_tokens of the
// difficulty metrics, not this). Turns count the conversation's messages: the user turns, the
// assistant's final answer, and the clarification ask and reply when the scenario needs one.
import type { ContextDoc, Message } from '../data/index.ts';
import { countTokens, tokenize } from '../text/index.ts';

export const LENGTH_DEFINITION =
  'length = number of tokenize tokens of the user turns plus, for each context document (what the wiki tool can return), its title and text';
export const TURNS_DEFINITION =
  'turns = user turns + 1 (the final answer) + 2 when needs_clarification (the ask and the reply)';

export interface ScenarioLike {
  messages: readonly Message[];
  context: readonly ContextDoc[];
  needs_clarification: boolean;
}

/** The user turns, one segment (token list) per turn. */
export function userSegments(s: { messages: readonly Message[] }): string[][] {
  return s.messages.map((m) => tokenize(m.content));
}

export function contextTokens(context: readonly ContextDoc[]): number {
  let n = 0;
  for (const d of context) n += countTokens(d.title) + countTokens(d.text);
  return n;
}

export function scenarioLength(s: ScenarioLike): number {
  let n = contextTokens(s.context);
  for (const m of s.messages) n += countTokens(m.content);
  return n;
}

export function scenarioTurns(s: { messages: readonly unknown[]; needs_clarification: boolean }): number {
  return s.messages.length + 1 + (s.needs_clarification ? 2 : 0);
}
