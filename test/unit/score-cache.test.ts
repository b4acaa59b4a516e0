// The persistent score cache: keys, TTL, version invalidation, failures and unstable items,
// durability settings, the format header, and use from a worker thread (rules run in workers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import { parseInvalidateSpec, compareVersions } from '../../lib/scoring/cache-filter.ts';
import { openScoreCache, type ScoreCache, type ScoreCacheKey } from '../../lib/scoring/score-cache.ts';
import type { ScoreSample } from '../../lib/scoring/types.ts';

const DAY = 86_400_000;

function tmpDb(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-scorecache-')), 'nested', 'scorecache.sqlite');
}

async function open(file: string, now?: () => number, ttlDays = 14): Promise<ScoreCache> {
  const r = await openScoreCache({ path: file, ttlDays, synchronous: 'normal', ...(now ? { now } : {}) });
  if (!r.ok) throw new Error(r.error);
  return r.cache;
}

const key = (over: Partial<ScoreCacheKey> = {}): ScoreCacheKey => ({
  provider: 'openai',
  model: 'gpt-4o-mini',
  rubricVersion: 'r1',
  promptVersion: 'p1',
  itemHash: 'a'.repeat(64),
  sampleIndex: 0,
  ...over,
});

const sample = (x = 0.5): ScoreSample => ({
  provider: 'openai',
  model: 'gpt-4o-mini',
  live: true,
  billable: true,
  latencyMs: 812,
  promptTokens: 900,
  completionTokens: 60,
  cached: false,
  scores: {
    correctness: x,
    reasoning: 0.25,
    clarity: 1,
    conciseness: 0,
    clarification: 0.75,
    tool_use: 0.5,
    format_safety: 0.125,
  },
});

test('a stored sample comes back as cached with its scores and provenance; another sample index misses', async () => {
  const c = await open(tmpDb());
  assert.equal(c.get(key()), undefined);
  c.put(key(), sample(0.9));
  assert.deepEqual(c.get(key()), { ...sample(0.9), cached: true });
  assert.equal(c.get(key({ sampleIndex: 1 })), undefined);
  assert.deepEqual(c.counters(), { hits: 1, misses: 2, expired: 0 });
  c.close();
});

test('every key field separates entries: provider, model, rubric, prompt, item and sample index', async () => {
  const c = await open(tmpDb());
  c.put(key(), sample());
  for (const k of [
    { provider: 'deepseek' },
    { model: 'gpt-4o' },
    { rubricVersion: 'r2' },
    { promptVersion: 'p2' },
    { itemHash: 'b'.repeat(64) },
    { sampleIndex: 2 },
  ]) {
    assert.equal(c.get(key(k)), undefined, JSON.stringify(k));
  }
  c.close();
});

test('a put is on disk when put() returns: another connection sees it while the writer stays open', async () => {
  const file = tmpDb();
  const c = await open(file);
  c.put(key(), sample());
  const other = new Database(file, { readonly: true });
  assert.equal((other.prepare('SELECT COUNT(*) AS n FROM scores').get() as { n: number }).n, 1);
  other.close();
  c.close();
});

test('the file uses WAL and synchronous NORMAL by default, FULL when configured', async () => {
  const file = tmpDb();
  const c = await open(file);
  assert.equal(c.handle.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(c.handle.pragma('synchronous', { simple: true }), 1);
  c.close();
  const r = await openScoreCache({ path: file, ttlDays: 14, synchronous: 'full' });
  assert.ok(r.ok);
  assert.equal(r.cache.handle.pragma('synchronous', { simple: true }), 2);
  r.cache.close();
});

test('a sample older than the TTL is a miss, counted as expired, until it is scored again', async () => {
  let now = Date.parse('2025-08-01T00:00:00Z');
  const c = await open(tmpDb(), () => now);
  c.put(key(), sample());
  now += 13 * DAY;
  assert.ok(c.get(key()), 'still fresh at 13 days');
  now += 2 * DAY;
  assert.equal(c.get(key()), undefined, 'expired at 15 days');
  assert.equal(c.counters().expired, 1);
  c.put(key(), sample(0.1));
  assert.equal(c.get(key())?.scores.correctness, 0.1);
  c.close();
});

test('a new rubric or prompt version misses, and invalidate removes the older versions only', async () => {
  const c = await open(tmpDb());
  for (const v of ['r1', 'r2', 'r10'])
    for (let s = 0; s < 3; s++) c.put(key({ rubricVersion: v, sampleIndex: s }), sample());
  c.put(key({ promptVersion: 'p2' }), sample());
  assert.equal(c.get(key({ rubricVersion: 'r11' })), undefined);
  const spec = parseInvalidateSpec('rubric<r10');
  assert.ok(spec.ok);
  assert.deepEqual(
    c.invalidate(spec.filter, true),
    { scores: 7, failures: 0, unstable: 0 },
    'dry run counts r1 and r2 (natural order: r2 < r10)',
  );
  assert.deepEqual(c.invalidate(spec.filter), { scores: 7, failures: 0, unstable: 0 });
  assert.ok(c.get(key({ rubricVersion: 'r10' })));
  assert.equal(c.get(key({ rubricVersion: 'r2' })), undefined);
  c.close();
});

test('invalidate combines provider, model and age clauses, all of which must hold', async () => {
  let now = Date.parse('2025-08-01T00:00:00Z');
  const c = await open(tmpDb(), () => now);
  c.put(key({ sampleIndex: 0 }), sample());
  c.put(key({ sampleIndex: 1, model: 'gpt-4o' }), sample());
  c.put(key({ sampleIndex: 2, provider: 'deepseek', model: 'deepseek-chat' }), sample());
  now += 10 * DAY;
  c.put(key({ sampleIndex: 3 }), sample());
  const spec = parseInvalidateSpec('provider=openai,model=gpt-4o-mini,older-than=7d');
  assert.ok(spec.ok);
  assert.equal(c.invalidate(spec.filter).scores, 1);
  assert.equal(c.get(key({ sampleIndex: 0 })), undefined);
  assert.ok(c.get(key({ sampleIndex: 3 })) && c.get(key({ sampleIndex: 1, model: 'gpt-4o' })));
  now += 5 * DAY;
  const expired = parseInvalidateSpec('expired');
  assert.ok(expired.ok);
  assert.equal(c.invalidate(expired.filter).scores, 2, 'the two 15-day-old rows');
  c.close();
});

test('versions compare in natural order, ignoring a leading v', () => {
  assert.ok(compareVersions('v2', 'v10') < 0);
  assert.ok(compareVersions('3', 'v3') === 0);
  assert.ok(compareVersions('rc1-rubric-v2', 'rc1-rubric-v10') < 0);
  assert.ok(compareVersions('1.10', '1.9') > 0);
  assert.ok(compareVersions('2', '2.1') < 0);
});

test('a failure is recorded with its error and cleared when the sample is later stored', async () => {
  const c = await open(tmpDb());
  c.recordFailure(key(), { error: 'malformed answer after 3 attempts', attempts: 3, retryable: false });
  assert.equal(c.failure(key())?.error, 'malformed answer after 3 attempts');
  assert.equal(c.failures().length, 1);
  c.put(key(), sample());
  assert.equal(c.failure(key()), undefined);
  assert.equal(c.failures().length, 0);
  c.close();
});

test('replay-bad sets aside the samples of unstable items and clears failures, so exactly those miss next time', async () => {
  const c = await open(tmpDb());
  const shaky = { itemHash: 'c'.repeat(64) };
  for (let s = 0; s < 3; s++) {
    c.put(key({ sampleIndex: s }), sample());
    c.put(key({ ...shaky, sampleIndex: s }), sample(s / 2));
  }
  c.markUnstable({ ...key(shaky) }, 0.17);
  c.recordFailure(key({ itemHash: 'd'.repeat(64) }), { error: 'HTTP 500', attempts: 6, retryable: true });
  assert.equal(c.unstable().length, 1);
  assert.deepEqual(c.replayBad(), { unstableItems: 1, samplesSetAside: 3, failuresCleared: 1 });
  for (let s = 0; s < 3; s++) {
    assert.ok(c.get(key({ sampleIndex: s })), 'stable items keep their samples');
    assert.equal(c.get(key({ ...shaky, sampleIndex: s })), undefined);
  }
  assert.equal(
    (c.handle.prepare('SELECT COUNT(*) AS n FROM set_aside').get() as { n: number }).n,
    3,
    'paid samples are kept, not deleted',
  );
  assert.deepEqual([c.unstable().length, c.failures().length], [0, 0]);
  c.close();
});

test('lookup counters persist across connections', async () => {
  const file = tmpDb();
  const a = await open(file);
  a.put(key(), sample());
  a.get(key());
  a.get(key({ sampleIndex: 1 }));
  a.close();
  const b = await open(file);
  const row = b.handle.prepare('SELECT hits, misses FROM lookups').get() as { hits: number; misses: number };
  assert.deepEqual({ ...row }, { hits: 1, misses: 1 });
  b.close();
});

test('a cache file of another format is refused with a message, never wiped', async () => {
  const file = tmpDb();
  (await open(file)).close();
  const db = new Database(file);
  db.prepare("UPDATE meta SET value = '99' WHERE key = 'format'").run();
  db.close();
  const r = await openScoreCache({ path: file, ttlDays: 14, synchronous: 'normal' });
  assert.ok(!r.ok);
  assert.match(r.error, /format v99.*reads v1.*paid scores/);
});

test('the cache works inside a worker thread, compiled as rules are (esbuild bundle, npm packages external)', async () => {
  const file = tmpDb();
  const bundle = path.join(path.dirname(file), 'score-cache.mjs');
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [new URL('../../lib/scoring/score-cache.ts', import.meta.url).pathname],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    plugins: [
      {
        name: 'npm-absolute', // as the engine does: npm packages stay external, resolved to absolute paths
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (a) => ({
            path: a.path.startsWith('node:') ? a.path : createRequire(import.meta.url).resolve(a.path),
            external: true,
          }));
        },
      },
    ],
  });
  const mod = (await import('node:url')).pathToFileURL(bundle).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.mod).then(async ({ openScoreCache }) => {
      const r = await openScoreCache({ path: workerData.file, ttlDays: 14, synchronous: 'normal' });
      if (!r.ok) throw new Error(r.error);
      for (let s = 0; s < 5; s++) r.cache.put({ ...workerData.key, sampleIndex: s }, workerData.sample);
      const hit = r.cache.get({ ...workerData.key, sampleIndex: 4 });
      r.cache.close();
      parentPort.postMessage(hit ? hit.scores.correctness : null);
    });`;
  const w = new Worker(code, { eval: true, workerData: { mod, file, key: key(), sample: sample(0.3) } });
  const got = await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.equal(got, 0.3);
  const c = await open(file);
  assert.equal(c.get(key({ sampleIndex: 2 }))?.scores.correctness, 0.3);
  c.close();
});
