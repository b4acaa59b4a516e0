// GSM8K reader. The original train.jsonl and the Hugging Face export share one layout:
// `question`, and `answer`, a worked solution of newline-separated steps with calculator
// annotations `<<expr=result>>` and a last line `#### <number>` (possibly with thousands commas).
// Items carry the gold answer with commas removed, the steps without annotations, and the
// annotations as calculator calls tied to their step. Ids: see source-item.ts.
import { basename } from 'node:path';
import { DataError, describeValue, type Location, type ReadOptions, type ReadResult } from './data-error.ts';
import { expectText } from './expect.ts';
import type { SourceRecord } from './jsonl.ts';
import { readItems } from './read-records.ts';
import type { CalcCall, Gsm8kItem } from './source-item.ts';

export interface Gsm8kAnswer {
  /** The number after `####`, commas removed: "1,600" → "1600". */
  gold_answer: string;
  steps: string[];
  calc: CalcCall[];
}

const FINAL = /^####\s*(.*)$/;
const NUMBER = /^-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;
const ANNOTATION = /<<([^<>]*)>>/g;

function parseStep(line: string, step: number, at: Location, field: string, calc: CalcCall[]): string {
  // The line without its annotations (what line.replace(ANNOTATION, '') gives), built in the same pass.
  let bare = '';
  let from = 0;
  for (const m of line.matchAll(ANNOTATION)) {
    bare += line.slice(from, m.index);
    from = m.index + m[0].length;
    const body = m[1] ?? '';
    const eq = body.lastIndexOf('=');
    const expr = eq === -1 ? '' : body.slice(0, eq).trim();
    const result = eq === -1 ? '' : body.slice(eq + 1).trim();
    if (expr === '' || result === '') {
      throw new DataError(at, field, 'calculator annotations of the form "<<expr=result>>"', describeValue(m[0]));
    }
    calc.push({ expr, result, step });
  }
  const text = (from === 0 ? line : bare + line.slice(from)).trim();
  if (text.includes('<<') || text.includes('>>')) {
    throw new DataError(
      at,
      field,
      'calculator annotations of the form "<<expr=result>>" (every "<<" closed by ">>")',
      describeValue(line.trim()),
    );
  }
  return text;
}

/** Parses a GSM8K worked solution; field names the field in diagnostics. */
export function parseGsm8kAnswer(answer: string, at: Location, field = 'answer'): Gsm8kAnswer {
  const lines = answer
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
  const last = lines.pop()?.trim() ?? '';
  const final = FINAL.exec(last);
  if (!final) throw new DataError(at, field, 'a final line "#### <number>"', describeValue(last));
  const number = (final[1] ?? '').trim();
  if (!NUMBER.test(number)) throw new DataError(at, field, 'a number after "####"', describeValue(number));
  const calc: CalcCall[] = [];
  const steps = lines.map((line, i) => parseStep(line, i, at, field, calc));
  return { gold_answer: number.replaceAll(',', ''), steps, calc };
}

/** `test` when the file name contains "test", else `train`. */
export function gsm8kSplit(file: string): 'train' | 'test' {
  return /test/i.test(basename(file)) ? 'test' : 'train';
}

/** The stable id of the n-th (1-based) record of a GSM8K file. */
export function gsm8kSourceId(file: string, n: number): string {
  return `gsm8k-${gsm8kSplit(file)}-${n}`;
}

/** Parses one GSM8K record (original or Hugging Face layout). */
export function parseGsm8k(record: SourceRecord): Gsm8kItem {
  const { at, value } = record;
  const question = expectText(value.question, at, 'question');
  if (typeof value.answer !== 'string') {
    throw new DataError(
      at,
      'answer',
      'a string (a worked solution ending in "#### <number>")',
      describeValue(value.answer),
    );
  }
  const { gold_answer, steps, calc } = parseGsm8kAnswer(value.answer, at);
  return {
    task: 'gsm8k',
    source_id: gsm8kSourceId(at.file, at.line),
    format: 'gsm8k',
    question,
    gold_answer,
    origin: at,
    steps,
    calc,
  };
}

/** Reads a GSM8K file (.jsonl, .json or .parquet). */
export async function readGsm8k(path: string, options: ReadOptions = {}): Promise<ReadResult<Gsm8kItem>> {
  return readItems(path, options, parseGsm8k);
}
