// Per-target records (the verifying trace): an append-only log of JSON lines in .rc1/trace.log,
// format-versioned. One line is appended when a target finishes, so a killed build loses at most
// the line being written; a torn last line is detected (no newline or bad JSON) and cut off.
// The log is compacted (rewritten atomically) when superseded lines outnumber live ones.
import * as fs from 'node:fs';
import type { Check } from '../api/index.ts';
import type { Fingerprint } from '../hash/fingerprint.ts';
import { writeFileAtomic } from '../util/fs.ts';

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

export class TraceLog {
  readonly records = new Map<string, TargetRecord>();
  /** Set when the log was written by another format version (everything rebuilds). */
  formatChange: string | null = null;
  private lines = 0;
  private fd: number | null = null;

  constructor(private readonly file: string) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return;
    }
    let offset = 0;
    let first = true;
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
          this.formatChange = `rc1 state format v${fmt ?? '?'} → v${TRACE_FORMAT}; all targets will rebuild`;
          return;
        }
      } else {
        const l = obj as Line;
        if ('deleted' in l) this.records.delete(l.name);
        else this.records.set(l.name, l);
        this.lines++;
      }
      offset = nl + 1;
      goodEnd = offset;
    }
    this.tornBytes = Buffer.byteLength(text) - Buffer.byteLength(text.slice(0, goodEnd));
    this.goodBytes = Buffer.byteLength(text.slice(0, goodEnd));
  }

  /** Bytes after the last complete line (a build killed mid-write); cut off by repair(). */
  tornBytes = 0;
  private goodBytes = 0;

  /** Called with the workspace lock held: drop a torn tail, or start a fresh log on format change. */
  repair(): void {
    if (this.formatChange || !fs.existsSync(this.file)) {
      writeFileAtomic(this.file, JSON.stringify({ format: TRACE_FORMAT }) + '\n');
      this.lines = 0;
    } else if (this.tornBytes > 0) {
      fs.truncateSync(this.file, this.goodBytes);
      this.tornBytes = 0;
    }
  }

  private append(line: Line): void {
    if (this.fd === null) this.fd = fs.openSync(this.file, 'a');
    fs.writeSync(this.fd, JSON.stringify(line) + '\n');
    this.lines++;
  }

  put(rec: TargetRecord): void {
    this.records.set(rec.name, rec);
    this.append(rec);
  }

  remove(name: string): void {
    if (!this.records.has(name)) return;
    this.records.delete(name);
    this.append({ name, deleted: true });
  }

  /** Rewrite the log with live records only, once stale lines exceed a quarter of the live ones. */
  compactIfNeeded(): void {
    if (this.lines - this.records.size <= Math.max(64, this.records.size / 4)) return;
    this.close();
    const body = [...this.records.values()].map((r) => JSON.stringify(r) + '\n').join('');
    writeFileAtomic(this.file, JSON.stringify({ format: TRACE_FORMAT }) + '\n' + body);
    this.lines = this.records.size;
  }

  close(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }
}
