// The policy's observation: hand-built features of the text the agent has seen, and nothing else.
//   - the task family (the request's form and the tools offered make it plain);
//   - text features of the user's turns (staticFeatures, from the messages alone): a placeholder
//     phrase where a name or number should be ("a certain", "the one I'm thinking of", "that
//     thing", "something"…; a small hand-written lexicon), how many numbers, named entities and
//     words the request has, a pronoun before any name;
//   - features of the transcript (observe, from DialogueState.events: the user's replies and the
//     tools' outputs as text): turns used and left; questions asked, how many content words the
//     last reply brought that the request did not have, and whether it holds a number or a name
//     the request did not have (what a reader checks first: a vague reply can be long and wordy,
//     and even name someone, so neither is proof); wiki calls and the distinct pages returned, and
//     how many of their titles share a word with the request; calc calls and the distinct results
//     returned; whether the last tool output was an error, a time-out, "no article", or a repeat
//     of an earlier output; the share of the last page title's words that occur in the request.
// The placeholder lexicon is a general list of phrases that stand in for a name or number; it is
// not the template pack's list of gap fillers, many of which it does not contain (a vague
// quantifier, "the usual amount", a possessive), as no hand-written list covers how people leave
// a detail out.
// No feature reads the scenario's needs_clarification label, its hidden detail, its difficulty,
// the gold answer, the reference, or the simulator's counters (how many pages are still needed,
// whether the work is complete): the agent must infer those from the text, as a model would.
// Every feature is scaled to [0, 1].
import {
  phraseIndex,
  countPhrases,
  entitySpans,
  distinctEntities,
  pronounBeforeName,
} from '../../difficulty/text-cues.ts';
import type { Scenario } from '../../data/index.ts';
import { tokenize } from '../../text/tokenize.ts';
import { TIMEOUT, NO_ARTICLE, type VisibleEvent } from './visible-text.ts';

/** Placeholder phrases that stand where a name, a term or a number should be. */
export const PLACEHOLDER_CUES = [
  'a certain',
  'some kind of',
  'something',
  'someone',
  'somebody',
  'somewhere',
  'whatever',
  'the one i',
  "the one i'm",
  'the one my',
  'that one',
  'the thing i',
  'that thing',
  'you know who',
  'some money',
  'some percentage',
  'some amount',
];
const PLACEHOLDERS = phraseIndex(PLACEHOLDER_CUES);
const SOME = phraseIndex(['some']);
const PRONOUNS = /\b(?:he|she|it|they|him|her|them|his|its|their)\b/i;

export const STATIC_FEATURES = [
  'task_hotpotqa',
  'task_strategyqa',
  'task_gsm8k',
  'placeholder_cue',
  'some_count',
  'numbers',
  'named_entities',
  'words',
  'pronoun_before_name',
] as const;
export const DYNAMIC_FEATURES = [
  'turn',
  'last_turn',
  'asked',
  'reply_new_words',
  'reply_has_value',
  'wiki_calls',
  'wiki_pages',
  'wiki_pages_on_topic',
  'calc_calls',
  'calc_results',
  'last_error',
  'last_timeout',
  'last_no_article',
  'last_repeat',
  'last_title_overlap',
] as const;
export const FEATURE_NAMES = [...STATIC_FEATURES, ...DYNAMIC_FEATURES] as const;
export const OBS_DIM = FEATURE_NAMES.length;

const cap = (n: number, max: number): number => Math.min(n, max) / max;

/** The caps of the count features (a count c is observed as min(c, cap) / cap). */
export const COUNT_CAPS = {
  asked: 3,
  reply_new_words: 3,
  wiki_calls: 6,
  wiki_pages: 4,
  wiki_pages_on_topic: 4,
  calc_calls: 10,
  calc_results: 8,
} as const;

/** A feature of an observation by name, unscaled for the count features (capped counts). */
export function feature(obs: Float32Array, name: (typeof FEATURE_NAMES)[number], offset = 0): number {
  const v = obs[offset + FEATURE_NAMES.indexOf(name)]!;
  return name in COUNT_CAPS ? Math.round(v * COUNT_CAPS[name as keyof typeof COUNT_CAPS]) : v;
}

/** The request-text features (STATIC_FEATURES order). */
export function staticFeatures(s: Pick<Scenario, 'task' | 'messages'>): Float64Array {
  const text = s.messages.map((m) => m.content).join('\n');
  const tokens = tokenize(text);
  const spans = entitySpans(text);
  const ents = distinctEntities(spans);
  const numbers = spans.filter((sp) => sp.numeric).length;
  return Float64Array.from([
    s.task === 'hotpotqa' ? 1 : 0,
    s.task === 'strategyqa' ? 1 : 0,
    s.task === 'gsm8k' ? 1 : 0,
    countPhrases(tokens, PLACEHOLDERS) > 0 ? 1 : 0,
    cap(countPhrases(tokens, SOME), 3),
    cap(numbers, 12),
    cap(ents.named, 12),
    cap(tokens.length, 300),
    pronounBeforeName(text, spans, PRONOUNS) ? 1 : 0,
  ]);
}

/**
 * Words that carry no content (the overlap and novelty features ignore them). Every canned reply of
 * the environment (VAGUE_REPLY, NOTHING_TO_ADD, the "As I said:" prefix) is made of these only, so
 * a reply that brings nothing counts 0 new words (test/unit/train-env.test.ts).
 */
const STOP = new Set(
  (
    'a an the of in on at to for and or but am is are was were be been it its this that these those i you he she we they my your his her our their me him us them ' +
    'what which who whom whose when where why how do does did not no nothing there here as by with from about into than then so if just all any some one ones usual guess ' +
    "hmm sure put said add everything question mean meant it's i'm good catch number"
  ).split(' '),
);
const content = (text: string): string[] => tokenize(text).filter((t) => t.length > 1 && !STOP.has(t));

/** What observe() needs from a scenario: its request text (as words and entity keys) and the request's text features. Nothing else. */
export interface AgentView {
  requestWords: ReadonlySet<string>;
  requestEntities: ReadonlySet<string>;
  features: Float64Array;
}

export function agentView(s: Pick<Scenario, 'task' | 'messages'>): AgentView {
  const text = s.messages.map((m) => m.content).join('\n');
  return {
    requestWords: new Set(content(text)),
    requestEntities: new Set(entitySpans(text).map((sp) => sp.key)),
    features: staticFeatures(s),
  };
}

const isError = (e: VisibleEvent): boolean => e.text.startsWith('error:');

/** Share of a page title's content words that occur in the request (0 for a title with none). */
export function titleOverlap(title: string, request: ReadonlySet<string>): number {
  const w = content(title);
  return w.length === 0 ? 0 : w.filter((x) => request.has(x)).length / w.length;
}

/**
 * Writes the observation into `out` (length OBS_DIM) at `offset`: the request's features, then the
 * transcript's (`events`, what the agent has seen), at turn `turn` of `maxTurns`.
 */
export function observe(
  view: AgentView,
  events: readonly VisibleEvent[],
  turn: number,
  maxTurns: number,
  out: Float32Array,
  offset = 0,
): void {
  const f = view.features;
  for (let i = 0; i < f.length; i++) out[offset + i] = f[i]!;
  let o = offset + f.length;
  const seen = new Set(view.requestWords);
  let asked = 0;
  let replyNew = 0;
  let replyValue = false;
  let wikiCalls = 0;
  let calcCalls = 0;
  const pages = new Set<string>();
  let onTopic = 0;
  const results = new Set<string>();
  for (const e of events) {
    if (e.action === 'ask') {
      asked += 1;
      const words = content(e.text);
      replyNew = words.filter((w) => !seen.has(w)).length;
      replyValue = entitySpans(e.text).some((sp) => !view.requestEntities.has(sp.key));
      for (const w of words) seen.add(w);
    } else if (e.action === 'wiki') {
      wikiCalls += 1;
      if (!isError(e) && e.text !== NO_ARTICLE && !pages.has(e.text)) {
        pages.add(e.text);
        if (titleOverlap(e.title ?? '', seen) > 0) onTopic += 1;
      }
    } else {
      calcCalls += 1;
      if (!isError(e)) results.add(e.text);
    }
  }
  const last = events.length > 0 ? events[events.length - 1]! : null;
  const tool = last && last.action !== 'ask' ? last : null;
  const repeat =
    tool !== null &&
    !isError(tool) &&
    events.slice(0, -1).some((e) => e.action === tool.action && e.text === tool.text);
  out[o++] = turn / maxTurns;
  out[o++] = turn === maxTurns - 1 ? 1 : 0;
  const k = COUNT_CAPS;
  out[o++] = cap(asked, k.asked);
  out[o++] = cap(replyNew, k.reply_new_words);
  out[o++] = replyValue ? 1 : 0;
  out[o++] = cap(wikiCalls, k.wiki_calls);
  out[o++] = cap(pages.size, k.wiki_pages);
  out[o++] = cap(onTopic, k.wiki_pages_on_topic);
  out[o++] = cap(calcCalls, k.calc_calls);
  out[o++] = cap(results.size, k.calc_results);
  out[o++] = tool && isError(tool) ? 1 : 0;
  out[o++] = tool && tool.text === TIMEOUT ? 1 : 0;
  out[o++] = tool && tool.text === NO_ARTICLE ? 1 : 0;
  out[o++] = repeat ? 1 : 0;
  out[o++] = tool && tool.action === 'wiki' && tool.title ? titleOverlap(tool.title, seen) : 0;
}

/** observe() for an episode in progress: the scenario's request view and the state's transcript (its hidden counters are not read). */
export function observeState(
  spec: { view: AgentView },
  st: { events: readonly VisibleEvent[]; turn: number },
  maxTurns: number,
  out: Float32Array,
  offset = 0,
): void {
  observe(spec.view, st.events, st.turn, maxTurns, out, offset);
}
