// Scoring against the fake server with injected faults, through the provider, the rate limiter
// and the score cache (test/helpers/score-loop.ts, the same three parts the scoring driver uses):
// nothing is lost, a killed run re-bills nothing it stored, concurrency adapts to 429s,
// Retry-After is honoured, and the API key reaches no file and no message.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRateLimiter } from '../../lib/scoring/rate-limiter.ts';
import { openScoreCache, type ScoreCache } from '../../lib/scoring/score-cache.ts';
import { type Fault, promptHash, startFakeOpenAIServer } from '../helpers/fake-openai-server.ts';
import { FAST_LIMITS, LOOP_VERSIONS, scoreLoop, syntheticItems, testProvider } from '../helpers/score-loop.ts';
import { fixtureRollouts } from '../helpers/scoring-fixtures.ts';
import { renderJudgeMessages } from '../../lib/scoring/judge-prompt.ts';
import { toScoreItem } from '../../lib/scoring/score-items.ts';

const KEY = 'sk-live-DO-NOT-LEAK-7f3a9c0e5b1d';
const LOOP = fileURLToPath(new URL('../helpers/score-loop.ts', import.meta.url));
const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-scoring-'));
  dirs.push(d);
  return d;
}

async function openCache(file: string): Promise<ScoreCache> {
  const r = await openScoreCache({ path: file, ttlDays: 14, synchronous: 'normal' });
  if (!r.ok) throw new Error(r.error);
  return r.cache;
}

/** A deterministic pseudo-random number in [0, 1) from a request number. */
const u = (n: number, salt: number): number => (Math.imul(n ^ salt, 2654435761) >>> 0) / 4294967296;

test('under 429 bursts, 5xx, hangs, malformed and slow answers every sample ends scored or recorded as failed', async () => {
  const items = syntheticItems(120);
  const poisoned = new Set(items.slice(0, 4).map((i) => promptHash(i.messages)));
  const down = new Set(items.slice(4, 6).map((i) => promptHash(i.messages)));
  const server = await startFakeOpenAIServer({
    apiKey: KEY,
    fault: (r): Fault | undefined => {
      if (poisoned.has(r.promptHash)) return { kind: 'malformed' };
      if (down.has(r.promptHash)) return { kind: '5xx', status: 502 };
      const x = u(r.total, 0x9e37);
      if (r.total >= 60 && r.total < 75) return { kind: '429', retryAfterMs: 15 };
      if (x < 0.05) return { kind: '5xx' };
      if (x < 0.07) return { kind: 'hang' };
      if (x < 0.1) return { kind: 'malformed' };
      if (x < 0.15) return { kind: 'slow', ms: 60 };
      return undefined;
    },
  });
  try {
    const dir = tmp();
    const cache = await openCache(path.join(dir, 'scorecache.sqlite'));
    const limiter = createRateLimiter({ ...FAST_LIMITS, timeoutMs: 300, maxAttempts: 4 });
    const r = await scoreLoop({ provider: testProvider(server.url, KEY), limiter, cache, items, k: 3, maxTokens: 64 });
    assert.equal(r.scored + r.failed, 360, JSON.stringify(r));
    assert.equal(r.failed, 18, 'the 4 poisoned and 2 down items, 3 samples each');
    const db = cache.handle;
    const stored = (db.prepare('SELECT COUNT(*) AS n FROM scores').get() as { n: number }).n;
    const failures = cache.failures();
    assert.equal(stored + failures.length, 360);
    assert.equal(failures.filter((f) => !f.retryable && /malformed/.test(f.error)).length, 12);
    assert.equal(failures.filter((f) => f.retryable && /HTTP 502/.test(f.error)).length, 6);
    assert.ok(
      server.stats.hung > 0 &&
        server.stats.rateLimited > 0 &&
        server.stats.serverErrors > 0 &&
        server.stats.malformed > 0,
    );
    assert.ok(limiter.metrics().timeouts > 0);
    cache.close();
  } finally {
    await server.close();
  }
});

test('killing the scoring driver mid-run and running it again sends no request for a sample already cached', async () => {
  // The child runs the real driver (score-items.ts scoreItems) with this provider, limiter and
  // SQLite cache over 25 fixture scenarios per task × 4 candidate rollouts, K = 3.
  const server = await startFakeOpenAIServer({ apiKey: KEY, latencyMs: 8 });
  try {
    const dir = tmp();
    const db = path.join(dir, 'scorecache.sqlite');
    const items = (await fixtureRollouts(25)).map((r) => ({
      itemHash: toScoreItem(r).itemHash,
      prompt: promptHash(renderJudgeMessages(r)),
    }));
    const total = items.length * 3;
    const args = ['--import', 'tsx', LOOP, 'driver', server.url, db, '25', '3'];
    const child = spawn(process.execPath, args, {
      env: { ...process.env, JUDGE_KEY: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.split('\n').filter((l) => l.startsWith('stored ')).length >= total / 3 && !child.killed)
          child.kill('SIGKILL');
      });
      child.on('exit', (code, sig) =>
        sig === 'SIGKILL' ? resolve() : reject(new Error(`child ended with ${code}: ${out}`)),
      );
    });
    const cache = await openCache(db);
    const rows = cache.handle.prepare('SELECT item_hash, sample_index FROM scores').all() as {
      item_hash: string;
      sample_index: number;
    }[];
    cache.close();
    assert.ok(
      rows.length >= total / 3 && rows.length < total,
      `${rows.length} of ${total} samples stored before the kill`,
    );
    const cachedPerItem = new Map<string, number>();
    for (const r of rows) cachedPerItem.set(r.item_hash, (cachedPerItem.get(r.item_hash) ?? 0) + 1);

    server.reset();
    const rerun = spawn(process.execPath, args, {
      env: { ...process.env, JUDGE_KEY: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let rerunOut = '';
    rerun.stdout.on('data', (b: Buffer) => {
      rerunOut += b.toString();
    });
    rerun.stderr.on('data', (b: Buffer) => {
      rerunOut += b.toString();
    });
    const code = await new Promise<number | null>((resolve) => rerun.on('exit', resolve));
    assert.equal(code, 0, rerunOut);
    assert.match(
      rerunOut,
      new RegExp(`done \\{"scored":${total},"failed":0,"fromCache":${rows.length},"called":${total - rows.length}\\}`),
    );
    // Requests per prompt: the samples of that prompt's items that were not cached at the kill.
    const expected = new Map<string, number>();
    for (const it of items)
      expected.set(it.prompt, (expected.get(it.prompt) ?? 0) + 3 - (cachedPerItem.get(it.itemHash) ?? 0));
    let fullyCached = 0;
    for (const [prompt, n] of expected) {
      assert.equal(server.countFor(prompt), n, `prompt ${prompt.slice(0, 8)}`);
      if (n === 0) fullyCached++;
    }
    assert.ok(fullyCached > 0, 'some items were fully cached and got no request');
    assert.equal(server.stats.requests, total - rows.length);
  } finally {
    await server.close();
  }
});

test('concurrency falls to its floor under a 429 burst and climbs back to its ceiling after it', async () => {
  const server = await startFakeOpenAIServer({
    apiKey: KEY,
    latencyMs: 3,
    fault: (r) => (r.total > 80 && r.total <= 160 ? { kind: '429', retryAfterMs: 5 } : undefined),
  });
  try {
    const history: number[] = [];
    const limiter = createRateLimiter({
      ...FAST_LIMITS,
      concurrencyInitial: 8,
      maxAttempts: 30,
      onConcurrency: (c) => history.push(c),
    });
    const cache = await openCache(path.join(tmp(), 'scorecache.sqlite'));
    const r = await scoreLoop({
      provider: testProvider(server.url, KEY),
      limiter,
      cache,
      items: syntheticItems(150),
      k: 3,
      maxTokens: 64,
    });
    assert.equal(r.scored, 450);
    const floor = history.indexOf(2);
    assert.ok(floor >= 0, `history ${history.join(' ')}`);
    assert.equal(Math.min(...history), 2, 'never below the floor');
    assert.equal(history.at(-1), 8, `recovered: ${history.join(' ')}`);
    assert.ok(history.slice(floor).includes(8));
    cache.close();
  } finally {
    await server.close();
  }
});

test('a 429 with Retry-After in seconds or as an HTTP-date delays the retry by at least that long', async () => {
  const server = await startFakeOpenAIServer({ apiKey: KEY });
  try {
    const cache = await openCache(path.join(tmp(), 'scorecache.sqlite'));
    const limiter = createRateLimiter(FAST_LIMITS);
    const [a, b] = syntheticItems(2);
    server.queue({ kind: '429', retryAfter: '1' });
    await scoreLoop({ provider: testProvider(server.url, KEY), limiter, cache, items: [a!], k: 1, maxTokens: 64 });
    const ta = server.arrivals(promptHash(a!.messages));
    assert.equal(ta.length, 2);
    assert.ok(ta[1]! - ta[0]! >= 1000, `retried after ${ta[1]! - ta[0]!} ms`);
    // At least 2 s ahead (an HTTP-date has whole seconds): the request may reach the server a while after this.
    const at = Math.floor((Date.now() + 3000) / 1000) * 1000;
    server.queue({ kind: '429', retryAfter: new Date(at).toUTCString() });
    await scoreLoop({ provider: testProvider(server.url, KEY), limiter, cache, items: [b!], k: 1, maxTokens: 64 });
    const tb = server.arrivals(promptHash(b!.messages));
    assert.equal(tb.length, 2);
    assert.ok(tb[1]! - tb[0]! >= 950, `retried after ${tb[1]! - tb[0]!} ms`);
    cache.close();
  } finally {
    await server.close();
  }
});

test('the API key appears in no file written, no log line and no error, even when the server echoes it', async () => {
  const server = await startFakeOpenAIServer({ apiKey: 'sk-the-servers-real-key-000', latencyMs: 1 });
  const good = await startFakeOpenAIServer({
    apiKey: KEY,
    fault: (r) => (r.total % 5 === 0 ? { kind: 'malformed' } : r.total % 7 === 0 ? { kind: '5xx' } : undefined),
  });
  try {
    const dir = tmp();
    const logFile = path.join(dir, 'scoring.log');
    const log = (line: string): void => fs.appendFileSync(logFile, `${line}\n`);
    const cache = await openCache(path.join(dir, 'scorecache.sqlite'));
    const limiter = createRateLimiter({ ...FAST_LIMITS, maxAttempts: 2 });
    const refused = await scoreLoop({
      provider: testProvider(server.url, KEY),
      limiter,
      cache,
      items: syntheticItems(10),
      k: 3,
      maxTokens: 64,
      log,
    });
    assert.equal(refused.failed, 30);
    assert.ok(server.stats.unauthorized > 0);
    await scoreLoop({
      provider: testProvider(good.url, KEY, { malformedRetries: 0 }),
      limiter,
      cache,
      items: syntheticItems(40),
      k: 3,
      maxTokens: 64,
      log,
    });
    fs.writeFileSync(path.join(dir, 'metrics.json'), JSON.stringify(limiter.metrics()));
    const stdout = await new Promise<string>((resolve) => {
      const c = spawn(
        process.execPath,
        ['--import', 'tsx', LOOP, 'loop', server.url, path.join(dir, 'child.sqlite'), '5', '1'],
        { env: { ...process.env, JUDGE_KEY: KEY } },
      );
      let s = '';
      c.stdout.on('data', (x: Buffer) => {
        s += x.toString();
      });
      c.stderr.on('data', (x: Buffer) => {
        s += x.toString();
      });
      c.on('exit', () => resolve(s));
    });
    assert.match(stdout, /HTTP 401/);
    assert.ok(!stdout.includes(KEY));
    assert.match(fs.readFileSync(logFile, 'utf8'), /Incorrect API key provided: Bearer \*\*\*/);
    const errors = cache
      .failures()
      .map((f) => f.error)
      .join('\n');
    assert.ok(errors.length > 0 && !errors.includes(KEY));
    cache.close();
    const files = fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name));
    assert.ok(files.some((f) => f.endsWith('scorecache.sqlite')) && files.length >= 4, files.join(' '));
    for (const f of files) assert.ok(!fs.readFileSync(f).includes(KEY), `${f} holds the key`);
  } finally {
    await server.close();
    await good.close();
  }
});

test('scores stored under one rubric version are not served for the next', async () => {
  const server = await startFakeOpenAIServer({ apiKey: KEY });
  try {
    const cache = await openCache(path.join(tmp(), 'scorecache.sqlite'));
    const limiter = createRateLimiter(FAST_LIMITS);
    const items = syntheticItems(10);
    const run = (rubricVersion: string): ReturnType<typeof scoreLoop> =>
      scoreLoop({
        provider: testProvider(server.url, KEY),
        limiter,
        cache,
        items,
        k: 3,
        maxTokens: 64,
        versions: { ...LOOP_VERSIONS, rubricVersion },
      });
    assert.equal((await run('r1')).called, 30);
    assert.equal((await run('r1')).called, 0);
    assert.equal((await run('r2')).called, 30);
    assert.equal(server.stats.requests, 60);
    cache.close();
  } finally {
    await server.close();
  }
});
