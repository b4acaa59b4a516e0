// The hashing variants bench/hash.ts compares with the engine's hashFileSync: the engine's own
// read loop with the buffer size and small-file strategy as parameters (the sweep), an exact-size
// read, the streaming alternative, and a worker-thread pool running the compiled engine hasher.
import { buildSync } from 'esbuild';
import { createHash, hash } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const ENGINE_SOURCE = fileURLToPath(new URL('../packages/engine/src/hash/hash-file.ts', import.meta.url));

// ------------------------------------------------------------------ worker pool

/**
 * A pool of worker threads running the engine's hasher. Workers load hash-file.ts compiled to
 * JavaScript by esbuild (as dist/ ships it) and start with an empty execArgv: inheriting this
 * process's `--import tsx` would make each worker load tsx, a start-up cost (measured ~75 ms for
 * two workers here) that the compiled engine never pays.
 */
export class HashPool {
  private constructor(private readonly workers: Worker[]) {}

  /** Starts n workers; work posted before they are up waits in their queues. */
  static start(workerFile: string, n: number): HashPool {
    return new HashPool(Array.from({ length: n }, () => new Worker(workerFile, { execArgv: [] })));
  }

  /** Splits paths into one contiguous slice per worker; returns the digests in path order. */
  async hashAll(paths: string[]): Promise<string[]> {
    const per = Math.ceil(paths.length / this.workers.length);
    const parts = await Promise.all(
      this.workers.map(
        (w, i) =>
          new Promise<string[]>((resolve, reject) => {
            const onError = (e: Error): void => reject(e);
            w.once('error', onError);
            w.once('message', (digests: string[]) => {
              w.off('error', onError);
              resolve(digests);
            });
            w.postMessage(paths.slice(i * per, (i + 1) * per));
          }),
      ),
    );
    return parts.flat();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

export function writeWorker(dir: string): string {
  const engine = join(dir, 'hash-file.mjs');
  buildSync({
    entryPoints: [ENGINE_SOURCE],
    outfile: engine,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
  });
  const worker = join(dir, 'hash-worker.mjs');
  writeFileSync(
    worker,
    [
      "import { parentPort } from 'node:worker_threads';",
      "import { hashFileSync } from './hash-file.mjs';",
      'parentPort.on("message", (paths) => parentPort.postMessage(paths.map((p) => hashFileSync(p))));',
      '',
    ].join('\n'),
  );
  return worker;
}

// ------------------------------------------------------------------ sweep candidates
// The engine's read loop with the buffer size and the small-file strategy as parameters.

export type Strategy = 'fill+one-shot' | 'createHash';

export function loopHash(path: string, buf: Buffer, strategy: Strategy): string {
  const fd = openSync(path, 'r');
  try {
    let filled = 0;
    for (;;) {
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      if (n === 0) break;
      filled += n;
      if (filled === buf.length) break;
    }
    if (filled < buf.length && strategy === 'fill+one-shot') return hash('sha256', buf.subarray(0, filled), 'hex');
    const h = createHash('sha256');
    h.update(buf.subarray(0, filled));
    if (filled === buf.length) {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0) break;
        h.update(buf.subarray(0, n));
      }
    }
    return h.digest('hex');
  } finally {
    closeSync(fd);
  }
}

/** fstat, then one read into a buffer of the file's size (+1 to see EOF), one-shot hash. */
export function exactSizeHash(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(size + 1);
    let filled = 0;
    for (;;) {
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      if (n === 0) break;
      filled += n;
      if (filled === buf.length) throw new Error(`${path} grew while it was read`);
    }
    return hash('sha256', buf.subarray(0, filled), 'hex');
  } finally {
    closeSync(fd);
  }
}

/** The streaming alternative the engine does not use: createReadStream piped into a Hash. */
export async function streamHash(path: string, highWaterMark: number): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(path, { highWaterMark }), h);
  return h.digest('hex');
}

/** Hashes every path with streamHash, `inFlight` files at a time; digests in path order. */
export async function streamHashAll(paths: string[], highWaterMark: number, inFlight: number): Promise<string[]> {
  const out: string[] = new Array<string>(paths.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < paths.length) {
      const i = next++;
      out[i] = await streamHash(paths[i]!, highWaterMark);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return out;
}
