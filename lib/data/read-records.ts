// Reads the records of any supported data file, chosen by extension: JSONL (`.jsonl`, `.ndjson`),
// JSON (`.json`: an array of records as in the official HotpotQA and StrategyQA releases, or JSONL
// under a .json name), and Parquet (`.parquet`, the Hugging Face export). Each record carries its
// location so that the task parsers can report file, line and field.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { TextDecoder } from 'node:util';
import {
  DataError,
  IssueLog,
  describeValue,
  displayPath,
  type Location,
  type ReadOptions,
  type ReadResult,
} from './data-error.ts';
import { isObject } from './expect.ts';
import { parseJsonl, type SourceRecord } from './jsonl.ts';
import { parseParquet } from './read-parquet.ts';

export type DataFileFormat = 'jsonl' | 'json' | 'parquet';

const FORMATS: Record<string, DataFileFormat> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'json',
  '.parquet': 'parquet',
};

/** The format a file is read as, from its extension; null for files that hold no records (SOURCE.md). */
export function dataFileFormat(path: string): DataFileFormat | null {
  return FORMATS[extname(path).toLowerCase()] ?? null;
}

function parseJsonArray(bytes: Uint8Array, file: string, log: IssueLog): SourceRecord[] {
  const whole: Location = { file, line: 0, unit: 'record' };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    log.add(new DataError(whole, '(json)', 'a JSON array of records', `a file that does not parse (${why})`));
    return [];
  }
  if (!Array.isArray(value)) {
    log.add(new DataError(whole, '(json)', 'a JSON array of records', describeValue(value)));
    return [];
  }
  const records: SourceRecord[] = [];
  value.forEach((element: unknown, i) => {
    const at: Location = { file, line: i + 1, unit: 'record' };
    if (isObject(element)) records.push({ at, value: element });
    else log.add(new DataError(at, '(json)', 'a JSON object', describeValue(element)));
  });
  return records;
}

function startsWithBracket(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0xef || b === 0xbb || b === 0xbf) continue;
    return b === 0x5b; // '['
  }
  return false;
}

/** Parses the bytes of a data file of the given format; bad records go to log. */
export async function parseRecords(
  bytes: Uint8Array,
  file: string,
  format: DataFileFormat,
  log: IssueLog,
): Promise<SourceRecord[]> {
  switch (format) {
    case 'jsonl':
      return parseJsonl(bytes, file, log);
    case 'json':
      return startsWithBracket(bytes) ? parseJsonArray(bytes, file, log) : parseJsonl(bytes, file, log);
    case 'parquet':
      return parseParquet(bytes, file, log);
  }
}

/** Reads the records of a .jsonl, .json or .parquet file. */
export async function readRecords(path: string, options: ReadOptions = {}): Promise<ReadResult<SourceRecord>> {
  const log = new IssueLog(options.onError);
  const items = await readRecordsInto(path, log, options.root);
  return { items, skipped: log.skipped, issues: log.issues };
}

/**
 * Reads a file and parses each record with parse (a task parser). With onError 'fail' the bad
 * record with the lowest line is thrown, whether its JSON or its fields are bad.
 */
export async function readItems<T>(
  path: string,
  options: ReadOptions,
  parse: (record: SourceRecord) => T,
): Promise<ReadResult<T>> {
  const log = new IssueLog(options.onError);
  const fileLog = new IssueLog('skip');
  const records = await readRecordsInto(path, fileLog, options.root);
  const items: T[] = [];
  for (const r of records) {
    const item = fileLog.attempt(() => parse(r));
    if (item !== undefined) items.push(item);
  }
  log.absorb(fileLog);
  return { items, skipped: log.skipped, issues: log.issues };
}

/** readRecords with a caller's IssueLog, so that several files share one count. */
export async function readRecordsInto(path: string, log: IssueLog, root?: string): Promise<SourceRecord[]> {
  const file = displayPath(path, root);
  const format = dataFileFormat(path);
  if (format === null) {
    log.add(
      new DataError(
        { file, line: 0, unit: 'line' },
        '(file)',
        'a .jsonl, .json or .parquet file',
        JSON.stringify(extname(path) || file),
      ),
    );
    return [];
  }
  return parseRecords(await readFile(path), file, format, log);
}
