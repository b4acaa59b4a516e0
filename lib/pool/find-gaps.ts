// Under-specification: which detail of a question can be left out so that the clarification turn
// reveals exactly it. A GapCandidate is a span of the question and the detail it holds:
//   gsm8k      number  a count followed by a word ("48 of her friends", "5 apples")
//              amount  a sum of money ("$12", "$1,200.50")
//              percent a percentage ("20%")
//   hotpotqa   entity  a supporting paragraph's title (without a "(…)" qualifier) named in the question
//   strategyqa term    the question's StrategyQA term
// A candidate is kept only when its detail occurs once in the question (so removing it removes
// it) and is not preceded by an article that the filler would double. applyGap replaces the span
// with a filler phrase; a leading "the" of an entity or term goes with it.
import type { SourceItem } from '../data/index.ts';
import type { GapKind } from '../templates/index.ts';
import { tokenize } from '../text/index.ts';

export interface GapCandidate {
  kind: GapKind;
  /** The span [start, end) of the question that the filler replaces. */
  start: number;
  end: number;
  /** The detail the clarification reveals, as written in the question. */
  detail: string;
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ARTICLE_BEFORE = /\b(?:a|an)\s+$/i;
const THE_BEFORE = /\bthe\s+$/i;

function occurrences(text: string, re: RegExp): number {
  return [...text.matchAll(re)].length;
}

/** The pattern of a number as a whole (not inside a longer number), compiled once per number text. */
const NUMBER_PATTERNS = new Map<string, RegExp>();
function numberPattern(digits: string): RegExp {
  let re = NUMBER_PATTERNS.get(digits);
  if (!re) {
    if (NUMBER_PATTERNS.size >= 4096) NUMBER_PATTERNS.clear();
    re = new RegExp(`(?<![\\d.,])${escapeRegex(digits)}(?![\\d]|[.,]\\d)`, 'g');
    NUMBER_PATTERNS.set(digits, re);
  }
  return re;
}

function numberCandidates(q: string): GapCandidate[] {
  const out: GapCandidate[] = [];
  for (const m of q.matchAll(/\$\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?%|\d[\d,]*(?:\.\d+)?/g)) {
    const text = m[0].replace(/[,.]$/, '');
    const start = m.index;
    const end = start + text.length;
    const before = q.slice(0, start);
    const after = q.slice(end);
    if (/[\w$.,/:-]$/.test(before) && !text.startsWith('$')) continue;
    if (/[\w.,/:-]$/.test(before) && text.startsWith('$')) continue;
    if (ARTICLE_BEFORE.test(before)) continue;
    const digits = text.replace(/^\$\s?/, '').replace(/\s?%$/, '');
    if (occurrences(q, numberPattern(digits)) !== 1) continue;
    if (text.startsWith('$')) {
      if (/^[\w%]/.test(after)) continue;
      out.push({ kind: 'amount', start, end, detail: text });
    } else if (text.endsWith('%')) {
      out.push({ kind: 'percent', start, end, detail: text });
    } else if (/^\s+[A-Za-z]/.test(after) && !/^\s+(?:times|percent|%)\b/i.test(after)) {
      out.push({ kind: 'number', start, end, detail: text });
    }
  }
  return out;
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Start offsets of `name` in `q` as a whole word (not inside a longer word); case-folded when `fold`. */
function wordHits(q: string, name: string, fold: boolean): number[] {
  const hay = fold ? q.toLowerCase() : q;
  const needle = fold ? name.toLowerCase() : name;
  if (hay.length !== q.length || needle.length !== name.length) return [];
  const hits: number[] = [];
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) {
    const before = at > 0 ? q[at - 1]! : '';
    const after = q[at + needle.length] ?? '';
    if (!WORD_CHAR.test(before) && !WORD_CHAR.test(after)) hits.push(at);
  }
  return hits;
}

function nameCandidates(q: string, name: string, kind: GapKind, fold: boolean): GapCandidate[] {
  const bare = name.replace(/\s*\([^)]*\)\s*$/, '').trim();
  if (bare.length < 2 || tokenize(bare).length === 0) return [];
  const hits = wordHits(q, bare, fold);
  if (hits.length !== 1) return [];
  let start = hits[0]!;
  const end = start + bare.length;
  if (start === 0 && end === q.length) return [];
  const detail = q.slice(start, end);
  const the = THE_BEFORE.exec(q.slice(0, start));
  if (the) start = the.index;
  else if (ARTICLE_BEFORE.test(q.slice(0, start))) return [];
  return [{ kind, start, end, detail }];
}

/** The ways a question can be made under-specified, in question order (empty: it cannot). */
export function findGaps(item: SourceItem): GapCandidate[] {
  const q = item.question;
  switch (item.task) {
    case 'gsm8k':
      return numberCandidates(q);
    case 'hotpotqa': {
      const titles = [...new Set(item.supporting.map((s) => s.title))];
      return titles.flatMap((t) => nameCandidates(q, t, 'entity', false)).sort((a, b) => a.start - b.start);
    }
    case 'strategyqa':
      return nameCandidates(q, item.term, 'term', true);
  }
}

/** Whether `needle` occurs as a contiguous run of `hay` (token lists). */
export function containsTokens(hay: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0) return false;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

const LEAD_WORDS = new Set([
  'of',
  'the',
  'a',
  'an',
  'her',
  'his',
  'their',
  'its',
  'my',
  'your',
  'our',
  'more',
  'extra',
  'other',
]);

/**
 * The question with the gap's span replaced by `filler`, and the phrase an assistant would quote
 * when asking about it: for a count, the filler and the words after it up to the first content
 * word ("some of her friends", at most four words); otherwise the filler alone. A filler ending in " of" drops it before a following "of"; a filler that starts a
 * sentence is capitalised.
 */
export function applyGap(question: string, gap: GapCandidate, filler: string): { question: string; phrase: string } {
  const before = question.slice(0, gap.start);
  const after = question.slice(gap.end);
  let f = filler;
  if (/\sof$/.test(f) && /^\s+of\b/.test(after)) f = f.replace(/\s+of$/, '');
  if (before.trim() === '' || /[.?!]\s*$/.test(before)) f = f.charAt(0).toUpperCase() + f.slice(1);
  let phrase = f;
  if (gap.kind === 'number') {
    const words = /^((?:\s+[\p{L}\p{N}'’-]+){0,4})/u.exec(after)?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
    const content = words.findIndex((w) => !LEAD_WORDS.has(w.toLowerCase()));
    phrase = [f, ...words.slice(0, content === -1 ? 0 : content + 1)].join(' ');
  }
  return { question: `${before}${f}${after}`, phrase };
}
