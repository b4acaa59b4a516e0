// Leak detection against the held-out (shadow) questions, with an inverted index (no all-pairs
// comparison). Both sides are reduced to their CONTENT tokens, so light edits do not hide a copy:
//   leakTokens  thousands separators and trailing decimal zeros dropped from numbers ("1,200.00"
//               → "1200"), "%" and "per cent" made "percent", apostrophes made spaces (so "what's"
//               and "what s" agree), tokenize() (case, Unicode forms and punctuation ignored),
//               number words made digits (runs and hyphenated compounds: "twenty-five" → "25",
//               "two hundred and five" → "205"), then function words (articles, pronouns,
//               prepositions, auxiliaries, conjunctions, contraction pieces…) and a lone "1" or
//               "one" removed — "the" → "this", "a" → "one" or "one" → "1" changes nothing.
// A held-out question's grams G(s) are the word n-grams of its content tokens within each of its
// sentences (a sentence shorter than n is one gram of its own), so a rendering that cuts the
// question at a sentence boundary (the problem in one turn, the question asked in the next) loses
// no gram. A pool scenario's grams G(p) are taken over ALL its user turns and the clarification
// reply joined in order, so a question split across turns is seen whole.
//   similarity(p, s) = |G(s) ∩ G(p)| / |G(s)|   (containment of the held-out question in p)
// and, separately, the contexts: a pool scenario whose supporting documents are exactly a held-out
// item's (same normalised texts) is a leak of that item whatever its question says (similarity 1,
// `by: context`). A pool scenario leaks when its best similarity exceeds the threshold.
import { createHash } from 'node:crypto';
import type { ContextDoc } from '../data/index.ts';
import { tokenize } from '../text/index.ts';
import { sentences } from './variants.ts';

export const LEAK_DEFINITION =
  'similarity(pool scenario p, held-out question s) = |G(s) ∩ G(p)| / |G(s)|: G = word n-grams of content tokens (numbers normalised — thousands separators and trailing decimal zeros dropped, "%" and "per cent" as "percent", apostrophes as spaces —, tokenize(), number words as digits (runs and hyphenated compounds up to thousands), function words and a lone "1"/"one" removed); G(s) within each sentence of the held-out source question (a sentence shorter than n is one gram), G(p) over all user turns and the clarification reply joined in order. A scenario whose supporting documents equal a held-out item\'s (normalised texts) has similarity 1 by context. A pool scenario leaks when its best similarity exceeds the threshold; found through an inverted index from n-grams to held-out questions';

/** Function words removed before comparing (a swap among them is not a content change). */
export const FUNCTION_WORDS = new Set(
  (
    'a an the this that these those some any each every either neither no one another other such what which who whom whose ' +
    'i me my mine we us our ours you your yours he him his she her hers it its they them their theirs ' +
    'am is are was were be been being do does did done has have had having will would shall should can could may might must ' +
    'of in on at to for from by with about as into onto over under than then so if or and but nor also too very just only ' +
    'there here how when where why up down out off again all both s t d m ll re ve'
  ).split(' '),
);

const UNITS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SMALL = new Map<string, number>([
  ...UNITS.map((w, i) => [w, i] as const),
  ...TENS.map((w, i) => [w, 10 * i] as const).filter(([w]) => w !== ''),
]);
const SCALE = new Map([
  ['hundred', 100],
  ['thousand', 1000],
]);
const NUMBER_WORDS = new Set([...SMALL.keys(), ...SCALE.keys()]);
const isNumberWord = (t: string): boolean => NUMBER_WORDS.has(t);

/**
 * Number words as digits: a run like "two hundred and twenty-five" → "225", "twenty five" → "25",
 * "a hundred" → "100" (the article is a function word). A lone "one" is as often a determiner
 * ("one day") as a count, so it is dropped like a function word — and so is a lone "1", so that
 * "one" → "1" (and "a" → "one" → "1") changes nothing.
 */
function numberRuns(tokens: readonly string[], keepOne = false, drop?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; ) {
    const t = tokens[i]!;
    if (!isNumberWord(t)) {
      // With `drop`: a lone "1" and the words of `drop` are left out here rather than by a later filter.
      if (drop === undefined || (t !== '1' && !drop.has(t))) out.push(t);
      i++;
      continue;
    }
    let total = 0,
      current = 0,
      last: 'unit' | 'tens' | 'scale' | null = null,
      j = i;
    for (; j < tokens.length; j++) {
      let t = tokens[j]!;
      if (t === 'and' && last === 'scale' && j + 1 < tokens.length && SMALL.has(tokens[j + 1]!)) t = tokens[++j]!;
      const small = SMALL.get(t);
      const scale = SCALE.get(t);
      if (small !== undefined) {
        const tens = small >= 20;
        if (last === 'unit' || (last === 'tens' && (tens || small >= 10))) break;
        current += small;
        last = tens ? 'tens' : 'unit';
      } else if (scale !== undefined) {
        if (scale === 100 && current % 1000 >= 100) break;
        if (scale === 100) current = (current === 0 ? 1 : current) * 100;
        else {
          total += (current === 0 ? 1 : current) * 1000;
          current = 0;
        }
        last = 'scale';
      } else break;
    }
    const value = String(total + current);
    if (keepOne || value !== '1') out.push(value);
    i = j;
  }
  return out;
}

/** The content tokens of a text, as the leak check compares them. */
export function leakTokens(text: string): string[] {
  const numbers = text
    .replace(/(\d),(?=\d{3}(?!\d))/g, '$1')
    .replace(/(\d)\.0+(?!\d)/g, '$1')
    .replace(/%/g, ' percent ')
    .replace(/\bper[\s-]+cent\b/gi, 'percent')
    .replace(/['’]/g, ' ');
  // A hyphenated token of tokenize() that is one number ("twenty-five") is split into its words,
  // so that "two hundred and twenty-five" is one run; in any other, its number words are made
  // digits inside it: "sixteen-inch" → "16-inch", "five-four" → "5-4" (as the digits are written).
  const tokens: string[] = [];
  for (const t of tokenize(numbers)) {
    if (!t.includes('-')) {
      tokens.push(t);
      continue;
    }
    const parts = t.split('-');
    const digits = numberRuns(parts, true);
    if (digits.length === 1 && parts.every(isNumberWord)) for (const p of parts) tokens.push(p);
    else tokens.push(digits.join('-'));
  }
  // A run's value is digits (never a function word) and is "1" only where numberRuns drops it.
  return numberRuns(tokens, false, FUNCTION_WORDS);
}

/** A hash of the supporting documents' normalised texts (sorted); null when there are none. */
export function contextKey(
  context: readonly ContextDoc[],
  normalized: (text: string) => string = normalizeDoc,
): string | null {
  const docs = context
    .filter((d) => d.supporting)
    .map((d) => normalized(d.text))
    .filter((t) => t !== '')
    .sort();
  return docs.length === 0 ? null : createHash('sha256').update(docs.join('\n')).digest('hex').slice(0, 24);
}

const normalizeDoc = (text: string): string => tokenize(text).join(' ');

export interface HeldOut {
  id: string;
  question: string;
  context: readonly ContextDoc[];
}

export interface LeakMatch {
  shadowId: string;
  similarity: number;
  by: 'text' | 'context';
}

function grams(tokens: readonly string[], n: number): string[] {
  if (tokens.length === 0) return [];
  if (tokens.length < n) return [tokens.join(' ')];
  const out: string[] = [];
  for (let i = 0; i + n <= tokens.length; i++) out.push(gramAt(tokens, i, n));
  return out;
}

/** tokens[i..i+n) joined by single spaces (tokens.slice(i, i + n).join(' '), without the array). */
function gramAt(tokens: readonly string[], i: number, n: number): string {
  let g = tokens[i]!;
  for (let k = 1; k < n; k++) g += ` ${tokens[i + k]!}`;
  return g;
}

export class LeakIndex {
  private readonly index = new Map<string, number[]>();
  private readonly contexts = new Map<string, number>();
  private readonly sizes: number[] = [];
  private readonly ids: string[] = [];
  private readonly shortLengths = new Set<number>();
  /** Every token of an indexed gram: a gram with any other token cannot be in the index. */
  private readonly vocabulary = new Set<string>();
  /** Per distinct document text, its normalised text; per distinct supporting-document list, its context key (a pool renders each source item many times). */
  private readonly docTexts = new Map<string, string>();
  private readonly contextKeys = new Map<string, string | null>();
  private readonly normalized = (text: string): string => {
    let t = this.docTexts.get(text);
    if (t === undefined) {
      t = normalizeDoc(text);
      this.docTexts.set(text, t);
    }
    return t;
  };

  constructor(
    heldOut: readonly HeldOut[],
    private readonly n: number,
  ) {
    for (const s of heldOut) {
      const set = new Set<string>();
      for (const sentence of sentences(s.question.replace(/\s+/g, ' ').trim())) {
        const toks = leakTokens(sentence);
        if (toks.length > 0 && toks.length < n) this.shortLengths.add(toks.length);
        for (const g of grams(toks, n)) set.add(g);
      }
      const at = this.ids.length;
      this.ids.push(s.id);
      this.sizes.push(set.size);
      for (const g of set) {
        for (const t of g.split(' ')) this.vocabulary.add(t);
        const list = this.index.get(g);
        if (list) list.push(at);
        else this.index.set(g, [at]);
      }
      const key = contextKey(s.context, this.normalized);
      if (key !== null && !this.contexts.has(key)) this.contexts.set(key, at);
    }
  }

  private contextKeyOf(context: readonly ContextDoc[]): string | null {
    let raw = '';
    for (const d of context) if (d.supporting) raw += `${d.text.length}:${d.text}`;
    let key = this.contextKeys.get(raw);
    if (key === undefined) {
      key = contextKey(context, this.normalized);
      this.contextKeys.set(raw, key);
    }
    return key;
  }

  get heldOutItems(): number {
    return this.ids.length;
  }

  /** The held-out question most contained in the scenario's text (user turns and reply, joined), or matched by context; null when none shares a gram. */
  best(texts: readonly string[], context: readonly ContextDoc[] = []): LeakMatch | null {
    const key = this.contextKeyOf(context);
    const byContext = key === null ? undefined : this.contexts.get(key);
    if (byContext !== undefined) return { shadowId: this.ids[byContext]!, similarity: 1, by: 'context' };
    const toks = leakTokens(texts.join('\n'));
    // Each distinct gram of the scenario counts once per held-out question holding it; only the
    // grams the index holds are remembered (a scenario's other grams cannot add a hit), and a gram
    // is only built where its tokens all occur in some indexed gram.
    const matched = new Set<string>();
    const hits = new Map<number, number>();
    const look = (g: string): void => {
      const list = this.index.get(g);
      if (list === undefined || matched.has(g)) return;
      matched.add(g);
      for (const at of list) hits.set(at, (hits.get(at) ?? 0) + 1);
    };
    // run[i]: how many tokens from i on are in the vocabulary (0 where toks[i] is not).
    const run = new Uint32Array(toks.length + 1);
    for (let i = toks.length - 1; i >= 0; i--) run[i] = this.vocabulary.has(toks[i]!) ? run[i + 1]! + 1 : 0;
    const lookAll = (len: number): void => {
      if (toks.length < len) {
        if (toks.length > 0 && run[0] === toks.length) look(toks.join(' '));
        return;
      }
      for (let i = 0; i + len <= toks.length; i++) if (run[i]! >= len) look(gramAt(toks, i, len));
    };
    lookAll(this.n);
    for (const len of this.shortLengths) lookAll(len);
    let best: LeakMatch | null = null;
    for (const [at, h] of hits) {
      const similarity = h / this.sizes[at]!;
      if (!best || similarity > best.similarity || (similarity === best.similarity && this.ids[at]! < best.shadowId)) {
        best = { shadowId: this.ids[at]!, similarity, by: 'text' };
      }
    }
    return best;
  }
}
