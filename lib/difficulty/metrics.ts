// Per-scenario difficulty metrics (docs/rc1.md difficulty_metrics), and the definitions
// written into the difficulty report. One MetricsComputer serves a whole pool: it remembers the
// sentence 3-gram sets of every supporting document and the Qwen3 count of every long text, because
// a seed pool renders each source item many times with the same documents.
import type { Scenario } from '../data/scenario.ts';
import { ngrams, tokenize, TOKENIZATION } from '../text/tokenize.ts';
import {
  CONNECTIVES_EN,
  CONNECTIVES_ZH,
  OPEN_TIME_EN,
  OPEN_TIME_ZH,
  OPERATION_CUES_EN,
  OPERATION_CUES_ZH,
  PRONOUNS_EN,
  PRONOUNS_ZH,
  THIRD_PERSON_EN,
  THIRD_PERSON_ZH,
  VAGUE_CUES_EN,
  VAGUE_CUES_ZH,
} from './lexicon.ts';
import { QWEN3_COUNTING, type Qwen3Counter } from './qwen3-tokens.ts';
import {
  countCalcOperators,
  countInlineOperators,
  countPhrases,
  distinctEntities,
  entitySpans,
  firstPhrase,
  phraseIndex,
  pronounBeforeName,
} from './text-cues.ts';

export const AMBIGUITY_FLAGS = [
  'under-specified',
  'multi-entity',
  'pronoun-without-antecedent',
  'open-time-range',
] as const;
export type AmbiguityFlag = (typeof AMBIGUITY_FLAGS)[number];

/** One line of the metrics JSONL; keys in this order. */
export interface DifficultyMetrics {
  id: string;
  task: string;
  len_tokens: number;
  turns: number;
  tool_hops: number;
  /** Reasoning steps of the reference: solution lines (gsm8k), supporting documents looked up (hotpotqa), decomposition steps (strategyqa). */
  hops: number;
  /** Context documents that do not support the answer (hotpotqa's distractor paragraphs; 0 where every document supports it). */
  distractors: number;
  entities: number;
  ops_numeric: number;
  connector_density: number;
  coref_pronouns: number;
  /** null where the task has no supporting text (gsm8k). */
  clue_overlap: number | null;
  ambiguity_flags: AmbiguityFlag[];
  needs_clarification: boolean;
}

export interface MetricsOptions {
  /** multi-entity: at least this many distinct named (non-numeric) entities in the request. */
  multiEntityMin: number;
}

/** The definitions, as written into the difficulty report. */
export const METRIC_DEFINITIONS = {
  request_text:
    "the rendered user turns (messages) and, when the scenario needs clarification, the user's clarification reply, joined by newlines",
  words: `tokens of the project's tokenize(): ${TOKENIZATION}`,
  len_tokens: `Qwen3 tokens of what the model reads: every user turn, the clarification reply (if any), and the title and text of every context document (${QWEN3_COUNTING})`,
  turns:
    "dialogue turns: the user turns, two per clarification exchange in the reference (the assistant's question and the user's reply), and the assistant's final answer; tool calls and thoughts are not turns",
  tool_hops: 'tool_call steps in the reference trajectory (wiki and calc alike)',
  hops: 'reasoning steps of the reference trajectory, clarification left out: its thought steps (gsm8k solution lines, strategyqa decomposition steps) plus its wiki look-ups (hotpotqa supporting documents); calc calls are counted by ops_numeric instead',
  distractors:
    'context documents marked not supporting (hotpotqa distractor paragraphs); 0 for a task whose documents all support the answer or that has none',
  entities:
    "distinct entities in the request text: English proper-noun-like spans (capitalised words, joined by of/the/de/van/von…; common words that start sentences, such as The, How, His, Please, I'm, removed: lexicon NOT_NAMES), numbers (distinct values), Chinese titles in 《》「」『』 and Chinese person references (common surname + up to 2 characters + honorific such as 先生/老师)",
  ops_numeric:
    "with calculator calls in the reference (gsm8k): the binary arithmetic operators (+ - * / % ^ × ÷) of all calc expressions; otherwise: arithmetic symbols between numbers plus arithmetic, comparison and date-difference words (English and Chinese lists) in the request text and in each of the reference's thought steps (counted text by text)",
  connector_density: `logical connectives per 100 words of the request text (0 for an empty text); English: ${CONNECTIVES_EN.join(', ')}; Chinese: ${CONNECTIVES_ZH.join('、')}`,
  coref_pronouns: `occurrences in the request text of: ${[...PRONOUNS_EN, ...PRONOUNS_ZH].join(', ')}`,
  clue_overlap:
    "3-gram Jaccard (tokenize() 3-grams, as sets) of the question sentence and the supporting sentence most alike: the maximum over every pair of a sentence of the request text and a sentence of the supporting documents (hotpotqa: the paragraphs marked supporting; strategyqa: its facts). Sentences are split after . ! ? 。 ！ ？ and at line breaks, so a template's framing sentences neither dilute nor replace the question sentence. null for gsm8k, which has no supporting text. Lower means harder.",
  ambiguity_flags:
    'rule hits on the request text: under-specified (the scenario needs clarification, or a placeholder such as "something", "a certain", 某个), multi-entity (at least difficulty.metrics.multi_entity_min distinct named entities), pronoun-without-antecedent (he/she/it/they… or 他/她/它/其 before any named entity), open-time-range (current, recently, so far, 目前, 最近… and no four-digit year)',
  needs_clarification: 'copied from the scenario',
} as const;

const CONNECTIVES = phraseIndex(CONNECTIVES_EN, CONNECTIVES_ZH);
const PRONOUNS = phraseIndex(PRONOUNS_EN, PRONOUNS_ZH);
const OPERATION_CUES = phraseIndex(OPERATION_CUES_EN, OPERATION_CUES_ZH);
const VAGUE = phraseIndex(VAGUE_CUES_EN, VAGUE_CUES_ZH);
const OPEN_TIME = phraseIndex(OPEN_TIME_EN, OPEN_TIME_ZH);
const THIRD_PERSON = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:${THIRD_PERSON_EN.join('|')})(?![\\p{L}\\p{N}])|[${THIRD_PERSON_ZH.join('')}]`,
  'iu',
);
const YEAR = /(?<!\d)(?:1[0-9]|20)\d\d(?!\d)/;
const SENTENCE_END = /(?<=[.!?])\s+|(?<=[。！？])|\n+/u;

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** The 3-gram set of each sentence of a text (sentences without a 3-gram left out). */
function sentenceGrams(text: string): Set<string>[] {
  return text
    .split(SENTENCE_END)
    .map((x) => new Set(ngrams(tokenize(x), 3)))
    .filter((g) => g.size > 0);
}

/** The text the user writes: rendered turns, then the clarification reply. */
export function requestText(s: Scenario): string {
  const parts = s.messages.map((m) => m.content);
  if (s.needs_clarification && s.clarification !== null) parts.push(s.clarification);
  return parts.join('\n');
}

/**
 * The sentences of a document as clue_overlap compares them: each sentence's 3-gram count, and per
 * 3-gram the sentences holding it (an inverted index, so a request sentence is compared only with
 * the sentences it shares a 3-gram with; the others' Jaccard is 0).
 */
export interface DocGrams {
  sizes: number[];
  holders: Map<string, number[]>;
}

export function docGrams(text: string): DocGrams {
  const sets = sentenceGrams(text);
  const holders = new Map<string, number[]>();
  for (let i = 0; i < sets.length; i++) {
    for (const g of sets[i]!) {
      const list = holders.get(g);
      if (list) list.push(i);
      else holders.set(g, [i]);
    }
  }
  return { sizes: sets.map((x) => x.size), holders };
}

/**
 * The largest Jaccard similarity of `asked` (a sentence's 3-gram set) with a sentence of the
 * document: |A ∩ B| / (|A| + |B| − |A ∩ B|), as jaccard() computes it, over the sentences sharing
 * a 3-gram with it; 0 when none does. `counts` is scratch space of at least sizes.length zeros,
 * left zeroed.
 */
export function bestJaccard(asked: ReadonlySet<string>, doc: DocGrams, counts: Int32Array): number {
  const touched: number[] = [];
  for (const g of asked) {
    const list = doc.holders.get(g);
    if (list === undefined) continue;
    for (const i of list) {
      const c = counts[i]!;
      counts[i] = c + 1;
      if (c === 0) touched.push(i);
    }
  }
  let best = 0;
  for (const i of touched) {
    const inter = counts[i]!;
    counts[i] = 0;
    best = Math.max(best, inter / (asked.size + doc.sizes[i]! - inter));
  }
  return best;
}

export class MetricsComputer {
  private readonly docGrams = new Map<string, DocGrams>();
  private counts = new Int32Array(64);

  constructor(
    private readonly counter: Qwen3Counter,
    private readonly options: MetricsOptions,
  ) {}

  compute(s: Scenario): DifficultyMetrics {
    const request = requestText(s);
    const words = tokenize(request);
    const steps = s.reference.steps;
    let clarifies = 0;
    let toolHops = 0;
    let hops = 0;
    let calcOps = 0;
    let calcCalls = 0;
    const thoughts: string[] = [];
    for (const step of steps) {
      if (step.type === 'clarify') clarifies += 1;
      else if (step.type === 'tool_call') {
        toolHops += 1;
        if (step.tool === 'calc') {
          calcCalls += 1;
          calcOps += countCalcOperators(step.input);
        } else hops += 1;
      } else {
        thoughts.push(step.text);
        hops += 1;
      }
    }

    let lenTokens = 0;
    for (const m of s.messages) lenTokens += this.counter.count(m.content);
    if (s.needs_clarification && s.clarification !== null) lenTokens += this.counter.count(s.clarification);
    for (const d of s.context) lenTokens += this.counter.countRecurring(d.title) + this.counter.countRecurring(d.text);

    let ops = calcOps;
    if (calcCalls === 0) {
      ops = countInlineOperators(request) + countPhrases(words, OPERATION_CUES);
      for (const t of thoughts) ops += countInlineOperators(t) + countPhrases(tokenize(t), OPERATION_CUES);
    }

    const spans = entitySpans(request);
    const entities = distinctEntities(spans);
    const flags: AmbiguityFlag[] = [];
    if (s.needs_clarification || firstPhrase(words, VAGUE) >= 0) flags.push('under-specified');
    if (entities.named >= this.options.multiEntityMin) flags.push('multi-entity');
    if (pronounBeforeName(request, spans, THIRD_PERSON)) flags.push('pronoun-without-antecedent');
    if (firstPhrase(words, OPEN_TIME) >= 0 && !YEAR.test(request)) flags.push('open-time-range');

    return {
      id: s.id,
      task: s.task,
      len_tokens: lenTokens,
      turns: s.messages.length + 2 * clarifies + 1,
      tool_hops: toolHops,
      hops,
      distractors: s.context.filter((d) => !d.supporting).length,
      entities: entities.all,
      ops_numeric: ops,
      connector_density: words.length === 0 ? 0 : round4((100 * countPhrases(words, CONNECTIVES)) / words.length),
      coref_pronouns: countPhrases(words, PRONOUNS),
      clue_overlap: this.clueOverlap(s, request),
      ambiguity_flags: flags,
      needs_clarification: s.needs_clarification,
    };
  }

  private clueOverlap(s: Scenario, request: string): number | null {
    const supporting = s.context.filter((d) => d.supporting);
    if (supporting.length === 0) return null;
    const asked = sentenceGrams(request);
    let best = 0;
    for (const doc of supporting) {
      let grams = this.docGrams.get(doc.text);
      if (!grams) {
        grams = docGrams(doc.text);
        this.docGrams.set(doc.text, grams);
      }
      if (this.counts.length < grams.sizes.length) this.counts = new Int32Array(2 * grams.sizes.length);
      for (const a of asked) best = Math.max(best, bestJaccard(a, grams, this.counts));
    }
    return round4(best);
  }
}
