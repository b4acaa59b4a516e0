// Data errors: where a malformed record is (file, line, field), what was expected there and what
// was found, and how a reader reacts to one. With onError 'fail' the first bad record throws a
// DataError; with 'skip' every bad record is kept as a DataIssue and counted, so the count can go
// into a report. A DataError's message reads like a compiler diagnostic:
//   data/raw/gsm8k/x.jsonl:17: answer: expected a final line "#### <number>", got "..."
// JSONL records are located by 1-based line, Parquet records by 1-based row, and the records of a
// JSON array file by 1-based position in the array. Line 0 means the whole file.
import { ExpectedError } from 'rc1-build';
import { relative, sep } from 'node:path';

export type OnError = 'fail' | 'skip';

/** What a record's position counts: lines of a JSONL file, rows of Parquet, elements of a JSON array. */
export type LocationUnit = 'line' | 'row' | 'record';

export interface Location {
  /** The file as shown to the user (workspace-relative when a root is given to the reader). */
  file: string;
  /** 1-based; 0 when the issue concerns the whole file. */
  line: number;
  unit: LocationUnit;
}

/** A malformed record as data: what a 'skip' reader returns for each record it skipped. */
export interface DataIssue {
  file: string;
  line: number;
  unit: LocationUnit;
  /** The field path inside the record, e.g. `supporting_facts[2][0]`; `(json)` or `(file)` for the whole line or file. */
  field: string;
  expected: string;
  got: string;
  /** The formatted one-line diagnostic. */
  message: string;
}

export interface ReadOptions {
  /** 'fail' (default) throws a DataError on the first bad record; 'skip' skips it and counts it. */
  onError?: OnError;
  /** When set, files are named relative to this directory in issues and items. */
  root?: string;
}

export interface ReadResult<T> {
  items: T[];
  /** Records skipped because they were malformed (always 0 with onError 'fail'). */
  skipped: number;
  issues: DataIssue[];
}

/** The name a file is shown under: relative to root (with '/' separators) when a root is given. */
export function displayPath(file: string, root?: string): string {
  if (root === undefined) return file;
  const rel = relative(root, file);
  return sep === '/' ? rel : rel.split(sep).join('/');
}

/** `file:17` for a JSONL line, `file:row 17` for Parquet, `file:record 17` for a JSON array, `file` for line 0. */
export function formatLocation(at: Location): string {
  if (at.line === 0) return at.file;
  return at.unit === 'line' ? `${at.file}:${at.line}` : `${at.file}:${at.unit} ${at.line}`;
}

/** An expected error (rc1-build's marker): the build prints its message alone, no stack. */
export class DataError extends ExpectedError {
  override readonly name = 'DataError';
  readonly file: string;
  readonly line: number;
  readonly unit: LocationUnit;
  readonly field: string;
  readonly expected: string;
  readonly got: string;

  constructor(at: Location, field: string, expected: string, got: string) {
    super(`${formatLocation(at)}: ${field}: expected ${expected}, got ${got}`);
    this.file = at.file;
    this.line = at.line;
    this.unit = at.unit;
    this.field = field;
    this.expected = expected;
    this.got = got;
  }

  static fromIssue(issue: DataIssue): DataError {
    return new DataError(
      { file: issue.file, line: issue.line, unit: issue.unit },
      issue.field,
      issue.expected,
      issue.got,
    );
  }

  get issue(): DataIssue {
    const { file, line, unit, field, expected, got, message } = this;
    return { file, line, unit, field, expected, got, message };
  }
}

const PREVIEW = 80;

/** A short description of a value for the `got` part of a diagnostic. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const s = value.length > PREVIEW ? `${value.slice(0, PREVIEW)}…` : value;
    return JSON.stringify(s);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return `${typeof value} ${String(value)}`;
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    const shown = keys.slice(0, 8).join(', ') + (keys.length > 8 ? ', …' : '');
    return keys.length === 0 ? 'an empty object' : `an object with keys ${shown}`;
  }
  return typeof value;
}

/** Throws a DataError for a field whose value is not what was expected. */
export function fail(at: Location, field: string, expected: string, value: unknown): never {
  throw new DataError(at, field, expected, describeValue(value));
}

/** Collects bad records for one read: throws the first in 'fail' mode, keeps them all in 'skip' mode. */
export class IssueLog {
  readonly issues: DataIssue[] = [];

  constructor(readonly onError: OnError = 'fail') {}

  add(error: DataError): void {
    if (this.onError === 'fail') throw error;
    this.issues.push(error.issue);
  }

  /** Runs parse; a DataError it throws is handled by add() and gives undefined. Other errors propagate. */
  attempt<T>(parse: () => T): T | undefined {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof DataError)) throw error;
      this.add(error);
      return undefined;
    }
  }

  /**
   * Takes over the issues of a file read with a 'skip' log, in line order: so that 'fail' mode
   * throws the bad record with the lowest line even though a file is read whole before its
   * records are parsed.
   */
  absorb(file: IssueLog): void {
    const sorted = [...file.issues].sort((a, b) => a.line - b.line);
    for (const issue of sorted) this.add(DataError.fromIssue(issue));
  }

  /** Every issue stands for one skipped record (a whole-file issue counts once). */
  get skipped(): number {
    return this.issues.length;
  }
}
