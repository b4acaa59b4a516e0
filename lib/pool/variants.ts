// The material of the two rendering variants (lib/pool/pool-kinds.ts), read from the source item:
//   hint   sentences the user may quote as something they already know (HINT_DEFINITION)
//   split  the problem statement and the question asked (SPLIT_DEFINITION)
import type { HotpotqaItem, SourceItem } from '../data/index.ts';
import { countTokens, tokenize } from '../text/index.ts';
import { containsTokens } from './find-gaps.ts';

export const HINT_DEFINITION =
  'hotpotqa: a supporting-fact sentence (sentence-level records: the sentences the supporting_facts name; IRCoT records, which mark support per paragraph: the lead sentence of each supporting paragraph); strategyqa: one of the annotator facts. Never a sentence that contains the answer span or all of its words (an item whose every candidate does is not hinted; yes/no answers are no span), never one shorter than pool.hint.min_tokens tokenize tokens. The sentence is quoted verbatim after a lead-in line, as the first paragraph of the first user turn';
export const SPLIT_DEFINITION =
  'gsm8k: the question cut before its last sentence that ends in "?": the statement before it is the first user turn, verbatim (whitespace runs made single spaces); the template renders the question asked (and anything after it) in the turns that follow. Only questions whose statement has a sentence are split';

export interface Hint {
  /** supporting_fact: a HotpotQA supporting sentence; fact: a StrategyQA annotator fact. */
  source: 'supporting_fact' | 'fact';
  /** The paragraph title (hotpotqa) or the term (strategyqa). */
  title: string;
  text: string;
}

const ABBREVIATION =
  /(?:^|[\s(])(?:(?:\p{Lu}\.)+|(?:Mt|St|Dr|Mr|Mrs|Ms|Jr|Sr|Ft|Gen|Col|Lt|Sgt|Capt|Rev|Prof|No|Co|Inc|Ltd|Bros|Ave|Blvd|vs|ca|c)\.)$/u;

/** Sentences of a paragraph: cut after . ! ? followed by space and a capital, a digit or a quote, not after an abbreviation. */
export function sentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const m of text.matchAll(/[.!?]["')\]]?\s+(?=[\p{Lu}\d"'(])/gu)) {
    const end = m.index + m[0].trimEnd().length;
    if (ABBREVIATION.test(text.slice(start, m.index + 1))) continue;
    out.push(text.slice(start, end).trim());
    start = m.index + m[0].length;
  }
  out.push(text.slice(start).trim());
  return out.filter((s) => s !== '');
}

const YES_NO = new Set(['yes', 'no']);
const STOP = new Set(['a', 'an', 'the', 'of', 'and', 'in', 'on', 'at', 'to', 'for', 'by', 's']);

function hotpotqaCandidates(item: HotpotqaItem): Hint[] {
  const byTitle = new Map(item.paragraphs.map((p) => [p.title, p]));
  const out: Hint[] = [];
  const seen = new Set<string>();
  const add = (title: string, text: string): void => {
    const t = text.replace(/\s+/g, ' ').trim();
    if (t !== '' && !seen.has(t)) {
      seen.add(t);
      out.push({ source: 'supporting_fact', title, text: t });
    }
  };
  for (const f of item.supporting) {
    const p = byTitle.get(f.title);
    if (!p) continue;
    if (f.sent_id !== undefined) add(f.title, p.sentences[f.sent_id] ?? '');
    else add(f.title, sentences(p.sentences.join(' '))[0] ?? '');
  }
  return out;
}

/** The sentences a hinted scenario of the item may quote, in source order (empty: the item is not hinted). */
export function findHints(item: SourceItem, minTokens: number): Hint[] {
  let candidates: Hint[];
  switch (item.task) {
    case 'gsm8k':
      return [];
    case 'hotpotqa':
      candidates = hotpotqaCandidates(item);
      break;
    case 'strategyqa':
      candidates = item.facts.map((f) => ({
        source: 'fact' as const,
        title: item.term,
        text: f.replace(/\s+/g, ' ').trim(),
      }));
      break;
  }
  const answer = tokenize(item.gold_answer);
  const isSpan = !(answer.length === 1 && YES_NO.has(answer[0]!));
  const words = answer.filter((w) => !STOP.has(w));
  return candidates.filter((h) => {
    if (countTokens(h.text) < minTokens) return false;
    if (!isSpan) return true;
    const toks = tokenize(h.text);
    const has = new Set(toks);
    return !containsTokens(toks, answer) && !(words.length > 0 && words.every((w) => has.has(w)));
  });
}

/** The statement and the question asked, or null when the question does not split. */
export function splitQuestion(item: SourceItem): { setup: string; ask: string } | null {
  return item.task === 'gsm8k' ? splitText(item.question) : null;
}

/** A question text cut before its last sentence ending in "?", or null when it does not split. */
export function splitText(question: string): { setup: string; ask: string } | null {
  const parts = sentences(question.replace(/\s+/g, ' ').trim());
  let at = -1;
  parts.forEach((s, i) => {
    if (/\?["')]?$/.test(s)) at = i;
  });
  if (at < 1) return null;
  const setup = parts.slice(0, at).join(' ');
  const ask = parts.slice(at).join(' ');
  return countTokens(setup) > 0 && countTokens(ask) > 0 ? { setup, ask } : null;
}
