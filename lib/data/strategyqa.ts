// StrategyQA reader: `qid, term, description, question, answer (boolean), facts, decomposition,
// evidence`, as in the official release, and the Hugging Face variants, which drop `evidence`,
// may name the id `id`, may give the answer as "yes"/"no"/"true"/"false", and may hold `facts`
// or `decomposition` as one string instead of a list (split into lines when it has line breaks,
// else into sentences). The gold answer is "yes" or "no".
import { DataError, describeValue, type Location, type ReadOptions, type ReadResult } from './data-error.ts';
import { expectArray, expectString, expectStringArray, expectText } from './expect.ts';
import type { SourceRecord } from './jsonl.ts';
import { readItems } from './read-records.ts';
import type { StrategyqaItem } from './source-item.ts';

const YES = new Set(['yes', 'true']);
const NO = new Set(['no', 'false']);

function yesNo(value: unknown, at: Location): 'yes' | 'no' {
  if (value === true) return 'yes';
  if (value === false) return 'no';
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (YES.has(v)) return 'yes';
    if (NO.has(v)) return 'no';
  }
  throw new DataError(at, 'answer', 'a boolean (or "yes"/"no"/"true"/"false")', describeValue(value));
}

/** Splits one string holding several facts or steps: by line when it has line breaks, else by sentence. */
export function splitList(text: string): string[] {
  const parts = text.includes('\n') ? text.split('\n') : text.split(/(?<=[.!?])\s+/);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/** A list of strings, or one string that holds the list; `split` is set when it was one string. */
function stringList(value: unknown, at: Location, field: string): { list: string[]; split: boolean } {
  if (typeof value === 'string') return { list: splitList(value), split: true };
  if (!Array.isArray(value)) throw new DataError(at, field, 'a list of strings (or one string)', describeValue(value));
  return { list: expectStringArray(value, at, field), split: false };
}

/** Parses one StrategyQA record (official or Hugging Face layout). */
export function parseStrategyqa({ at, value }: SourceRecord): StrategyqaItem {
  const idField = 'qid' in value || !('id' in value) ? 'qid' : 'id';
  const source_id = expectText(value[idField], at, idField);
  const term = expectString(value.term, at, 'term');
  const description = expectString(value.description, at, 'description');
  const question = expectText(value.question, at, 'question');
  const gold_answer = yesNo(value.answer, at);
  const facts = stringList(value.facts, at, 'facts');
  const decomposition = stringList(value.decomposition, at, 'decomposition');
  const hasEvidence = value.evidence !== undefined;
  if (hasEvidence) expectArray(value.evidence, at, 'evidence');
  const official = hasEvidence && idField === 'qid' && !facts.split && !decomposition.split;
  return {
    task: 'strategyqa',
    source_id,
    format: official ? 'strategyqa' : 'strategyqa-hf',
    question,
    gold_answer,
    origin: at,
    term,
    description,
    facts: facts.list,
    decomposition: decomposition.list,
  };
}

/** Reads a StrategyQA file (.jsonl, .json or .parquet). */
export async function readStrategyqa(path: string, options: ReadOptions = {}): Promise<ReadResult<StrategyqaItem>> {
  return readItems(path, options, parseStrategyqa);
}
