// Computes the metrics JSONL of a pool on one thread or several (one per 16 MiB of pool, up to
// difficulty.metrics.workers threads and the CPUs available). With n threads, the pool's lines are
// cut into n shards by the bytes of each line's source_id, so a source item's documents are
// tokenised (and their sentence 3-grams built) by one thread only: this thread computes shard 0 —
// its code is already loaded and warm, where a worker starts cold (module load, the Qwen3 table,
// the JIT: in a profile of the RC1 data half, ~0.2–0.3 s of the metrics' time went to a third,
// coordinating thread and the second worker's start; bench/results/speed.md, twenty-first pass) —
// and n − 1 worker_threads the others. Each thread reads the pool itself and decodes only its own
// lines; this thread also puts every result back in pool order and writes it. A worker stays at
// most MAX_AHEAD scenarios ahead of the written ones.
// Metrics are a pure function of the scenario, so the output is byte-identical for any number of
// threads. The first problem in pool order (a malformed line, a duplicate id) is the one thrown.
// A worker runs this same module's file (import.meta.url: the rule's bundle, or the shared chunk
// of the compiled rules that holds this file, since esbuild splits by whole files): see the `role`
// check at the bottom, which is in the same file.
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { DataError, describeValue, type Location } from '../data/data-error.ts';
import { LineWriter, asScenario, blankRange, parseObject, readLineRanges, readLines } from './lines.ts';
import { MetricsComputer } from './metrics.ts';
import { NeedsQwen3Package, loadQwen3Table, type Qwen3TableCounter } from './qwen3-table.ts';
import { loadQwen3 } from './qwen3-tokens.ts';

const ROLE = 'rc1-difficulty-metrics';
/** Pool bytes per worker: a worker loads its own tokenizer (about a second), so small pools stay in this thread. */
export const BYTES_PER_WORKER = 16 << 20;
const BATCH = 256;
const FLUSH_EVERY = 2048;
/** How far (in scenarios) a worker may run ahead of the last one written. */
const MAX_AHEAD = 8192;

export interface MetricsJob {
  pool: string;
  /** The pool as named in diagnostics. */
  file: string;
  out: string;
  multiEntityMin: number;
  /** A Qwen3 BPE table (the tokenizer_table target's output) to count with; none: the tokenizer package (loadQwen3). */
  table?: string;
  /** At most this many threads (this one and workers − 1 worker_threads), one per BYTES_PER_WORKER of pool and per CPU; 1 (or a small pool): this thread alone. */
  workers: number;
  /** Pool bytes per worker (default BYTES_PER_WORKER). */
  bytesPerWorker?: number;
  signal: AbortSignal;
  progress(doneBytes: number): void;
}

export interface MetricsSummary {
  scenarios: number;
  perTask: Record<string, number>;
  tokens: number;
  mode: string;
  workers: number;
}

interface Item {
  idx: number;
  line: number;
  text: string;
}
type Result =
  | { idx: number; line: number; json: string; id: string; task: string; tokens: number }
  | { idx: number; line: number; error: ErrorData };
interface ErrorData {
  name: string;
  message: string;
  stack?: string;
  at?: Location;
  field?: string;
  expected?: string;
  got?: string;
}

function toErrorData(e: unknown): ErrorData {
  if (e instanceof DataError)
    return {
      name: e.name,
      message: e.message,
      at: { file: e.file, line: e.line, unit: e.unit },
      field: e.field,
      expected: e.expected,
      got: e.got,
    };
  const err = e instanceof Error ? e : new Error(String(e));
  return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
}

function fromErrorData(d: ErrorData): Error {
  if (d.name === 'DataError' && d.at && d.field !== undefined)
    return new DataError(d.at, d.field, d.expected ?? '', d.got ?? '');
  const err = new Error(d.message);
  err.name = d.name;
  if (d.stack) err.stack = d.stack;
  return err;
}

/** The metrics of one line; null where the table counter needs the tokenizer package first (computeLine). */
function computeOne(mc: MetricsComputer, file: string, it: Item): Result | null {
  try {
    const at: Location = { file, line: it.line, unit: 'line' };
    const m = mc.compute(asScenario(parseObject(it.text, at), at));
    return { idx: it.idx, line: it.line, json: JSON.stringify(m), id: m.id, task: m.task, tokens: m.len_tokens };
  } catch (e) {
    if (e instanceof NeedsQwen3Package) return null;
    return { idx: it.idx, line: it.line, error: toErrorData(e) };
  }
}

/** A thread's Qwen3 counter: over the table where one is given, else the package's. */
async function loadCounter(table: string | undefined): Promise<Qwen3TableCounter> {
  if (table !== undefined) return loadQwen3Table(table);
  const c = await loadQwen3();
  return { ...c, async attachPackage() {} };
}

/**
 * computeOne; a line the table counter cannot count alone (an added token, a piece outside the
 * table) is computed again once the package is attached. Metrics are pure in the line, and the
 * counter's memos keep only finished counts, so the second computation is the one-pass result.
 */
function computeLine(
  mc: MetricsComputer,
  counter: Qwen3TableCounter,
  file: string,
  it: Item,
): Result | Promise<Result> {
  const r = computeOne(mc, file, it);
  if (r !== null) return r;
  return counter.attachPackage().then(
    () =>
      computeOne(mc, file, it) ?? {
        idx: it.idx,
        line: it.line,
        error: toErrorData(new Error('internal error: the Qwen3 package was attached but a text still needs it')),
      },
  );
}

const SOURCE_ID = Buffer.from('"source_id":"');

/** The worker of a pool line (bytes start..end of buf): a hash of its source_id's bytes (of its first 64 bytes if it has none). */
export function shardOf(buf: Buffer, start: number, end: number, workers: number): number {
  let from = buf.indexOf(SOURCE_ID, start);
  let to: number;
  if (from === -1 || from >= end) {
    from = start;
    to = Math.min(end, start + 64);
  } else {
    from += SOURCE_ID.length;
    to = buf.indexOf(34, from);
    if (to === -1 || to > end) to = end;
  }
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ buf[i]!, 0x01000193) >>> 0;
  return h % workers;
}

/** Writes the metrics of every scenario of job.pool to job.out, in pool order. */
export async function writeMetrics(job: MetricsJob): Promise<MetricsSummary> {
  const bySize = Math.floor(statSync(job.pool).size / (job.bytesPerWorker ?? BYTES_PER_WORKER));
  const workers = Math.max(1, Math.min(job.workers, availableParallelism(), bySize));
  const writer = new LineWriter(job.out);
  const seen = new Map<string, number>();
  const summary: MetricsSummary = { scenarios: 0, perTask: {}, tokens: 0, mode: '', workers };
  const results = new Map<number, Result>();
  let cursor = 0;
  const drain = (): void => {
    for (let r = results.get(cursor); r !== undefined; r = results.get(cursor)) {
      results.delete(cursor);
      cursor += 1;
      if ('error' in r) throw fromErrorData(r.error);
      const first = seen.get(r.id);
      if (first !== undefined)
        throw new DataError(
          { file: job.file, line: r.line, unit: 'line' },
          'id',
          `an id not used before (line ${first} has it)`,
          describeValue(r.id),
        );
      seen.set(r.id, r.line);
      writer.write(`${r.json}\n`);
      summary.scenarios += 1;
      summary.perTask[r.task] = (summary.perTask[r.task] ?? 0) + 1;
      summary.tokens += r.tokens;
    }
  };
  try {
    if (workers === 1) {
      const counter = await loadCounter(job.table);
      summary.mode = counter.mode;
      const mc = new MetricsComputer(counter, { multiEntityMin: job.multiEntityMin });
      let idx = 0;
      for await (const { text, line, offset } of readLines(job.pool)) {
        const res = computeLine(mc, counter, job.file, { idx, line, text });
        results.set(idx, res instanceof Promise ? await res : res);
        idx += 1;
        drain();
        if (idx % FLUSH_EVERY === 0) {
          job.signal.throwIfAborted();
          job.progress(offset);
        }
      }
    } else {
      await runWorkers(job, workers, results, drain, summary);
    }
  } finally {
    writer.close();
  }
  return summary;
}

async function runWorkers(
  job: MetricsJob,
  n: number,
  results: Map<number, Result>,
  drain: () => void,
  summary: MetricsSummary,
): Promise<void> {
  // Shard 0 is computed here (this thread is started and its code warm); shards 1..n−1 by workers.
  const pool = Array.from(
    { length: n - 1 },
    (_, k) =>
      new Worker(new URL(import.meta.url), {
        workerData: {
          role: ROLE,
          pool: job.pool,
          file: job.file,
          multiEntityMin: job.multiEntityMin,
          ...(job.table !== undefined ? { table: job.table } : {}),
          shard: k + 1,
          shards: n,
        } satisfies ServeData,
      }),
  );
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const modes = new Set<string>();
  /** Per thread (this one first, then each worker): the byte offset it has read to, and the number of pool lines once it has read them all. */
  const offsets = [0, ...pool.map(() => 0)];
  const totals: (number | undefined)[] = [undefined, ...pool.map(() => undefined)];
  let acked = 0;
  let cursor = 0;
  const written = (): number => summary.scenarios;
  /** Writes what is in order; tells the workers how far that is, every FLUSH_EVERY scenarios. */
  const advance = (): void => {
    try {
      drain();
    } catch (e) {
      failure ??= e as Error;
    }
    cursor = written();
    if (cursor - acked >= FLUSH_EVERY) {
      acked = cursor;
      for (const x of pool) x.postMessage({ cursor });
      job.progress(Math.min(...offsets));
    }
  };
  pool.forEach((w, k) => {
    w.on('message', (m: { ready?: string; results?: Result[]; offset?: number; lines?: number }) => {
      if (m.ready) modes.add(m.ready);
      for (const r of m.results ?? []) results.set(r.idx, r);
      if (m.offset !== undefined) offsets[k + 1] = m.offset;
      if (m.lines !== undefined) totals[k + 1] = m.lines;
      advance();
      notify();
    });
    w.on('error', (e) => {
      failure ??= e;
      notify();
    });
    w.on('exit', (code) => {
      if (code !== 0) failure ??= new Error(`difficulty metrics worker exited with code ${code}`);
      notify();
    });
  });
  const onAbort = (): void => notify();
  job.signal.addEventListener('abort', onAbort);
  try {
    // Shard 0, here: the worker's loop (serve) without the messages. Between the pool's reads the
    // workers' results are taken in (their 'message' events).
    const counter = await loadCounter(job.table);
    modes.add(counter.mode);
    const mc = new MetricsComputer(counter, { multiEntityMin: job.multiEntityMin });
    let idx = 0;
    let since = 0;
    for await (const r of readLineRanges(job.pool)) {
      if (failure) throw failure;
      if (job.signal.aborted) throw job.signal.reason;
      offsets[0] = r.offset;
      if (blankRange(r.buf, r.start, r.end)) continue;
      if (shardOf(r.buf, r.start, r.end, n) === 0) {
        const res = computeLine(mc, counter, job.file, {
          idx,
          line: r.line,
          text: r.buf.toString('utf8', r.start, r.end),
        });
        results.set(idx, res instanceof Promise ? await res : res);
        if (++since >= BATCH) {
          since = 0;
          advance();
        }
      }
      idx += 1;
    }
    totals[0] = idx;
    advance();
    // Done when every thread has read the whole pool and every scenario is written (a problem
    // stops the drain at its line: then the count of lines is not reached).
    const finished = (): boolean => totals.every((t) => t !== undefined) && written() === totals[0];
    while (!finished() && failure === undefined) {
      if (job.signal.aborted) throw job.signal.reason;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (failure) throw failure;
    job.signal.throwIfAborted();
    summary.mode = [...modes].sort().join(',');
  } finally {
    job.signal.removeEventListener('abort', onAbort);
    await Promise.all(pool.map((w) => w.terminate()));
  }
}

interface ServeData {
  role: string;
  pool: string;
  file: string;
  multiEntityMin: number;
  table?: string;
  /** This worker computes the lines whose shardOf(…, shards) is shard. */
  shard: number;
  shards: number;
}

function serve(data: ServeData): void {
  const port = parentPort!;
  let cursor = 0;
  let wake: (() => void) | undefined;
  port.on('message', (m: { cursor: number }) => {
    cursor = m.cursor;
    const w = wake;
    wake = undefined;
    w?.();
  });
  void (async () => {
    const counter = await loadCounter(data.table);
    const mc = new MetricsComputer(counter, { multiEntityMin: data.multiEntityMin });
    port.postMessage({ ready: counter.mode });
    let batch: Result[] = [];
    let idx = 0;
    let offset = 0;
    const flush = (): void => {
      port.postMessage({ results: batch, offset });
      batch = [];
    };
    for await (const r of readLineRanges(data.pool)) {
      offset = r.offset;
      if (blankRange(r.buf, r.start, r.end)) continue;
      if (shardOf(r.buf, r.start, r.end, data.shards) === data.shard) {
        while (idx > cursor + MAX_AHEAD) {
          flush();
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
        const res = computeLine(mc, counter, data.file, {
          idx,
          line: r.line,
          text: r.buf.toString('utf8', r.start, r.end),
        });
        batch.push(res instanceof Promise ? await res : res);
        if (batch.length >= BATCH) flush();
      }
      idx += 1;
    }
    port.postMessage({ results: batch, offset, lines: idx });
  })();
}

if (!isMainThread && (workerData as { role?: unknown } | null)?.role === ROLE) serve(workerData as ServeData);
