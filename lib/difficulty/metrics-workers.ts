// Computes the metrics JSONL of a pool, in this thread or on worker_threads (one per 16 MiB of pool,
// up to difficulty.metrics.workers and the CPUs available). With workers, each
// scenario goes to the worker chosen by its source_id, so a source item's documents are tokenised
// (and their sentence 3-grams built) by one worker only; results are written back in pool order.
// The workers load the Qwen3 tokenizer one after the other (a load takes a few hundred MiB for a
// moment), and until a worker is loaded its scenarios go to worker 0, which is.
// Metrics are a pure function of the scenario, so the output is byte-identical for any number of
// workers. The first problem in pool order (a malformed line, a duplicate id) is the one thrown.
// A worker runs this same module (the rule's bundle): see the `role` check at the bottom.
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { DataError, describeValue, type Location } from '../data/data-error.ts';
import { LineWriter, asScenario, parseObject, readLines } from './lines.ts';
import { MetricsComputer } from './metrics.ts';
import { loadQwen3 } from './qwen3-tokens.ts';

const ROLE = 'rc1-difficulty-metrics';
/** Pool bytes per worker: a worker loads its own tokenizer (about a second), so small pools stay in this thread. */
export const BYTES_PER_WORKER = 16 << 20;
const BATCH = 256;
const FLUSH_EVERY = 2048;
const MAX_IN_FLIGHT = 4096;

export interface MetricsJob {
  pool: string;
  /** The pool as named in diagnostics. */
  file: string;
  out: string;
  multiEntityMin: number;
  /** At most this many worker_threads, one per BYTES_PER_WORKER of pool and per CPU; 1 (or a small pool): this thread. */
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

function computeOne(mc: MetricsComputer, file: string, it: Item): Result {
  try {
    const at: Location = { file, line: it.line, unit: 'line' };
    const m = mc.compute(asScenario(parseObject(it.text, at), at));
    return { idx: it.idx, line: it.line, json: JSON.stringify(m), id: m.id, task: m.task, tokens: m.len_tokens };
  } catch (e) {
    return { idx: it.idx, line: it.line, error: toErrorData(e) };
  }
}

const SOURCE_ID = /"source_id":"((?:[^"\\]|\\.)*)"/;

function shardOf(text: string, workers: number): number {
  const key = SOURCE_ID.exec(text)?.[1] ?? text.slice(0, 64);
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
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
      const counter = await loadQwen3();
      summary.mode = counter.mode;
      const mc = new MetricsComputer(counter, { multiEntityMin: job.multiEntityMin });
      let idx = 0;
      for await (const { text, line, offset } of readLines(job.pool)) {
        results.set(idx, computeOne(mc, job.file, { idx, line, text }));
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
  const pool = Array.from(
    { length: n },
    (_, k) =>
      new Worker(new URL(import.meta.url), {
        workerData: { role: ROLE, file: job.file, multiEntityMin: job.multiEntityMin, loadAtOnce: k === 0 },
      }),
  );
  let inFlight = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const modes = new Set<string>();
  // Until worker k has loaded its tokenizer, its shard goes to worker 0 (metrics are a pure function
  // of the scenario: only which worker remembers which documents changes, never the output).
  const ready = pool.map(() => false);
  pool.forEach((w, k) => {
    w.on('message', (m: { ready?: string; results?: Result[] }) => {
      if (m.ready) {
        modes.add(m.ready);
        ready[k] = true;
        // One tokenizer load at a time: loading one takes a few hundred MiB for a moment.
        pool[k + 1]?.postMessage({ load: true });
      }
      for (const r of m.results ?? []) {
        results.set(r.idx, r);
        inFlight -= 1;
      }
      try {
        drain();
      } catch (e) {
        failure ??= e as Error;
      }
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
  const waitFor = async (cond: () => boolean): Promise<void> => {
    while (!cond() && failure === undefined) {
      if (job.signal.aborted) throw job.signal.reason;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  const batches: Item[][] = pool.map(() => []);
  const send = (k: number): void => {
    const items = batches[k]!;
    if (items.length === 0) return;
    pool[k]!.postMessage(items);
    inFlight += items.length;
    batches[k] = [];
  };
  const onAbort = (): void => notify();
  job.signal.addEventListener('abort', onAbort);
  try {
    let idx = 0;
    for await (const { text, line, offset } of readLines(job.pool)) {
      if (failure) break;
      let k = shardOf(text, n);
      if (!ready[k]) k = 0;
      batches[k]!.push({ idx, line, text });
      idx += 1;
      if (batches[k]!.length >= BATCH) send(k);
      if (idx % FLUSH_EVERY === 0) {
        pool.forEach((_, j) => send(j));
        job.progress(offset);
        await waitFor(() => inFlight <= MAX_IN_FLIGHT);
      }
    }
    pool.forEach((_, j) => send(j));
    await waitFor(() => inFlight === 0);
    if (failure) throw failure;
    job.signal.throwIfAborted();
    summary.mode = [...modes].sort().join(',');
  } finally {
    job.signal.removeEventListener('abort', onAbort);
    await Promise.all(pool.map((w) => w.terminate()));
  }
}

interface ServeData {
  file: string;
  multiEntityMin: number;
  /** Load the tokenizer at once; otherwise on the message { load: true } (sent when the previous worker is ready). */
  loadAtOnce: boolean;
}

function serve(data: ServeData): void {
  const port = parentPort!;
  let mc: MetricsComputer | undefined;
  const queued: Item[][] = [];
  const compute = (items: Item[]): void => {
    port.postMessage({ results: items.map((it) => computeOne(mc!, data.file, it)) });
  };
  const load = async (): Promise<void> => {
    const counter = await loadQwen3();
    mc = new MetricsComputer(counter, { multiEntityMin: data.multiEntityMin });
    port.postMessage({ ready: counter.mode });
    for (const items of queued.splice(0)) compute(items);
  };
  port.on('message', (m: Item[] | { load: true }) => {
    if (!Array.isArray(m)) void load();
    else if (mc === undefined) queued.push(m);
    else compute(m);
  });
  if (data.loadAtOnce) void load();
}

if (!isMainThread && (workerData as { role?: unknown } | null)?.role === ROLE) serve(workerData as ServeData);
