// The policy's observation: hand-built features of the request text and of the dialogue so far.
// What the policy may see is what an assistant in the dialogue could see, and nothing else:
//   - the task family (the request's form and the tools offered make it plain);
//   - text features of the user's turns: a placeholder phrase where a name or number should be
//     ("a certain", "the one I'm thinking of", "that thing", "something"…; a small hand-written
//     lexicon), how many numbers, named entities and words the request has, a pronoun before any
//     name. Under-specification is visible ONLY through these cues: the scenario's
//     needs_clarification label, its hidden detail, its difficulty bucket, the gold answer and the
//     reference are never read into an observation;
//   - the dialogue state: turns used and left, clarifying questions asked and whether the user's
//     reply added a detail, wiki / calc calls made and how many returned something new, whether
//     the last call returned nothing new, and whether the tool results received so far complete
//     the work (an assistant reading the retrieved articles or its computed steps can tell; the
//     environment says so as the tool output would).
// Every feature is scaled to [0, 1].
import { phraseIndex, countPhrases, entitySpans, distinctEntities, pronounBeforeName } from '../../difficulty/text-cues.ts';
import type { Scenario } from '../../data/index.ts';
import { tokenize } from '../../text/tokenize.ts';
import type { DialogueState } from './dialogue-env.ts';
import type { EnvScenario } from './scenario-spec.ts';

/** Placeholder phrases that stand where a name, a term or a number should be. */
export const PLACEHOLDER_CUES = [
  'a certain', 'some kind of', 'something', 'someone', 'somebody', 'somewhere', 'whatever',
  'the one i', "the one i'm", 'the one my', 'that one', 'the thing i', 'that thing', 'you know who',
  'some money', 'some percentage', 'some amount',
];
const PLACEHOLDERS = phraseIndex(PLACEHOLDER_CUES);
const SOME = phraseIndex(['some']);
const PRONOUNS = /\b(?:he|she|it|they|him|her|them|his|its|their)\b/i;

export const STATIC_FEATURES = ['task_hotpotqa', 'task_strategyqa', 'task_gsm8k', 'placeholder_cue', 'some_count', 'numbers', 'named_entities', 'words', 'pronoun_before_name'] as const;
export const DYNAMIC_FEATURES = [
  'turn', 'last_turn', 'asked', 'reply_added_detail', 'wiki_calls', 'wiki_new', 'calc_calls', 'calc_new', 'last_call_nothing_new', 'work_complete',
] as const;
export const FEATURE_NAMES = [...STATIC_FEATURES, ...DYNAMIC_FEATURES] as const;
export const OBS_DIM = FEATURE_NAMES.length;

const cap = (n: number, max: number): number => Math.min(n, max) / max;

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

/** Writes the observation of a dialogue state into `out` (length OBS_DIM) at `offset`. */
export function observe(spec: EnvScenario, st: DialogueState, maxTurns: number, out: Float32Array, offset = 0): void {
  const f = spec.features;
  for (let i = 0; i < f.length; i++) out[offset + i] = f[i]!;
  let o = offset + f.length;
  out[o++] = st.turn / maxTurns;
  out[o++] = st.turn === maxTurns - 1 ? 1 : 0;
  out[o++] = cap(st.clarifications, 3);
  out[o++] = st.clarified ? 1 : 0;
  out[o++] = cap(st.wikiCalls, 4);
  out[o++] = cap(st.wikiFound, 4);
  out[o++] = cap(st.calcCalls, 10);
  out[o++] = cap(st.calcFound, 10);
  out[o++] = st.lastNothingNew ? 1 : 0;
  out[o++] = st.wikiFound >= spec.wiki.length && st.calcFound >= spec.calc.length && (spec.wiki.length + spec.calc.length > 0) ? 1 : 0;
}
