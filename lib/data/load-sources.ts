// The one loader rules use: reads any mix of GSM8K, HotpotQA and StrategyQA files (.jsonl, .json,
// .parquet), tells each file's task from its records, parses every record into a SourceItem, and
// merges records that are the same item: the same normalised question within a task (content
// identity, question-key.ts), whatever their ids or lines — a question repeated in a file, or in
// two files, is one item. HotpotQA's IRCoT file repeats records of the official file; a merge
// keeps the record with sentence-level supporting facts (official or Hugging Face layout) over the
// IRCoT one, and otherwise the first read. `duplicates` counts the records merged away and
// `duplicateRecords` names both locations of each. Records that share an id but not their
// question are an id collision, not a duplicate: the later one is a DataIssue. Files with no
// records (SOURCE.md) are passed over.
import {
  DataError,
  IssueLog,
  describeValue,
  displayPath,
  formatLocation,
  type DataIssue,
  type ReadOptions,
} from './data-error.ts';
import type { JsonObject } from './expect.ts';
import { parseGsm8k } from './gsm8k.ts';
import { parseHotpotqa } from './hotpotqa.ts';
import { questionKey } from './question-key.ts';
import type { SourceRecord } from './jsonl.ts';
import { dataFileFormat, readRecordsInto } from './read-records.ts';
import { LastRead } from './thread-memo.ts';
import { sourceKey, type SourceFormat, type SourceItem, type Task } from './source-item.ts';
import { parseStrategyqa } from './strategyqa.ts';

export interface LoadOptions extends ReadOptions {
  /** Read every file as this task instead of detecting it. */
  task?: Task;
}

export interface FileSummary {
  file: string;
  /** null when no record of the file could be recognised. */
  task: Task | null;
  /** The layouts its items were read from, sorted. */
  formats: SourceFormat[];
  /** Records read (JSON objects or Parquet rows), before parsing. */
  records: number;
  items: number;
  skipped: number;
}

export interface LoadResult {
  /** Unique by (task, source_id), in the order first read. */
  items: SourceItem[];
  skipped: number;
  issues: DataIssue[];
  /** Records merged into another because they are the same item (same normalised question). */
  duplicates: number;
  /** Each merged record: the item kept, where it was read, and where the dropped repeat was. */
  duplicateRecords: DuplicateRecord[];
  files: FileSummary[];
}

export interface DuplicateRecord {
  task: Task;
  /** The id of the item kept (after the merge). */
  source_id: string;
  kept: string;
  repeat: string;
  /** Whether the repeat had the same id (the IRCoT copy of a HotpotQA record) or another (a repeated question). */
  same_id: boolean;
}

/** Which task a record belongs to, from the fields it has; null when it has none of them. */
export function detectTask(value: JsonObject): Task | null {
  const has = (...keys: string[]) => keys.some((k) => k in value);
  if (has('_id', 'question_id', 'supporting_facts', 'context', 'contexts')) return 'hotpotqa';
  if (has('qid', 'decomposition', 'facts', 'term')) return 'strategyqa';
  if (has('question') && has('answer')) return 'gsm8k';
  return null;
}

/** Parses one record as an item of the given task. */
export function parseSourceRecord(record: SourceRecord, task: Task): SourceItem {
  switch (task) {
    case 'gsm8k':
      return parseGsm8k(record);
    case 'hotpotqa':
      return parseHotpotqa(record);
    case 'strategyqa':
      return parseStrategyqa(record);
  }
}

function rank(format: SourceFormat): number {
  return format === 'hotpotqa-ircot' ? 0 : 1;
}

/**
 * Keeps one item per (task, source_id): the higher-ranked layout, else the first. Two records
 * with one id but different questions are not the same item (e.g. two GSM8K files whose
 * line-based ids collide): the later one is reported to log and dropped, not merged.
 */
export function mergeDuplicates(
  items: readonly SourceItem[],
  log = new IssueLog('fail'),
): { items: SourceItem[]; duplicates: number; duplicateRecords: DuplicateRecord[] } {
  const byId = new Map<string, number>();
  const byContent = new Map<string, number>();
  const out: SourceItem[] = [];
  const duplicateRecords: DuplicateRecord[] = [];
  for (const item of items) {
    const content = questionKey(item);
    const same = byContent.get(content);
    if (same !== undefined) {
      const kept = out[same]!;
      duplicateRecords.push({
        task: item.task,
        source_id: kept.source_id,
        kept: formatLocation(kept.origin),
        repeat: formatLocation(item.origin),
        same_id: kept.source_id === item.source_id,
      });
      if (rank(item.format) > rank(kept.format) && kept.source_id === item.source_id) out[same] = item;
      continue;
    }
    const key = sourceKey(item);
    const at = byId.get(key);
    if (at !== undefined) {
      const kept = out[at]!;
      const expected = `the question of ${formatLocation(kept.origin)}, which has the same id ${JSON.stringify(item.source_id)}`;
      log.add(new DataError(item.origin, '(record)', expected, describeValue(item.question)));
      continue;
    }
    byId.set(key, out.length);
    byContent.set(content, out.length);
    out.push(item);
  }
  return { items: out, duplicates: duplicateRecords.length, duplicateRecords };
}

function loadFile(
  records: SourceRecord[],
  forced: Task | undefined,
  log: IssueLog,
): { task: Task | null; items: SourceItem[] } {
  let task: Task | null = forced ?? null;
  for (const r of records) {
    if (task !== null) break;
    task = detectTask(r.value);
  }
  if (task === null) {
    for (const r of records) {
      log.add(
        new DataError(r.at, '(record)', 'the fields of a GSM8K, HotpotQA or StrategyQA record', describeValue(r.value)),
      );
    }
    return { task, items: [] };
  }
  const items: SourceItem[] = [];
  for (const r of records) {
    const item = log.attempt(() => parseSourceRecord(r, task));
    if (item) items.push(item);
  }
  return { task, items };
}

/** This thread's last load (thread-memo.ts): seed_pool runs after shadow_set, mostly in the same worker. */
const lastLoad = new LastRead<LoadResult>();

/**
 * Loads and merges source items from data files; other files (e.g. SOURCE.md) are passed over.
 * The result is read-only (deeply frozen): a second call with the same paths and options, while
 * every file has the stat it had when the first call read it, returns the same result without
 * reading (one per thread is kept, the last).
 */
export async function loadSources(paths: readonly string[], options: LoadOptions = {}): Promise<LoadResult> {
  const data = paths.filter((p) => dataFileFormat(p) !== null);
  const key = JSON.stringify([paths, options.onError ?? null, options.root ?? null, options.task ?? null]);
  return lastLoad.get(key, data, () => loadSourcesNow(data, options));
}

async function loadSourcesNow(paths: readonly string[], options: LoadOptions): Promise<LoadResult> {
  const log = new IssueLog(options.onError);
  const all: SourceItem[] = [];
  const files: FileSummary[] = [];
  for (const path of paths) {
    if (dataFileFormat(path) === null) continue;
    const fileLog = new IssueLog('skip');
    const records = await readRecordsInto(path, fileLog, options.root);
    const { task, items } = loadFile(records, options.task, fileLog);
    log.absorb(fileLog);
    all.push(...items);
    files.push({
      file: displayPath(path, options.root),
      task,
      formats: [...new Set(items.map((i) => i.format))].sort(),
      records: records.length,
      items: items.length,
      skipped: fileLog.skipped,
    });
  }
  const { items, duplicates, duplicateRecords } = mergeDuplicates(all, log);
  return { items, skipped: log.skipped, issues: log.issues, duplicates, duplicateRecords, files };
}
