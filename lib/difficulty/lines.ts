// Streaming JSONL for pools of tens of thousands of scenarios: lines are read a chunk at a time
// (so memory holds one chunk, not the file) and written through a buffered file handle. A line
// that is not a JSON object, or a scenario that lacks a field the difficulty metrics read, is a
// DataError naming the file, the line and the field.
import { createReadStream, closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Scenario } from '../data/scenario.ts';
import { RuleError } from 'rc1-build';
import { DataError, describeValue, type Location } from '../data/data-error.ts';

/**
 * The lines of a file as byte ranges of a chunk, with 1-based line numbers and the byte offset after
 * each ('\r\n' accepted; the '\r' is left out of the range). With `from`, only the lines that start
 * at or after byte `from` (the bytes before from - 1 are not read; line numbers count from the first
 * line yielded). A line inside a chunk is a range of the chunk itself; only a line cut by a chunk's
 * end is copied, into a buffer of its own.
 */
export async function* readLineRanges(
  path: string,
  o: {
    from?: number;
    /** Bytes read at a time (tests: small, to put lines across chunk ends). */
    chunkBytes?: number;
  } = {},
): AsyncGenerator<{ buf: Buffer; start: number; end: number; line: number; offset: number }> {
  const from = o.from ?? 0;
  // The first line that starts at or after `from` is the one after the first '\n' at or after from - 1.
  let skipping = from > 0;
  /** The file offset of the next chunk. */
  let pos = skipping ? from - 1 : 0;
  /** The head of a line cut by the end of the previous chunk(s). */
  let rest: Buffer = Buffer.alloc(0);
  let line = 0;
  const endOf = (buf: Buffer, start: number, end: number): number =>
    end > start && buf[end - 1] === 13 ? end - 1 : end;
  for await (const c of createReadStream(path, { highWaterMark: o.chunkBytes ?? 1 << 22, start: pos })) {
    const chunk = c as Buffer;
    const base = pos;
    pos += chunk.length;
    let start = 0;
    if (skipping) {
      const nl = chunk.indexOf(10);
      if (nl === -1) continue;
      skipping = false;
      start = nl + 1;
    }
    let end = chunk.indexOf(10, start);
    if (rest.length > 0) {
      if (end === -1) {
        rest = Buffer.concat([rest, chunk]);
        continue;
      }
      const buf = Buffer.concat([rest, chunk.subarray(0, end)]);
      line += 1;
      yield { buf, start: 0, end: endOf(buf, 0, buf.length), line, offset: base + end + 1 };
      start = end + 1;
      end = chunk.indexOf(10, start);
    }
    for (; end !== -1; end = chunk.indexOf(10, start)) {
      line += 1;
      yield { buf: chunk, start, end: endOf(chunk, start, end), line, offset: base + end + 1 };
      start = end + 1;
    }
    rest = chunk.subarray(start);
  }
  if (rest.length > 0) {
    line += 1;
    yield { buf: rest, start: 0, end: rest.length, line, offset: pos };
  }
}

/** Whether bytes start..end of buf hold only whitespace (String.prototype.trim's: ASCII and Unicode). */
export function blankRange(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
    return b < 0x80 ? false : buf.toString('utf8', start, end).trim() === '';
  }
  return true;
}

/** Non-blank lines of a text file with their 1-based line numbers and the byte offset after each ('\r\n' accepted). */
export async function* readLines(path: string): AsyncGenerator<{ text: string; line: number; offset: number }> {
  for await (const { buf, start, end, line, offset } of readLineRanges(path)) {
    if (!blankRange(buf, start, end)) yield { text: buf.toString('utf8', start, end), line, offset };
  }
}

/** Parses a JSONL line as a JSON object. */
export function parseObject(text: string, at: Location): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new DataError(
      at,
      '(json)',
      'a JSON object',
      `${describeValue(text)} (not valid JSON: ${(e as Error).message})`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new DataError(at, '(json)', 'a JSON object', describeValue(value));
  return value as Record<string, unknown>;
}

function need(ok: boolean, at: Location, field: string, expected: string, got: unknown): void {
  if (!ok) throw new DataError(at, field, expected, describeValue(got));
}

/**
 * Checks the fields of a scenario that the difficulty metrics read (lib/data/scenario.ts); v is a
 * parsed JSON line (its arrays have no holes). Plain loops, and a field name such as
 * `messages[3].content` is built only for the DataError: this runs for every message, document and
 * step of every line of a pool.
 */
export function asScenario(v: Record<string, unknown>, at: Location): Scenario {
  need(typeof v.id === 'string' && v.id !== '', at, 'id', 'a non-empty string', v.id);
  need(typeof v.task === 'string' && v.task !== '', at, 'task', 'a non-empty string', v.task);
  need(Array.isArray(v.messages), at, 'messages', 'a list', v.messages);
  const messages = v.messages as unknown[];
  for (let i = 0; i < messages.length; i++) {
    const content = (messages[i] as { content?: unknown } | null | undefined)?.content;
    if (typeof content !== 'string') need(false, at, `messages[${i}].content`, 'a string', content);
  }
  need(Array.isArray(v.context), at, 'context', 'a list', v.context);
  const context = v.context as unknown[];
  for (let i = 0; i < context.length; i++) {
    const doc = context[i] as { title?: unknown; text?: unknown; supporting?: unknown } | null | undefined;
    if (!(typeof doc?.title === 'string' && typeof doc.text === 'string' && typeof doc.supporting === 'boolean'))
      need(false, at, `context[${i}]`, 'a document {title, text, supporting}', context[i]);
  }
  need(typeof v.needs_clarification === 'boolean', at, 'needs_clarification', 'true or false', v.needs_clarification);
  need(
    v.clarification === null || typeof v.clarification === 'string',
    at,
    'clarification',
    'a string or null',
    v.clarification,
  );
  const ref = v.reference as { steps?: unknown } | undefined;
  need(Array.isArray(ref?.steps), at, 'reference.steps', 'a list', ref?.steps);
  const steps = ref!.steps as unknown[];
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as { type?: unknown; input?: unknown; text?: unknown } | null | undefined;
    const ok =
      step?.type === 'clarify' ||
      (step?.type === 'tool_call' && typeof step.input === 'string') ||
      (step?.type === 'thought' && typeof step.text === 'string');
    if (!ok) need(false, at, `reference.steps[${i}]`, 'a clarify, tool_call or thought step', steps[i]);
  }
  return v as unknown as Scenario;
}

/**
 * The one JSONL file of an input group. Other files are passed over, so a group may name a whole
 * target (balanced_pool's outputs are its JSONL and its JSON report).
 */
export function singleJsonl(rule: string, group: string, files: readonly string[]): string {
  const jsonl = files.filter((f) => f.endsWith('.jsonl'));
  if (jsonl.length !== 1) {
    throw new RuleError(
      `${rule}: the \`${group}\` input group must hold one .jsonl file, got ${jsonl.length}${files.length ? ` (${files.join(', ')})` : ''}`,
    );
  }
  return jsonl[0]!;
}

/** Buffered writes to a new file, in batches of about 1 MiB; a subclass says how its parts become bytes. */
abstract class BufferedFile<Part> {
  private readonly fd: number;
  protected parts: Part[] = [];
  protected size = 0;

  constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'w');
  }

  protected add(part: Part, size: number): void {
    this.parts.push(part);
    this.size += size;
    if (this.size >= 1 << 20) this.flush();
  }

  /** The bytes of the parts buffered so far. */
  protected abstract bytes(): Buffer;

  private flush(): void {
    const bytes = this.bytes();
    for (let off = 0; off < bytes.length; ) off += writeSync(this.fd, bytes, off, bytes.length - off);
    this.parts = [];
    this.size = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** Buffered writes of text (UTF-8) to a new file: the strings of a batch are joined, then encoded once. */
export class LineWriter extends BufferedFile<string> {
  write(text: string): void {
    this.add(text, text.length);
  }

  protected bytes(): Buffer {
    return Buffer.from(this.parts.join(''), 'utf8');
  }
}

/** Buffered writes of bytes (and strings, as UTF-8) to a new file. */
export class ByteWriter extends BufferedFile<Buffer> {
  write(part: Buffer | string): void {
    const b = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    this.add(b, b.length);
  }

  protected bytes(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }
}
