// The run history: one JSON line per build in .rc1/runs.jsonl (append-only, format-versioned),
// read by `rc1-build log`, `diff` and `why`. JSON Lines rather than SQLite: a build appends one
// line (an open and a write, no native module to load on the no-op path), a killed build loses at
// most its own torn line, and the queries are scans of at most `keep` runs. Size is bounded: once
// the file holds more than keep + keep/10 runs it is rewritten (atomically) with the newest `keep`.
// Ids are consecutive integers; the first and last are read from the file's head and tail only,
// so appending never reads the whole history.
import * as fs from 'node:fs';
import type { Check } from '../api/index.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

export const RUNS_FORMAT = 1;
export const DEFAULT_HISTORY_KEEP = 200;

export type RunOutcome = 'ran' | 'restored' | 'up-to-date' | 'failed' | 'gate-failed' | 'blocked' | 'not-planned';

export interface RunTarget {
  outcome: RunOutcome;
  /** Wall time of the rule (ran) or of the restore, in ms. */
  ms?: number;
  /** The target's key (fingerprint digest) after this build, when it has a record. */
  key?: string;
  /** Output path → sha256 after this build. */
  outputs?: Record<string, string>;
}

export interface RunRecord {
  /** First key of every line: the head and tail of the file are enough to know the ids. */
  id: number;
  format: number;
  /** When the build started (ISO 8601, UTC). */
  at: string;
  ms: number;
  exitCode: number;
  command: string;
  profile: string;
  pipeline?: string;
  git: { commit: string | null; dirty: boolean | null };
  /** Targets asked for on the command line (or the defaults). */
  asked: string[];
  /** Every target of the pipeline: what this build did with it and its state after it. */
  targets: Record<string, RunTarget>;
  /** Every declared param key (dotted) → its value in this build's config. */
  params: Record<string, unknown>;
  /** Gate → its checks as recorded after this build. */
  checks: Record<string, Check[]>;
  /** Metrics file → dotted key → number. */
  metrics: Record<string, Record<string, number>>;
}

function readAt(fd: number, pos: number, len: number): string {
  const buf = Buffer.alloc(len);
  const n = fs.readSync(fd, buf, 0, len, pos);
  return buf.subarray(0, n).toString('utf8');
}

const ID_RE = /^\{"id":(\d+),/;

export class RunHistory {
  constructor(readonly file: string, readonly keep: number = DEFAULT_HISTORY_KEEP) {}

  /** The newest complete run, reading only the file's tail; null when there is none. */
  last(): RunRecord | null {
    let fd: number;
    try { fd = fs.openSync(this.file, 'r'); } catch { return null; }
    try {
      let pos = fs.fstatSync(fd).size;
      let buf = Buffer.alloc(0);
      while (pos > 0) {
        const len = Math.min(65536, pos);
        pos -= len;
        const chunk = Buffer.alloc(len);
        fs.readSync(fd, chunk, 0, len, pos);
        buf = Buffer.concat([chunk, buf]);
        // The last complete line ends at the last newline (bytes after it: a torn append).
        const end = buf.lastIndexOf(0x0a);
        if (end < 0) continue;
        const start = end > 0 ? buf.lastIndexOf(0x0a, end - 1) : -1;
        if (start < 0 && pos > 0) continue;
        try {
          const r = JSON.parse(buf.subarray(start + 1, end).toString('utf8')) as RunRecord;
          return r.format === RUNS_FORMAT ? r : null;
        } catch {
          return null;
        }
      }
      return null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The id of the oldest run kept, from the file's first bytes. */
  private firstId(): number | null {
    let fd: number;
    try { fd = fs.openSync(this.file, 'r'); } catch { return null; }
    try {
      const m = ID_RE.exec(readAt(fd, 0, 32));
      return m ? Number(m[1]) : null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Every complete run, oldest first (lines of another format or torn lines are skipped). */
  all(): RunRecord[] {
    let text: string;
    try { text = fs.readFileSync(this.file, 'utf8'); } catch { return []; }
    const out: RunRecord[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const r = JSON.parse(line) as RunRecord;
        if (r.format === RUNS_FORMAT && typeof r.id === 'number') out.push(r);
      } catch { /* a torn line */ }
    }
    return out;
  }

  /**
   * Appends a run (its id is the last one's + 1; `prev` is the last run if the caller already read
   * it) and drops the oldest runs beyond the retention. Returns the id.
   */
  append(run: Omit<RunRecord, 'id' | 'format'>, prev: RunRecord | null | undefined = undefined): number {
    const last = prev === undefined ? this.last() : prev;
    const id = (last?.id ?? 0) + 1;
    const line = JSON.stringify({ id, format: RUNS_FORMAT, ...run }) + '\n';
    engineWrite('the run history', this.file, () => {
      // A torn tail (killed mid-append) would glue onto this line: start it on a fresh line.
      let sep = '';
      try {
        const fd = fs.openSync(this.file, 'r');
        try {
          const size = fs.fstatSync(fd).size;
          if (size > 0 && readAt(fd, size - 1, 1) !== '\n') sep = '\n';
        } finally { fs.closeSync(fd); }
      } catch { /* no history yet */ }
      fs.appendFileSync(this.file, sep + line);
    });
    const first = this.firstId();
    if (first !== null && id - first + 1 > this.keep + Math.max(2, Math.floor(this.keep / 10))) this.compact();
    return id;
  }

  /** Keep the newest `keep` runs. */
  compact(): void {
    const runs = this.all().slice(-this.keep);
    const body = runs.map((r) => JSON.stringify(r) + '\n').join('');
    engineWrite('the run history', this.file, () => writeFileAtomic(this.file, body));
  }
}
