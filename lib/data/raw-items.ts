// The raw data files loaded once: target raw_items (rules/raw_items.ts) writes what loadSources gives
// (the items, merged duplicates, skipped records and their issues, a summary per file) with each data
// file's path, sha256 and size, as one JSON document. shadow_set, seed_pool and pool_validation read it
// (readRawItems: one JSON.parse, ~0.1 s) instead of reading, parsing and checking the raw files again
// (loadSources, ~0.3–0.4 s each, two of them on the data half's critical path). A rule given the raw
// files instead (an input group `raw`) loads them itself, as before (loadRawItems).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { displayPath, type OnError } from './data-error.ts';
import { type LoadResult, loadSources } from './load-sources.ts';
import { dataFileFormat } from './read-records.ts';

export const RAW_ITEMS_FORMAT = 'rc1-raw-items/1';

/** A data file the items were read from. */
export interface RawInput {
  /** Workspace-relative. */
  path: string;
  sha256: string;
  bytes: number;
}

export interface RawItems extends LoadResult {
  format: typeof RAW_ITEMS_FORMAT;
  /** data.on_error when the files were loaded: 'skip' leaves malformed records out and counts them. */
  on_error: OnError;
  /** Every data file of the raw inputs (SOURCE.md and other files left out), in path order. */
  inputs: RawInput[];
}

/** The data files among `files` (.jsonl, .json, .parquet), sorted. */
export function dataFiles(files: readonly string[]): string[] {
  return files.filter((f) => dataFileFormat(f) !== null).sort();
}

/** Loads the data files among `files` (loadSources) and records each one's path, sha256 and size. */
export async function loadRawItems(files: readonly string[], onError: OnError, root: string): Promise<RawItems> {
  const data = dataFiles(files);
  const loaded = await loadSources(data, { onError, root });
  const inputs: RawInput[] = [];
  for (const file of data) {
    const bytes = await readFile(file);
    inputs.push({
      path: displayPath(file, root),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.length,
    });
  }
  return { format: RAW_ITEMS_FORMAT, on_error: onError, inputs, ...loaded };
}

/** The document raw_items writes (deterministic: the same files give the same bytes). */
export function rawItemsText(r: RawItems): string {
  return `${JSON.stringify(r)}\n`;
}

/** Reads what raw_items wrote; a file of another format is an error naming it. */
export async function readRawItems(file: string): Promise<RawItems> {
  const r = JSON.parse(await readFile(file, 'utf8')) as Partial<RawItems>;
  if (r?.format !== RAW_ITEMS_FORMAT || !Array.isArray(r.items) || !Array.isArray(r.inputs))
    throw new Error(
      `${file}: not a raw_items document (format ${JSON.stringify(r?.format)}, expected ${RAW_ITEMS_FORMAT}); build target raw_items`,
    );
  return r as RawItems;
}
