// Reading the metrics JSONL back (balanced_pool, difficulty_report), and the two cheap edits of a
// scenario line the balanced pool needs: its id, and the line with a `difficulty` field appended.
// Lines are written by JSON.stringify with `id` first and end in '}', so both are read from the
// text; any line that does not look like that is parsed in full instead.
import { isUtf8 } from 'node:buffer';
import { DataError, describeValue, displayPath, type Location } from '../data/data-error.ts';
import { LastRead } from '../data/thread-memo.ts';
import { BUCKETS, type Bucket } from './bands.ts';
import { readLines, parseObject } from './lines.ts';
import { AMBIGUITY_FLAGS, type DifficultyMetrics } from './metrics.ts';

const COUNTS = [
  'len_tokens',
  'turns',
  'tool_hops',
  'hops',
  'distractors',
  'entities',
  'ops_numeric',
  'coref_pronouns',
] as const;

function asMetrics(v: Record<string, unknown>, at: Location): DifficultyMetrics {
  const bad = (field: string, expected: string): never => {
    throw new DataError(at, field, expected, describeValue(v[field]));
  };
  if (typeof v.id !== 'string' || v.id === '') bad('id', 'a non-empty string');
  if (typeof v.task !== 'string' || v.task === '') bad('task', 'a non-empty string');
  for (const k of COUNTS) if (!Number.isInteger(v[k]) || (v[k] as number) < 0) bad(k, 'a non-negative integer');
  if (typeof v.connector_density !== 'number' || v.connector_density < 0)
    bad('connector_density', 'a non-negative number');
  if (v.clue_overlap !== null && (typeof v.clue_overlap !== 'number' || v.clue_overlap < 0 || v.clue_overlap > 1))
    bad('clue_overlap', 'a number in [0, 1] or null');
  if (
    !Array.isArray(v.ambiguity_flags) ||
    !v.ambiguity_flags.every((f) => (AMBIGUITY_FLAGS as readonly unknown[]).includes(f))
  ) {
    bad('ambiguity_flags', `a list of ${AMBIGUITY_FLAGS.join(', ')}`);
  }
  if (typeof v.needs_clarification !== 'boolean') bad('needs_clarification', 'true or false');
  return v as unknown as DifficultyMetrics;
}

/** This thread's last read (lib/data/thread-memo.ts): difficulty_report runs after balanced_pool, mostly in the same worker. */
const lastRead = new LastRead<DifficultyMetrics[]>();

/**
 * Every line of a metrics file, checked; ids must be unique. Read-only: an unchanged file read
 * again in the same thread gives the same array (lib/data/thread-memo.ts).
 */
export function readMetrics(path: string, root: string): Promise<DifficultyMetrics[]> {
  return lastRead.get(JSON.stringify([path, root]), [path], () => readMetricsNow(path, root));
}

async function readMetricsNow(path: string, root: string): Promise<DifficultyMetrics[]> {
  const file = displayPath(path, root);
  const out: DifficultyMetrics[] = [];
  const seen = new Map<string, number>();
  for await (const { text, line } of readLines(path)) {
    const at: Location = { file, line, unit: 'line' };
    const m = asMetrics(parseObject(text, at), at);
    const first = seen.get(m.id);
    if (first !== undefined)
      throw new DataError(at, 'id', `an id not used before (line ${first} has it)`, describeValue(m.id));
    seen.set(m.id, line);
    out.push(m);
  }
  return out;
}

const LEADING_ID = /^\{"id":("(?:[^"\\]|\\.)*")/;
const TRAILING_DIFFICULTY = /,"difficulty":"(easy|medium|hard)"\}$/;

/** The `id` of a scenario line. */
export function lineId(text: string, at: Location): string {
  const m = LEADING_ID.exec(text);
  const id = m ? (JSON.parse(m[1]!) as unknown) : parseObject(text, at).id;
  if (typeof id !== 'string') throw new DataError(at, 'id', 'a string', describeValue(id));
  return id;
}

/** The scenario line with `"difficulty": bucket` as its last field. */
export function withDifficulty(text: string, bucket: Bucket, at: Location): string {
  const line = text.trimEnd();
  if (line.endsWith('}') && !line.includes('"difficulty":') && line !== '{}')
    return `${line.slice(0, -1)},"difficulty":"${bucket}"}`;
  const obj = parseObject(line, at);
  delete obj.difficulty;
  return JSON.stringify({ ...obj, difficulty: bucket });
}

/** The id and difficulty bucket of a balanced-pool line. */
export function balancedEntry(text: string, at: Location): { id: string; bucket: Bucket } {
  const m = TRAILING_DIFFICULTY.exec(text);
  if (m && LEADING_ID.test(text)) return { id: lineId(text, at), bucket: m[1] as Bucket };
  const obj = parseObject(text, at);
  if (typeof obj.id !== 'string') throw new DataError(at, 'id', 'a string', describeValue(obj.id));
  if (!(BUCKETS as readonly unknown[]).includes(obj.difficulty))
    throw new DataError(at, 'difficulty', 'easy, medium or hard', describeValue(obj.difficulty));
  return { id: obj.id, bucket: obj.difficulty as Bucket };
}

const DIFFICULTY_KEY = Buffer.from('"difficulty":');
const isSpace = (b: number): boolean => b === 0x20 || (b >= 0x09 && b <= 0x0d);

/** lineId() of the line in bytes start..end of buf, decoding only its first 256 bytes where the id is there. */
export function lineIdOf(buf: Buffer, start: number, end: number, at: Location): string {
  const head = buf.toString('utf8', start, Math.min(end, start + 256));
  const m = LEADING_ID.exec(head);
  // A match ends at the id's closing quote, before any character the 256-byte cut may have split.
  if (m) {
    const id = JSON.parse(m[1]!) as unknown;
    if (typeof id === 'string') return id;
  }
  return lineId(buf.toString('utf8', start, end), at);
}

/**
 * withDifficulty() of the line in bytes start..end of buf, as bytes copied from the line, where
 * that is what withDifficulty() gives: valid UTF-8 ending in '}' (before ASCII whitespace), no
 * "difficulty": key in it, not '{}'. null otherwise (then call withDifficulty on the text).
 */
export function withDifficultyBytes(buf: Buffer, start: number, end: number, bucket: Bucket): Buffer[] | null {
  let e = end;
  while (e > start && isSpace(buf[e - 1]!)) e -= 1;
  if (e - start < 3 || buf[e - 1] !== 0x7d) return null;
  const line = buf.subarray(start, e);
  if (line.indexOf(DIFFICULTY_KEY) !== -1 || !isUtf8(line)) return null;
  return [buf.subarray(start, e - 1), SUFFIX[bucket]];
}
const SUFFIX: Record<Bucket, Buffer> = {
  easy: Buffer.from(',"difficulty":"easy"}'),
  medium: Buffer.from(',"difficulty":"medium"}'),
  hard: Buffer.from(',"difficulty":"hard"}'),
};

/** balancedEntry() of the line in bytes start..end of buf, decoding only its first 256 and last 32 bytes where they hold the id and the bucket. */
export function balancedEntryOf(buf: Buffer, start: number, end: number, at: Location): { id: string; bucket: Bucket } {
  // Each match lies wholly inside its decoded part (the id ends at its closing quote, the bucket
  // suffix is ASCII), before or after any character a cut may have split.
  const tail = TRAILING_DIFFICULTY.exec(buf.toString('utf8', Math.max(start, end - 32), end));
  const head = tail ? LEADING_ID.exec(buf.toString('utf8', start, Math.min(end, start + 256))) : null;
  if (tail && head) {
    const id = JSON.parse(head[1]!) as unknown;
    if (typeof id === 'string') return { id, bucket: tail[1] as Bucket };
  }
  return balancedEntry(buf.toString('utf8', start, end), at);
}
