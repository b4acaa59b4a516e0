// JSONL I/O. Reading keeps each record's 1-based line number so that every later diagnostic can
// point at it; blank lines are ignored, a UTF-8 byte-order mark and '\r\n' endings are accepted,
// and a line that is not valid UTF-8, not valid JSON or not a JSON object is a DataIssue.
// Writing gives one compact JSON object per line, '\n' endings, keys in the order the objects
// were built: byte-identical output for identical records.
import { readFile } from 'node:fs/promises';
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
import { isObject, type JsonObject } from './expect.ts';

/** One record of a data file, with where it came from. */
export interface SourceRecord {
  at: Location;
  value: JsonObject;
}

const NEWLINE = 0x0a;

/** Splits JSONL bytes into records; bad lines go to log (which throws in 'fail' mode). */
export function parseJsonl(bytes: Uint8Array, file: string, log: IssueLog): SourceRecord[] {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const records: SourceRecord[] = [];
  let start = 0;
  let line = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end === -1) end = bytes.length;
    line += 1;
    const at: Location = { file, line, unit: 'line' };
    const record = log.attempt(() => parseLine(decoder, bytes.subarray(start, end), at));
    if (record) records.push(record);
    start = end + 1;
  }
  return records;
}

function parseLine(decoder: TextDecoder, raw: Uint8Array, at: Location): SourceRecord | undefined {
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    throw new DataError(at, '(json)', 'valid UTF-8 text', `${raw.length} bytes that are not UTF-8`);
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new DataError(at, '(json)', 'a JSON object', `${describeValue(text)} (not valid JSON: ${why})`);
  }
  if (!isObject(value)) throw new DataError(at, '(json)', 'a JSON object', describeValue(value));
  return { at, value };
}

/** Reads a JSONL file of JSON objects. */
export async function readJsonl(path: string, options: ReadOptions = {}): Promise<ReadResult<SourceRecord>> {
  const log = new IssueLog(options.onError);
  const items = parseJsonl(await readFile(path), displayPath(path, options.root), log);
  return { items, skipped: log.skipped, issues: log.issues };
}

/** One compact JSON value per line, each line ending in '\n' (an empty list gives ''). */
export function toJsonl(records: readonly unknown[]): string {
  let out = '';
  for (const r of records) out += `${JSON.stringify(r)}\n`;
  return out;
}
