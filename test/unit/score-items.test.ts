// The scoring driver (lib/scoring/score-items.ts) with the in-memory cache and fake providers:
// each sample is stored the moment it arrives, a provider failing or a build killed halfway loses
// nothing and the rerun asks only for what is missing, failures are recorded, metrics add up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIMENSIONS,
  MemoryScoreCache,
  PROMPT_VERSION,
  RUBRIC_VERSION,
  cacheKey,
  createHeuristicProvider,
  p95,
  scoreItems,
  toScoreItem,
  type CacheKeyFields,
  type DimScores,
  type Provider,
  type ScoreItem,
  type ScoreOutcome,
  type ScoreRequest,
} from '../../lib/scoring/index.ts';
import { fixtureRollouts } from '../helpers/scoring-fixtures.ts';

const scores = (v: number): DimScores => Object.fromEntries(DIMENSIONS.map((d) => [d, v])) as DimScores;

/** A live, billable fake judge; `behave(n, req)` may throw or fail call n (1-based). */
function fakeLive(
  behave: (n: number, req: ScoreRequest) => ScoreOutcome | 'throw' | null = () => null,
  name = 'fake-live',
): Provider & { calls: number } {
  const p = {
    provider: name,
    model: 'judge-1',
    live: true,
    billable: true,
    calls: 0,
    score(req: ScoreRequest): Promise<ScoreOutcome> {
      p.calls++;
      const b = behave(p.calls, req);
      if (b === 'throw') return Promise.reject(new Error(`connection reset on call ${p.calls}`));
      if (b) return Promise.resolve(b);
      return Promise.resolve({
        ok: true,
        sample: {
          provider: name,
          model: 'judge-1',
          live: true,
          billable: true,
          scores: scores(0.1 * req.sampleIndex),
          latencyMs: 10 * (1 + req.sampleIndex),
          promptTokens: 100,
          completionTokens: 20,
          cached: false,
        },
      });
    },
  };
  return p;
}

let itemsCache: ScoreItem[] | null = null;
async function items(): Promise<ScoreItem[]> {
  itemsCache ??= (await fixtureRollouts(2, 2)).map(toScoreItem); // 6 scenarios × 2 candidates = 12 items
  return itemsCache;
}
const run = (its: ScoreItem[], provider: Provider, extra: Partial<Parameters<typeof scoreItems>[1]> = {}) =>
  scoreItems(its, {
    providerFor: () => provider,
    k: 3,
    temperature: 0.7,
    signal: new AbortController().signal,
    ...extra,
  });

test('each sample is in the cache before the next call is made', async () => {
  const its = await items();
  const cache = new MemoryScoreCache();
  const seenSizes: number[] = [];
  const p = fakeLive(() => {
    seenSizes.push(cache.size);
    return null;
  });
  const res = await run(its, p, { cache });
  assert.deepEqual(
    seenSizes,
    Array.from({ length: its.length * 3 }, (_, i) => i),
  );
  assert.equal(cache.putLog.length, its.length * 3);
  assert.ok(res.results.every((r) => r.status === 'scored'));
});

test('a provider that throws halfway: earlier samples are cached, the rest are recorded failures, and the rerun asks only for those', async () => {
  const its = await items();
  const cache = new MemoryScoreCache();
  const half = Math.floor((its.length * 3) / 2);
  const first = await run(
    its,
    fakeLive((n) => (n > half ? 'throw' : null)),
    { cache },
  );
  assert.equal(first.results.length, its.length, 'every item comes back');
  assert.equal(cache.size, half);
  assert.equal(cache.failures.size, its.length * 3 - half);
  const failed = first.results.filter((r) => r.status === 'failed');
  assert.equal(failed.length, its.length - Math.floor(half / 3));
  for (const r of failed) if (r.status === 'failed') assert.match(r.failures[0]!.error, /connection reset/);
  assert.equal(first.metrics.failures, its.length * 3 - half);
  assert.equal(first.metrics.failed_items, failed.length);

  const healthy = fakeLive();
  const second = await run(its, healthy, { cache });
  assert.equal(healthy.calls, its.length * 3 - half, 'only the missing samples are asked for');
  assert.equal(second.metrics.cache_hits, half);
  assert.equal(second.metrics.calls, its.length * 3 - half);
  assert.ok(second.results.every((r) => r.status === 'scored'));
  assert.equal(cache.failures.size, 0, 'a stored sample clears its recorded failure');
  const third = fakeLive();
  await run(its, third, { cache });
  assert.equal(third.calls, 0, 'nothing is paid for twice');
});

test('a build killed halfway keeps every sample it was answered for, and the rebuild re-bills none of them', async () => {
  const its = await items();
  const cache = new MemoryScoreCache();
  const ac = new AbortController();
  const killAt = 7;
  const p = fakeLive((n) => {
    if (n === killAt) ac.abort(new Error('SIGTERM'));
    return null;
  });
  await assert.rejects(run(its, p, { cache, signal: ac.signal }), /SIGTERM/);
  assert.equal(cache.size, killAt, 'the answer of the call in flight when the kill came is stored too');
  const again = fakeLive();
  const res = await run(its, again, { cache });
  assert.equal(again.calls, its.length * 3 - killAt);
  assert.equal(res.metrics.cache_hits, killAt);
});

test('failed outcomes are recorded with their attempts, and a non-retryable recorded failure is not asked again', async () => {
  const its = (await items()).slice(0, 2);
  const cache = new MemoryScoreCache();
  const bad: ScoreOutcome = { ok: false, error: 'malformed judge answer', attempts: 3, retryable: false };
  const res = await run(
    its,
    fakeLive((_, req) => (req.sampleIndex === 1 ? bad : null)),
    { cache },
  );
  const r0 = res.results[0]!;
  assert.equal(r0.status, 'failed');
  if (r0.status === 'failed') {
    assert.deepEqual(r0.failures, [{ sampleIndex: 1, error: 'malformed judge answer', attempts: 3, retryable: false }]);
    assert.equal(r0.samples.filter(Boolean).length, 2);
  }
  const withMemory = Object.assign(cache, { failure: (k: CacheKeyFields) => cache.failures.get(cacheKey(k)) ?? null });
  const p = fakeLive();
  const again = await run(its, p, { cache: withMemory });
  assert.equal(p.calls, 0);
  assert.ok(
    again.results.every(
      (r) => r.status === 'failed' && r.failures[0]!.error.startsWith('not asked again: malformed judge answer'),
    ),
  );
});

test('calls go through the limiter with a token estimate, and the limiter signal reaches the provider', async () => {
  const its = (await items()).slice(0, 3);
  const seen: number[] = [];
  let signals = 0;
  const limiter = {
    run<T>(fn: (s: AbortSignal) => Promise<T>, est: number): Promise<T> {
      seen.push(est);
      return fn(new AbortController().signal);
    },
  };
  const p: Provider = {
    ...fakeLive(),
    score: (req, s) => {
      if (s.aborted === false) signals++;
      return fakeLive().score(req, s);
    },
  };
  const res = await run(its, p, { limiter });
  assert.equal(seen.length, 9);
  assert.ok(seen.every((e) => e > 300));
  assert.equal(signals, 9);
  assert.equal(res.metrics.calls, 9);
});

test('metrics count calls, billable calls, cache hits, tokens and live latency (avg and nearest-rank p95)', async () => {
  const its = (await items()).slice(0, 4);
  const cache = new MemoryScoreCache();
  await run(its.slice(0, 2), fakeLive(), { cache });
  const res = await run(its, fakeLive(), { cache });
  const m = res.metrics;
  assert.deepEqual([m.items, m.samples, m.calls, m.billable_calls, m.live_calls, m.cache_hits], [4, 12, 6, 6, 6, 6]);
  assert.equal(m.cache_hit_rate, 0.5);
  assert.deepEqual([m.prompt_tokens, m.completion_tokens], [600, 120]);
  assert.deepEqual(m.latency_ms, { avg: 20, p95: 30 });
  assert.equal(p95([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100]), 19);
});

test('the heuristic path is untimed: no latency, no billable call, identical results on every run', async () => {
  const its = await items();
  const h = createHeuristicProvider({ jitter: 0.03, ambiguityJitter: 0.4 });
  const a = await run(its, h);
  const b = await run(its, h);
  assert.equal(a.metrics.latency_ms, null);
  assert.equal(a.metrics.billable_calls, 0);
  assert.deepEqual(
    a.results.map((r) => r.samples),
    b.results.map((r) => r.samples),
  );
});

test('the cache key separates provider, model, rubric and prompt versions, item and sample index', () => {
  const k: CacheKeyFields = {
    provider: 'p',
    model: 'm',
    rubricVersion: RUBRIC_VERSION,
    promptVersion: PROMPT_VERSION,
    itemHash: 'abc',
    sampleIndex: 0,
  };
  const keys = new Set(
    [
      k,
      { ...k, provider: 'q' },
      { ...k, model: 'n' },
      { ...k, rubricVersion: 'r2' },
      { ...k, promptVersion: 'p2' },
      { ...k, itemHash: 'abd' },
      { ...k, sampleIndex: 1 },
    ].map(cacheKey),
  );
  assert.equal(keys.size, 7);
  assert.equal(cacheKey({ ...k }), cacheKey(k));
});

test('the item hash is the sha256 of the rollout canonical JSON, whatever the key order of the record', async () => {
  const { canonicalJson } = await import('../../packages/engine/src/util/canonical-json.ts');
  const { rolloutCanonicalJson } = await import('../../lib/rollouts/index.ts');
  const { createHash } = await import('node:crypto');
  for (const it of await items()) {
    assert.equal(rolloutCanonicalJson(it.rollout), canonicalJson(it.rollout));
    assert.equal(it.itemHash, createHash('sha256').update(canonicalJson(it.rollout)).digest('hex'));
    const shuffled = Object.fromEntries(Object.entries(it.rollout).reverse()) as typeof it.rollout;
    assert.equal(toScoreItem(shuffled).itemHash, it.itemHash);
  }
});
