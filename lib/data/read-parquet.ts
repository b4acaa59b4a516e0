// Parquet reading for Hugging Face exports (e.g. `train-00000-of-00001.parquet`), through the
// pure-JS hyparquet package. hyparquet is imported lazily so that loading the data layer, or
// reading only JSONL, never pays for it. Rows become plain JSON-like objects: INT64 values
// (bigint) become numbers, UTF-8 byte arrays become strings, timestamps become ISO strings, so
// the same record parsers serve JSONL and Parquet. Rows are located by 1-based row number.
import { readFile } from 'node:fs/promises';
import { TextDecoder } from 'node:util';
import { DataError, IssueLog, displayPath, type ReadOptions, type ReadResult } from './data-error.ts';
import { isObject } from './expect.ts';
import type { SourceRecord } from './jsonl.ts';

const utf8 = new TextDecoder('utf-8');

/** Converts a decoded Parquet value into the JSON-like value a JSONL export would hold. */
export function toPlain(value: unknown): unknown {
  if (typeof value === 'bigint') {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value.toString();
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return utf8.decode(value);
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number | bigint>, toPlain);
  if (Array.isArray(value)) return value.map(toPlain);
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toPlain(v);
    return out;
  }
  return value;
}

/** Parses Parquet bytes into records; an unreadable file is one issue at line 0. */
export async function parseParquet(bytes: Uint8Array, file: string, log: IssueLog): Promise<SourceRecord[]> {
  const { parquetReadObjects } = await import('hyparquet');
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: buffer });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    log.add(new DataError({ file, line: 0, unit: 'row' }, '(file)', 'a readable Parquet file', JSON.stringify(why)));
    return [];
  }
  return rows.map((row, i) => ({
    at: { file, line: i + 1, unit: 'row' as const },
    value: toPlain(row) as Record<string, unknown>,
  }));
}

/** Reads every row of a Parquet file as a record. */
export async function readParquet(path: string, options: ReadOptions = {}): Promise<ReadResult<SourceRecord>> {
  const log = new IssueLog(options.onError);
  const items = await parseParquet(await readFile(path), displayPath(path, options.root), log);
  return { items, skipped: log.skipped, issues: log.issues };
}
