// Per-target records (the verifying trace): an append-only log of JSON lines in .rc1/trace.log,
// format-versioned. One line is appended when a target finishes, so a killed build loses at most
// the line being written; a torn last line is detected (no newline or bad JSON) and cut off.
// The log is compacted (rewritten atomically) when superseded lines outnumber live ones.
// A write the filesystem refuses (a full disk) is undone — the file is cut back to its last
// complete line, so no half line can glue onto the next — and thrown as an EngineWriteError; the
// in-memory record changes only once its line is written. sync() fsyncs the log (end of build).
import * as fs from 'node:fs';
import type { Check } from '../api/index.ts';
import type { Fingerprint } from '../hash/fingerprint.ts';
import { FSYNC, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import { deepFreeze, readParsedGrowing } from './parsed-state.ts';

export const TRACE_FORMAT = 1;

export interface OutputRecord {
  path: string;
  sha256: string;
  size: number;
  dir: boolean;
  /** For directory outputs: relative file → sha256. */
  files?: Record<string, string>;
  /** For directory outputs: relative path → target of each symbolic link (e.g. latest → step_00042). */
  links?: Record<string, string>;
}

export type TargetResult = 'ok' | 'gate-failed' | 'failed';

export interface TargetRecord {
  name: string;
  key: string;
  fingerprint: Fingerprint;
  outputs: OutputRecord[];
  result: TargetResult;
  how: 'ran' | 'restored';
  checks?: Check[];
  summary?: string;
  error?: string;
  ms: number;
  at: string;
  rule?: { name: string; version: number };
}

type Line = TargetRecord | { name: string; deleted: true };

/** What a trace log's text holds (its records are not changed by any reader: a kept parse is shared). */
export interface ParsedTrace {
  records: Map<string, TargetRecord>;
  formatChange: string | null;
  lines: number;
  tornBytes: number;
  goodBytes: number;
}

export function parseTrace(text: string): ParsedTrace {
  const out: ParsedTrace = { records: new Map(), formatChange: null, lines: 0, tornBytes: 0, goodBytes: 0 };
  scanLines(out, text, true);
  return out;
}

/**
 * parseTrace(kept's text + appended), from `kept` (which it does not change) and the appended
 * text alone; null when kept's text did not end with a complete good line (a torn tail, another
 * format, an empty file): the whole text is parsed then.
 */
export function extendTrace(kept: ParsedTrace, appended: string): ParsedTrace | null {
  if (kept.formatChange !== null || kept.tornBytes > 0 || kept.goodBytes === 0) return null;
  const out: ParsedTrace = {
    records: new Map(kept.records),
    formatChange: null,
    lines: kept.lines,
    tornBytes: 0,
    goodBytes: kept.goodBytes,
  };
  scanLines(out, appended, false);
  return out;
}

/** Applies text's complete lines to `out` up to the first torn or bad one; `first`: text begins with the format line. */
function scanLines(out: ParsedTrace, text: string, first: boolean): void {
  let offset = 0;
  let goodEnd = 0;
  while (offset < text.length) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) break; // torn tail: no newline
    const line = text.slice(offset, nl);
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      break; // torn or corrupt: keep what came before
    }
    if (first) {
      first = false;
      const fmt = (obj as { format?: number }).format;
      if (fmt !== TRACE_FORMAT) {
        out.formatChange = `rc1 state format v${fmt ?? '?'} → v${TRACE_FORMAT}; all targets will rebuild`;
        return;
      }
    } else {
      const l = obj as Line;
      if ('deleted' in l) out.records.delete(l.name);
      else out.records.set(l.name, l);
      out.lines++;
    }
    offset = nl + 1;
    goodEnd = offset;
  }
  // Bytes, not characters: the whole text's when every line was good (the common case).
  const all = Buffer.byteLength(text);
  const good = goodEnd === text.length ? all : Buffer.byteLength(text.slice(0, goodEnd));
  out.goodBytes += good;
  out.tornBytes = all - good;
}

export class TraceLog {
  readonly records = new Map<string, TargetRecord>();
  /** Set when the log was written by another format version (everything rebuilds). */
  formatChange: string | null = null;
  private lines = 0;
  /** Lines appended by this process: a build that appended none left the records as they were. */
  writes = 0;
  /**
   * Each target whose record this process replaced or removed since the last forgetChanges(),
   * mapped to its record before the first such write (undefined: it had none). The manifest
   * (report/manifest.ts) re-derives only these targets' sidecars.
   */
  readonly changedSince = new Map<string, TargetRecord | undefined>();
  private fd: number | null = null;

  constructor(readonly file: string) {
    const p = readParsedGrowing(file, parseTrace, extendTrace, (t) => {
      for (const r of t.records.values()) deepFreeze(r);
    });
    if (p === null) return;
    for (const [name, rec] of p.records) this.records.set(name, rec);
    this.formatChange = p.formatChange;
    this.lines = p.lines;
    this.tornBytes = p.tornBytes;
    this.goodBytes = p.goodBytes;
  }

  /** Bytes after the last complete line (a build killed mid-write); cut off by repair(). */
  tornBytes = 0;
  private goodBytes = 0;

  /** Called with the workspace lock held: drop a torn tail, or start a fresh log on format change. */
  repair(): void {
    engineWrite('the trace log', this.file, () => {
      if (this.formatChange || !fs.existsSync(this.file)) {
        writeFileAtomic(this.file, JSON.stringify({ format: TRACE_FORMAT }) + '\n');
        this.lines = 0;
        this.goodBytes = fs.statSync(this.file).size;
      } else if (this.tornBytes > 0) {
        fs.truncateSync(this.file, this.goodBytes);
        this.tornBytes = 0;
      }
    });
  }

  private append(line: Line): void {
    const bytes = Buffer.from(JSON.stringify(line) + '\n');
    engineWrite('the trace log', this.file, () => {
      if (this.fd === null) {
        this.fd = fs.openSync(this.file, 'a');
        this.goodBytes = fs.fstatSync(this.fd).size;
      }
      try {
        let off = 0;
        while (off < bytes.length) off += fs.writeSync(this.fd, bytes, off);
      } catch (e) {
        try {
          fs.ftruncateSync(this.fd, this.goodBytes);
        } catch {
          /* the next open cuts the torn tail */
        }
        throw e;
      }
    });
    this.goodBytes += bytes.length;
    this.lines++;
    this.writes++;
  }

  put(rec: TargetRecord): void {
    this.append(rec);
    this.noteChange(rec.name);
    this.records.set(rec.name, rec);
  }

  remove(name: string): void {
    if (!this.records.has(name)) return;
    this.append({ name, deleted: true });
    this.noteChange(name);
    this.records.delete(name);
  }

  private noteChange(name: string): void {
    if (!this.changedSince.has(name)) this.changedSince.set(name, this.records.get(name));
  }

  /** Start a new changedSince (a build starts). */
  forgetChanges(): void {
    this.changedSince.clear();
  }

  /** fsync the log: called once at the end of a build (RC1_FSYNC=off skips it). */
  sync(): void {
    if (this.fd !== null && FSYNC) engineWrite('the trace log', this.file, () => fs.fdatasyncSync(this.fd!));
  }

  /** Rewrite the log with live records only, once stale lines exceed a quarter of the live ones. */
  compactIfNeeded(): void {
    if (this.lines - this.records.size <= Math.max(64, this.records.size / 4)) return;
    this.close();
    const body =
      JSON.stringify({ format: TRACE_FORMAT }) +
      '\n' +
      [...this.records.values()].map((r) => JSON.stringify(r) + '\n').join('');
    engineWrite('the trace log', this.file, () => writeFileAtomic(this.file, body, { durable: true }));
    this.lines = this.records.size;
    this.goodBytes = Buffer.byteLength(body);
  }

  close(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }
}
