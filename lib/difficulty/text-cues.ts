// Text rules behind the difficulty metrics: phrase counting over tokenize() tokens (connectives,
// pronouns, operation cues), proper-noun-like entity spans, calculator operators and the
// pronoun-before-any-name test. Word counts and phrase matches use the project's one tokenisation
// (lib/text/tokenize.ts); entity spans are read from the raw text, because tokenize() lower-cases
// and capitalisation is what marks an English name.
import { tokenize } from '../text/tokenize.ts';
import { NAME_JOINERS, NOT_NAMES, ZH_HONORIFICS, ZH_SURNAMES } from './lexicon.ts';

/** A set of phrases, each a token sequence, indexed by first token (longest first). */
export type PhraseIndex = ReadonlyMap<string, readonly (readonly string[])[]>;

export function phraseIndex(...lists: readonly (readonly string[])[]): PhraseIndex {
  const index = new Map<string, string[][]>();
  for (const list of lists) {
    for (const phrase of list) {
      const toks = tokenize(phrase);
      const first = toks[0];
      if (first === undefined) continue;
      const bucket = index.get(first) ?? [];
      bucket.push(toks);
      index.set(first, bucket);
    }
  }
  for (const bucket of index.values()) bucket.sort((a, b) => b.length - a.length);
  return index;
}

/**
 * The length of the first phrase of a bucket (in bucket order: longest first) that occurs in tokens
 * at i, or -1 if none does. A phrase running past the end of the list does not occur (tokens[i + k]
 * is then undefined). A plain loop: this runs for every token of every request, five times.
 */
function phraseAt(tokens: readonly string[], i: number, candidates: readonly (readonly string[])[]): number {
  for (const p of candidates) {
    let k = 0;
    while (k < p.length && tokens[i + k] === p[k]) k++;
    if (k === p.length) return k;
  }
  return -1;
}

/** Non-overlapping occurrences of the phrases in a token list, longest match first, left to right. */
export function countPhrases(tokens: readonly string[], index: PhraseIndex): number {
  let n = 0;
  let i = 0;
  while (i < tokens.length) {
    const candidates = index.get(tokens[i]!);
    const len = candidates === undefined ? -1 : phraseAt(tokens, i, candidates);
    if (len > 0) {
      n += 1;
      i += len;
    } else i += 1;
  }
  return n;
}

/** Token position of the first occurrence of any phrase, or -1. */
export function firstPhrase(tokens: readonly string[], index: PhraseIndex): number {
  for (let i = 0; i < tokens.length; i++) {
    const candidates = index.get(tokens[i]!);
    if (candidates !== undefined && phraseAt(tokens, i, candidates) >= 0) return i;
  }
  return -1;
}

const WORD = "[A-Z][\\p{L}\\p{N}'’&.-]*";
const JOIN = `(?:${NAME_JOINERS.join('|')})`;
/** A capitalised word, then more capitalised words, optionally joined by lower-case particles. */
const NAME_SPAN = new RegExp(`(?<![\\p{L}\\p{N}'’])${WORD}(?:[ \\t]+(?:${JOIN}[ \\t]+)*${WORD})*`, 'gu');
const NUMBER = /(?<![A-Za-z\p{N}.,])\d+(?:[.,]\d+)*/gu;
const ZH_BRACKETED = /[《「『]([^》」』\n]{1,30})[》」』]/gu;
const ZH_PERSON = new RegExp(`[${ZH_SURNAMES}][\\p{Script=Han}]{0,2}?(?:${ZH_HONORIFICS.join('|')})`, 'gu');

export interface EntitySpan {
  /** The normalised entity key: lower-cased name, `#<number>` for a number. */
  key: string;
  /** Offset of the span in the text. */
  at: number;
  numeric: boolean;
}

const ABBREVIATION =
  /^(?:(?:\p{Lu}\.)+|Mt|St|Dr|Mr|Mrs|Ms|Jr|Sr|Ft|Gen|Col|Lt|Sgt|Capt|Rev|Prof|No|Co|Inc|Ltd|Bros|Ave|Blvd)\.?$/u;

/** Cuts a name span after a word that ends a sentence ("Lennon. If Lennon" → "Lennon.", "If Lennon"). */
function splitSentences(span: string, at: number): { text: string; at: number }[] {
  const parts: { text: string; at: number }[] = [];
  let start = 0;
  for (const w of span.matchAll(/\S+/g)) {
    const end = w.index + w[0].length;
    if (w[0].endsWith('.') && !ABBREVIATION.test(w[0]) && end < span.length) {
      parts.push({ text: span.slice(start, end), at: at + start });
      start = end + (/^\s+/.exec(span.slice(end))?.[0].length ?? 0);
    }
  }
  parts.push({ text: span.slice(start), at: at + start });
  return parts;
}

/** A word as looked up in NOT_NAMES: lower case, trailing punctuation and a contraction removed. */
const stem = (word: string): string =>
  word
    .toLowerCase()
    .replace(/[.'’&-]+$/, '')
    .replace(/(?:n['’]t|['’](?:s|m|d|ve|re|ll))$/, '');

/** Trims sentence-start words and trailing punctuation or a possessive from a name span. */
function cleanName(span: string): string {
  const words = span.split(/[ \t]+/);
  while (words.length > 0 && NOT_NAMES.has(stem(words[0]!))) {
    words.shift();
    while (words.length > 0 && NAME_JOINERS.includes(words[0]!)) words.shift();
  }
  while (words.length > 0 && NAME_JOINERS.includes(words[words.length - 1]!)) words.pop();
  return words.join(' ').replace(/(?:['’]s)?[.'’&-]*$/u, '');
}

/** The names of a name span: each key, and where its first word starts in the span. */
export function spanNames(span: string): { key: string; at: number }[] {
  const names: { key: string; at: number }[] = [];
  for (const part of splitSentences(span, 0)) {
    const name = cleanName(part.text);
    if (name !== '') names.push({ key: name.toLowerCase(), at: part.at + part.text.indexOf(name.split(' ')[0]!) });
  }
  return names;
}

/**
 * spanNames per distinct span, remembered: a pool's scenarios repeat their name spans (a 30 000-scenario
 * pool has ~380 000 spans, ~12 000 distinct), and spanNames is a pure function of the span. At most
 * SPAN_MEMO entries: the memo starts again when full, so memory stays bounded on any input.
 */
const spanMemo = new Map<string, readonly { key: string; at: number }[]>();
export const SPAN_MEMO = 1 << 16;
/** How many spans the memo holds now (tests check its bound). */
export const spanMemoSize = (): number => spanMemo.size;
function namesOfSpan(span: string): readonly { key: string; at: number }[] {
  let names = spanMemo.get(span);
  if (names === undefined) {
    names = spanNames(span);
    if (spanMemo.size >= SPAN_MEMO) spanMemo.clear();
    // The key as a string of its own: a match is a slice that would keep its whole text alive.
    spanMemo.set(JSON.parse(JSON.stringify(span)) as string, names);
  }
  return names;
}

/**
 * Entity spans of a text, in order: English proper-noun-like spans (capitalised words, joined by
 * of/the/de/van/von…, leading sentence-start words removed), numbers (digits, with , and .
 * separators; commas dropped), Chinese titles in 《》「」『』, Chinese person references (a common
 * surname + up to two characters + an honorific such as 先生, 老师). Chinese has no word boundaries and
 * no capitals, so a Chinese name without brackets or an honorific is not counted.
 */
export function entitySpans(text: string): EntitySpan[] {
  const spans: EntitySpan[] = [];
  for (const m of text.matchAll(NAME_SPAN))
    for (const e of namesOfSpan(m[0])) spans.push({ key: e.key, at: m.index + e.at, numeric: false });
  for (const m of text.matchAll(NUMBER)) spans.push({ key: `#${m[0].replace(/,/g, '')}`, at: m.index, numeric: true });
  for (const re of [ZH_BRACKETED, ZH_PERSON]) {
    for (const m of text.matchAll(re)) spans.push({ key: (m[1] ?? m[0]).trim(), at: m.index, numeric: false });
  }
  return spans.sort((a, b) => a.at - b.at);
}

/** Distinct entities among spans (see entitySpans): all of them, and the named (non-numeric) ones. */
export function distinctEntities(spans: readonly EntitySpan[]): { all: number; named: number } {
  const all = new Set(spans.map((s) => s.key));
  const named = new Set(spans.filter((s) => !s.numeric).map((s) => s.key));
  return { all: all.size, named: named.size };
}

/** Binary arithmetic operators of a calculator expression (+ - * / % ^ × ÷, ** as one); a sign is no operator. */
export function countCalcOperators(expr: string): number {
  let n = 0;
  let operand = false;
  const s = expr.replace(/\*\*/g, '^');
  for (const ch of s) {
    if (/[\p{N}.)\p{L}]/u.test(ch)) operand = true;
    else if ('+-*/%^×÷'.includes(ch)) {
      if (operand) n += 1;
      operand = false;
    } else if (ch === '(') operand = false;
  }
  return n;
}

/** Arithmetic symbols written between two numbers in prose ("3 + 4", "12*5", "10 ÷ 2"). */
export function countInlineOperators(text: string): number {
  return [...text.matchAll(/\d\s*[+*/×÷^]\s*\(?\d|\d\s+-\s+\(?\d/gu)].length;
}

/** Whether a third-person pronoun occurs in the text before the first named entity of its spans. */
export function pronounBeforeName(text: string, spans: readonly EntitySpan[], pronouns: RegExp): boolean {
  const pronoun = pronouns.exec(text);
  if (!pronoun) return false;
  const firstName = spans.find((s) => !s.numeric);
  return firstName === undefined || pronoun.index < firstName.at;
}
