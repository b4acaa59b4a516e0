// Task success metrics (docs/rc1.md "rollout"): whether a candidate's final answer is right.
//   gsm8k      the number after the last `####`, else the last number in the answer; commas
//              removed; equal as numbers ("46.0" = "46", "1,200" = "1200").
//   hotpotqa   exact match and token F1 after the normalisation of the official HotpotQA
//              evaluation script (hotpot_evaluate_v1.py, normalize_answer / f1_score /
//              exact_match_score), reproduced character for character: lower-case, remove
//              string.punctuation (ASCII only), remove the words a/an/the (Python's Unicode-aware
//              \b), collapse whitespace as str.split() does. F1 is 0 when either side normalises to
//              yes / no / noanswer and the two differ. Success = exact match.
//   strategyqa the answer's first normalised token is yes or no (true / false accepted) and
//              equals the gold answer's.
import type { Task } from '../data/index.ts';

/** Python's string.punctuation. */
const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
/** Python's `\b(a|an|the)\b` on str patterns: \w is Unicode letters, numbers and '_'. */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
/** The characters for which Python's str.isspace() is true (what str.split() splits on). */
const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/** Python's `' '.join(text.split())`: the whitespace-separated tokens. */
function pySplit(text: string): string[] {
  return text.split(PY_SPACE).filter((t) => t !== '');
}

/** normalize_answer of the official HotpotQA evaluation script. */
export function normalizeAnswer(s: string): string {
  const lower = s.toLowerCase();
  let noPunc = '';
  for (const ch of lower) if (!PUNCTUATION.has(ch)) noPunc += ch;
  return pySplit(noPunc.replace(ARTICLES, ' ')).join(' ');
}

/** exact_match_score of the official script. */
export function hotpotExactMatch(prediction: string, gold: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(gold);
}

/** f1_score of the official script (the F1 part of its (f1, precision, recall)). */
export function hotpotF1(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  const special = ['yes', 'no', 'noanswer'];
  if (special.includes(p) && p !== g) return 0;
  if (special.includes(g) && p !== g) return 0;
  const pt = p === '' ? [] : p.split(' ');
  const gt = g === '' ? [] : g.split(' ');
  const counts = new Map<string, number>();
  for (const t of gt) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of pt) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same += 1;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / pt.length;
  const recall = same / gt.length;
  return (2 * precision * recall) / (precision + recall);
}

const NUMBER = /-?\d[\d,]*(?:\.\d+)?|-?\.\d+/g;

/** The numeric answer of a GSM8K-style text: first number after the last `####`, else the last number; null when none. */
export function extractNumber(text: string): number | null {
  const hash = text.lastIndexOf('####');
  const scope = hash >= 0 ? text.slice(hash + 4) : text;
  const found = scope.match(NUMBER);
  if (!found || found.length === 0) return null;
  const raw = hash >= 0 ? found[0]! : found[found.length - 1]!;
  const value = Number(raw.replace(/,/g, ''));
  return Number.isFinite(value) ? value : null;
}

/** GSM8K success: both sides have a number and the numbers are equal. */
export function numericMatch(prediction: string, gold: string): boolean {
  const p = extractNumber(prediction);
  const g = extractNumber(gold);
  return p !== null && g !== null && p === g;
}

/** 'yes' / 'no' from the first normalised token (true / false map to yes / no); null otherwise. */
export function parseYesNo(text: string): 'yes' | 'no' | null {
  const first = normalizeAnswer(text).split(' ')[0] ?? '';
  if (first === 'yes' || first === 'true') return 'yes';
  if (first === 'no' || first === 'false') return 'no';
  return null;
}

/** StrategyQA success: the answer parses as yes/no and equals the gold yes/no. */
export function yesNoMatch(prediction: string, gold: string): boolean {
  const p = parseYesNo(prediction);
  return p !== null && p === parseYesNo(gold);
}

export interface Success {
  success: boolean;
  /** HotpotQA token F1; null for the other tasks. */
  f1: number | null;
}

/** The task's success metric for a final answer against the gold answer. */
export function judgeSuccess(task: Task, prediction: string, gold: string): Success {
  switch (task) {
    case 'gsm8k':
      return { success: numericMatch(prediction, gold), f1: null };
    case 'hotpotqa':
      return { success: hotpotExactMatch(prediction, gold), f1: hotpotF1(prediction, gold) };
    case 'strategyqa':
      return { success: yesNoMatch(prediction, gold), f1: null };
  }
}
