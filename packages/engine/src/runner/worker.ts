// The rule worker (a worker_thread): imports a compiled rule module and runs it under the rule
// contract (rule-harness.ts: params, context, gate report, declared outputs), then hashes the
// outputs and stores them in the output cache. Runs off the main thread so -j gives
// real CPU parallelism and an interrupted build can terminate rules.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { gatePasses } from '../api/index.ts';
import { isExpectedError } from '../util/expected-error.ts';
import { DURABLE_AFTER_MS, hashOutput } from './hash-output.ts';
import { outputRecords } from '../state/commit-outputs.ts';
import { INLINE_MAX, OutputCache } from '../cache/output-cache.ts';
import type { FromWorker, HashedOutput, Job, JobFailure, ToWorker } from './protocol.ts';
import { ContractError, ParamError, invokeRule } from './rule-harness.ts';
import { installLazySourceMaps } from './lazy-source-maps.ts';
import { JobQueue } from './job-queue.ts';
import { JobAbort } from './job-abort.ts';
import { makeWarmUpDir } from './warm-up.ts';

// Stacks name the user's .ts files (the bundle's source map), read only when a stack is formatted.
installLazySourceMaps([import.meta.url]);
const port = parentPort!;
/** File outputs above this size are copied into the cache while they are hashed (smaller ones: from the hash's bytes, or after). */
const EARLY_COPY_MIN = 1 << 20;
const aborts = new Map<number, JobAbort>();

/** The warm-up job's id (the pool numbers its jobs from 1): nothing about it is posted. */
const WARM_UP_ID = 0;

function post(m: FromWorker): void {
  if (m.id !== WARM_UP_ID) port.postMessage(m);
}

async function run(job: Job): Promise<void> {
  const ac = new JobAbort();
  aborts.set(job.id, ac);
  let cache: OutputCache | null = null;
  try {
    const mod = (await import(pathToFileURL(job.module).href)) as { default?: unknown };
    const hooks = {
      log: (line: string) => post({ type: 'log', id: job.id, line }),
      progress: (done: number, total: number, unit?: string) =>
        post({ type: 'progress', id: job.id, done, total, ...(unit ? { unit } : {}) }),
      get signal() {
        return ac.signal;
      },
      aborted: () => ac.aborted(),
    };
    let outcome: Awaited<ReturnType<typeof invokeRule>>;
    try {
      outcome = await invokeRule(mod, job, hooks);
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      const err: JobFailure = { kind: 'param-error', message: e.message, paramIssues: e.issues };
      post({ type: 'error', id: job.id, error: err });
      return;
    }
    const { result: res, checks } = outcome;
    const durable = outcome.elapsedMs >= DURABLE_AFTER_MS;
    // Private copies of the outputs into the cache, here in parallel rather than on the main
    // thread: when the worker writes the entry (the engine lets it: Job.cacheKey), a file output of
    // at most INLINE_MAX bytes goes into the entry itself (base64 of the bytes just hashed: one
    // cache file for the target, not two); other small files' objects from the bytes just hashed
    // (at once: they live in the hash's buffer), larger ones by copy; then the entry (else it is
    // written after the commit, by put(), which inlines the same way). A failure is left to the
    // commit's put(), which retries and reports a write error.
    cache = job.cacheDir ? new OutputCache(job.cacheDir, { logPerObject: true }) : null; // no fd to leak if terminated
    const jobCache = cache;
    let cacheFailed = false;
    const stored = new Set<string>();
    const fileOutputs = new Set(job.cacheKey ? job.outputs.filter((o) => !o.dir).map((o) => o.tmp) : []);
    const inline: Record<string, string> = {};
    let inlined = false;
    const onSmall = (file: string, sha: string, bytes: Buffer): void => {
      if (cacheFailed) return;
      if (bytes.length <= INLINE_MAX && fileOutputs.has(file)) {
        inline[sha] = bytes.toString('base64');
        inlined = true;
        stored.add(file);
        return;
      }
      try {
        jobCache!.storeObject(file, sha, bytes);
        stored.add(file);
      } catch {
        cacheFailed = true;
      }
    };
    // A large file output's copy into the cache starts before it is hashed (libuv's threads copy
    // while this one hashes): its object is that copy where the file's stat (size, mtime, ctime,
    // inode) is the same before the copy, when the hash opened it and after both; else it is copied
    // again after the hash, as a smaller file is (a 97 MB seed pool: ~60 ms off the target;
    // bench/results/speed.md, twenty-first pass).
    const early = new Map<string, { tmp: string; done: Promise<boolean>; stat: fs.BigIntStats }>();
    if (cache)
      for (const o of job.outputs) {
        if (o.dir) continue;
        const stat = fs.statSync(o.tmp, { bigint: true, throwIfNoEntry: false });
        if (stat?.isFile() && stat.size > EARLY_COPY_MIN) early.set(o.tmp, { ...cache.beginCopy(o.tmp), stat });
      }
    let hashed: HashedOutput[];
    try {
      hashed = job.outputs.map((o) => hashOutput(o, { fsync: durable, ...(cache ? { onSmall } : {}) }));
    } catch (e) {
      for (const c of early.values()) await c.done.then(() => cache!.dropCopy(c.tmp));
      throw e;
    }
    const ruleId = outcome.rule;
    let cached = false;
    if (cache && !cacheFailed) {
      try {
        for (const h of hashed) {
          for (const [rel, [sha, size, mtimeNs, ino, ctimeNs]] of Object.entries(h.files)) {
            const file = rel === '' ? h.tmp : path.join(h.tmp, rel);
            const copy = rel === '' ? early.get(file) : undefined;
            if (copy) {
              early.delete(file);
              const st = copy.stat;
              // The stat before the copy, when the hash opened the file and after both: unchanged.
              const after = (await copy.done) ? fs.statSync(file, { bigint: true, throwIfNoEntry: false }) : undefined;
              if (
                after !== undefined &&
                after.size === st.size &&
                after.mtimeNs === st.mtimeNs &&
                after.ctimeNs === st.ctimeNs &&
                after.ino === st.ino &&
                st.size === BigInt(size) &&
                st.mtimeNs === mtimeNs &&
                st.ino === ino &&
                st.ctimeNs === ctimeNs
              ) {
                cache.adoptCopy(copy.tmp, sha, size);
                continue;
              }
              cache.dropCopy(copy.tmp);
            }
            if (!stored.has(file)) cache.storeObject(file, sha);
          }
        }
        if (job.cacheKey) {
          const gateFailed = job.gate && !gatePasses(checks ?? []);
          cache.putEntry({
            target: job.target,
            key: job.cacheKey,
            outputs: outputRecords(hashed),
            result: gateFailed ? 'gate-failed' : 'ok',
            ...(checks ? { checks } : {}),
            ...(res.summary ? { summary: res.summary } : {}),
            rule: ruleId,
            ...(inlined ? { inline } : {}),
          });
          cached = true;
        }
      } catch {
        /* put() retries and reports a write error */
      }
    }
    for (const c of early.values()) await c.done.then(() => cache!.dropCopy(c.tmp)); // not adopted
    post({
      type: 'done',
      id: job.id,
      result: {
        ...(checks ? { checks } : {}),
        ...(res.summary ? { summary: res.summary } : {}),
        rule: ruleId,
        outputs: hashed,
        ...(cached ? { cached } : {}),
        ruleMs: outcome.elapsedMs,
      },
    });
  } catch (e) {
    const err = e as Error;
    // Expected failures (a broken contract, an error carrying the expected-error marker: RuleError,
    // a pipeline library's bad-data errors) print their message alone.
    const expected = e instanceof ContractError || isExpectedError(e);
    const kind = ac.aborted() ? 'aborted' : expected ? 'contract-error' : 'rule-error';
    post({
      type: 'error',
      id: job.id,
      error: {
        kind,
        message: err?.message ?? String(e),
        ...(err?.stack && kind === 'rule-error' ? { stack: err.stack } : {}),
      },
    });
  } finally {
    aborts.delete(job.id);
    try {
      cache?.closeLog();
    } catch {
      /* nothing was written through it */
    }
  }
}

const WARM_UP_RULE = `import { writeFileSync } from 'node:fs';
export default { name: 'warm-up', version: 1, run(ctx) { writeFileSync(ctx.output('warm-up.txt'), 'warm-up\\n'); } };
`;

/**
 * A worker the resident server starts ahead runs one small rule of its own, through run() as any
 * job, while the server is idle: the code every job goes through (a rule module's import, the
 * rule harness, the output's hash, the cache's object and entry) is compiled then, rather than
 * in the next build's first job, where it sits on the critical path (bench/results/speed.md,
 * twenty-second pass). Its files are in a folder of its own under the system's temporary folder,
 * removed after it (or, if the server is killed meanwhile, by the next server's start: warm-up.ts);
 * nothing of it is posted, and a job the build posts meanwhile waits behind it.
 */
function warmUp(): void {
  let dir: string;
  try {
    dir = makeWarmUpDir();
    fs.writeFileSync(path.join(dir, 'warm-up.mjs'), WARM_UP_RULE);
  } catch {
    return; // no temporary folder to write in: the first job compiles the code, as without
  }
  const job: Job = {
    id: WARM_UP_ID,
    target: 'warm-up',
    gate: false,
    module: path.join(dir, 'warm-up.mjs'),
    ruleFile: 'warm-up.mjs',
    root: dir,
    stateDir: path.join(dir, 'state'),
    profile: 'warm-up',
    params: {},
    args: {},
    forced: false,
    codeHash: '0'.repeat(64),
    env: {},
    inputs: {},
    outputs: [{ path: 'warm-up.txt', dir: false, tmp: path.join(dir, '0-warm-up.txt') }],
    tmpDir: dir,
    tmpPrefix: '0-',
    cacheDir: path.join(dir, 'cache'),
    cacheKey: '0'.repeat(64),
  };
  queue.push({ job });
}

// One job at a time; a job posted behind the running one may be taken back by the pool (job-queue.ts).
const queue = new JobQueue<Job>((job) =>
  job.id === WARM_UP_ID ? run(job).finally(() => fs.rmSync(job.root, { recursive: true, force: true })) : run(job),
);

port.on('message', (m: ToWorker) => {
  if (m.type === 'run') queue.push({ job: m.job, ...(m.claim !== undefined ? { claim: m.claim } : {}) });
  else if (m.type === 'warm-up') warmUp();
  else if (m.type === 'claims') queue.share(m.cells);
  else if (m.type === 'env') {
    // This thread's copy of the environment becomes the build's (a worker started ahead by the server).
    for (const k of Object.keys(process.env)) delete process.env[k];
    for (const [k, v] of Object.entries(m.env)) if (v !== undefined) process.env[k] = v;
  } else if (queue.drop(m.id))
    post({
      type: 'error',
      id: m.id,
      error: { kind: 'aborted', message: 'the build stopped before this rule started' },
    });
  else aborts.get(m.id)?.abort();
});
