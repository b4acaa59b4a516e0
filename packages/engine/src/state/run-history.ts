// The run history: one JSON line per build in .rc1/runs.jsonl (append-only, format-versioned),
// read by `rc1-build log`, `diff` and `why`. JSON Lines rather than SQLite: a build appends one
// line (an open and a write, no native module to load on the no-op path), a killed build loses at
// most its own torn line, and the queries are scans of at most `keep` runs.
//
// A line stores what changed since the line before it: the targets this build ran, restored or
// failed (with their new key and output hashes), their gates' checks and declared metrics, and
// the params when they changed. A line with `full: true` holds the whole state instead: the first
// line, and any build that finds the trace (.rc1/trace.log) changed since the last run was
// recorded (a `clean`, a killed build). So a no-op appends ~300 bytes and reads only the last
// line. all() replays the lines into whole RunRecords. Size is bounded: beyond keep + keep/10
// runs, the file is rewritten (atomically) with the newest `keep`, the first of them made full.
import * as fs from 'node:fs';
import type { Check } from '../api/index.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

export const RUNS_FORMAT = 1;
export const DEFAULT_HISTORY_KEEP = 200;

export type RunOutcome = 'ran' | 'restored' | 'up-to-date' | 'failed' | 'gate-failed' | 'blocked';

/** A target's state after a run: its key and output hashes. */
export interface TargetState {
  key: string;
  outputs: Record<string, string>;
}

export interface RunCounts {
  ran: number;
  restored: number;
  upToDate: number;
  failed: number;
  gateFailed: number;
  blocked: number;
}

interface RunHead {
  /** When the build started (ISO 8601, UTC). */
  at: string;
  ms: number;
  exitCode: number;
  command: string;
  profile: string;
  pipeline?: string;
  git: { commit: string | null; dirty: boolean | null };
  /** Targets asked for on the command line (absent: the pipeline's default targets). */
  asked?: string[];
  counts: RunCounts;
  /** What this build did to each target it did not find up to date (ms: rule or restore time). */
  outcomes: Record<string, { outcome: RunOutcome; ms?: number }>;
  /** size:mtime of the trace after this build: a later build that finds it otherwise records a full state. */
  trace: string;
  /** sha256 of the params' canonical JSON. */
  paramsHash: string;
}

/** One line of the file. */
export interface RunLine extends RunHead {
  id: number;
  format: number;
  full: boolean;
  /** Target → state (null: no longer recorded). Full lines list every target. */
  state: Record<string, TargetState | null>;
  /** Every declared param → value: present when full or when the params changed. */
  params?: Record<string, unknown>;
  /** Gate → checks (null: none recorded any more). */
  checks: Record<string, Check[] | null>;
  /** Metrics file → dotted key → number (null: no longer produced). */
  metrics: Record<string, Record<string, number> | null>;
}

/** A run as replayed: the whole state after it. */
export interface RunRecord extends RunHead {
  id: number;
  state: Record<string, TargetState>;
  params: Record<string, unknown>;
  checks: Record<string, Check[]>;
  metrics: Record<string, Record<string, number>>;
}

const merge = <T>(base: Record<string, T>, delta: Record<string, T | null>, full: boolean): Record<string, T> => {
  const out: Record<string, T> = full ? {} : { ...base };
  for (const [k, v] of Object.entries(delta)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
};

/** Replays lines (oldest first) into whole runs; lines before the first full one are dropped. */
export function replay(lines: readonly RunLine[]): RunRecord[] {
  const out: RunRecord[] = [];
  let prev: RunRecord | null = null;
  for (const l of lines) {
    if (!l.full && !prev) continue;
    const { full, format: _f, ...head } = l;
    const r: RunRecord = {
      ...head,
      state: merge(prev?.state ?? {}, l.state, full),
      params: l.params ?? prev?.params ?? {},
      checks: merge(prev?.checks ?? {}, l.checks, full),
      metrics: merge(prev?.metrics ?? {}, l.metrics, full),
    };
    out.push(r);
    prev = r;
  }
  return out;
}

/** Applies a line's delta in place, as merge() does into a copy. */
function applyDelta<T>(into: Record<string, T>, delta: Record<string, T | null>): void {
  for (const [k, v] of Object.entries(delta)) {
    if (v === null) delete into[k];
    else into[k] = v;
  }
}

/**
 * replay(lines)[at] and replay(lines).length, folding the lines into one accumulator: replay()
 * copies the whole state (every target) once per run, ~200 copies of 1 000 keys when compacting
 * a long history, where this copies it once.
 */
export function replayAt(lines: readonly RunLine[], at: number): { run: RunRecord | null; runs: number } {
  let state: Record<string, TargetState> | null = null;
  let checks: Record<string, Check[]> = {};
  let metrics: Record<string, Record<string, number>> = {};
  let params: Record<string, unknown> | undefined;
  let run: RunRecord | null = null;
  let k = -1;
  for (const l of lines) {
    if (!l.full && state === null) continue;
    k++;
    if (l.full || state === null) {
      state = {};
      checks = {};
      metrics = {};
    }
    applyDelta(state, l.state);
    applyDelta(checks, l.checks);
    applyDelta(metrics, l.metrics);
    params = l.params ?? params ?? {};
    if (k === at) {
      const { full: _full, format: _f, ...head } = l;
      run = { ...head, state: { ...state }, params, checks: { ...checks }, metrics: { ...metrics } };
    }
  }
  return { run, runs: k + 1 };
}

/** The trace log's size:mtime as a run line records it ('none': no trace). */
export function traceStamp(file: string): string {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st ? `${st.size}:${st.mtimeMs}` : 'none';
}

const ID_RE = /^\{"id":(\d+),/;

export class RunHistory {
  constructor(
    readonly file: string,
    readonly keep: number = DEFAULT_HISTORY_KEEP,
  ) {}

  /** The newest complete line, reading only the file's tail; null when there is none. */
  lastLine(): RunLine | null {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return null;
    }
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
          const r = JSON.parse(buf.subarray(start + 1, end).toString('utf8')) as RunLine;
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
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return null;
    }
    try {
      const buf = Buffer.alloc(32);
      const n = fs.readSync(fd, buf, 0, 32, 0);
      const m = ID_RE.exec(buf.subarray(0, n).toString('utf8'));
      return m ? Number(m[1]) : null;
    } finally {
      fs.closeSync(fd);
    }
  }

  private lines(): RunLine[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    const out: RunLine[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const r = JSON.parse(line) as RunLine;
        if (r.format === RUNS_FORMAT && typeof r.id === 'number') out.push(r);
      } catch {
        /* a torn line */
      }
    }
    return out;
  }

  /** Every run, oldest first, each with the whole state after it. */
  all(): RunRecord[] {
    return replay(this.lines());
  }

  /** Appends a line (its id: the last line's + 1) and drops the oldest runs beyond the retention. Returns the id. */
  append(line: Omit<RunLine, 'id' | 'format'>, prev: RunLine | null): number {
    const id = (prev?.id ?? 0) + 1;
    const text = JSON.stringify({ id, format: RUNS_FORMAT, ...line }) + '\n';
    engineWrite('the run history', this.file, () => {
      // A torn tail (killed mid-append) would glue onto this line: start it on a fresh line.
      let sep = '';
      try {
        const fd = fs.openSync(this.file, 'r');
        try {
          const size = fs.fstatSync(fd).size;
          const b = Buffer.alloc(1);
          if (size > 0 && fs.readSync(fd, b, 0, 1, size - 1) === 1 && b[0] !== 0x0a) sep = '\n';
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        /* no history yet */
      }
      fs.appendFileSync(this.file, sep + text);
    });
    const first = this.firstId();
    if (first !== null && id - first + 1 > this.keep + Math.max(2, Math.floor(this.keep / 10))) this.compact();
    return id;
  }

  /** Keep the newest `keep` runs; the first kept becomes a full line. */
  compact(): void {
    const lines = this.lines();
    const count = replayAt(lines, -1).runs;
    const from = Math.max(0, count - this.keep);
    const kept = lines.slice(lines.length - (count - from));
    if (!kept.length) return;
    const first = replayAt(lines, from).run!;
    const { id, ...head } = first;
    const fullFirst: RunLine = { id, format: RUNS_FORMAT, ...head, full: true };
    const body = [fullFirst, ...kept.slice(1)].map((r) => JSON.stringify(r) + '\n').join('');
    engineWrite('the run history', this.file, () => writeFileAtomic(this.file, body));
  }
}
