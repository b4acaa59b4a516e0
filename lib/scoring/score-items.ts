// The scoring driver: K samples for every item, each from the score cache when it holds it, else
// from the provider (through the rate limiter when one is given). Every successful sample is
// stored in the cache the moment it arrives, so a build killed mid-scoring re-bills nothing it
// was answered for; every failure is recorded in the cache and in the result. Every item ends
// either `scored` (all K samples) or `failed` (with its successful samples and its failures):
// none is lost. A provider that throws (retries spent, a transport error) is a failure like a
// failed outcome; only an aborted build or a refused API key (an AuthError: the provider stopped
// after a few 401/403 in a row) stops the run (it rejects; nothing more is asked). A sample
// whose earlier failure the cache records as non-retryable (e.g. a judge that kept answering
// malformed JSON) is not asked again: it fails at once, at no cost, until `scorecache
// replay-bad` clears it.
//
// Cache key (CacheKeyFields): provider, model, rubric version, prompt key (the prompt version and
// the hash of the whole judge spec — template text, rubric, endpoint, temperature, top-p, max
// tokens, K, parser version…: judge-spec.ts), item content hash (sha256 of the rollout's
// canonical JSON), sample index.
//
// Metrics: calls = provider calls made now; cache_hits = samples served by the cache;
// cache_hit_rate = hits / (hits + calls); latency over live calls only (a heuristic sample is
// computed, not timed: its latency is 0 and excluded; with no live call the latency fields are
// null); tokens as the provider reports them; wall_ms from the injected clock.
import { createHash } from 'node:crypto';
import { rolloutCanonicalJson, type Rollout } from '../rollouts/index.ts';
import { AuthError } from 'rc1-build';
import { canonicalJson } from 'rc1-build';
import { PROMPT_VERSION, renderJudgeMessages, type JudgeMessage } from './judge-prompt.ts';
import { RUBRIC_VERSION } from './rubric.ts';
import type { Provider, ScoreOutcome, ScoreRequest, ScoreSample } from './types.ts';

export interface CacheKeyFields {
  provider: string;
  model: string;
  rubricVersion: string;
  promptVersion: string;
  itemHash: string;
  sampleIndex: number;
}

/** The key as one string (canonical JSON of the fields): for maps and logs. */
export function cacheKey(k: CacheKeyFields): string {
  return canonicalJson({
    provider: k.provider,
    model: k.model,
    rubricVersion: k.rubricVersion,
    promptVersion: k.promptVersion,
    itemHash: k.itemHash,
    sampleIndex: k.sampleIndex,
  });
}

export interface SampleFailure {
  error: string;
  attempts: number;
  retryable: boolean;
}

/** What the driver needs of a score cache (the SQLite ScoreCache and MemoryScoreCache both fit). */
export interface ScoreCacheLike {
  get(key: CacheKeyFields): ScoreSample | null | undefined;
  /** Must persist before returning: the driver relies on it to never pay twice. */
  put(key: CacheKeyFields, sample: ScoreSample): void;
  recordFailure?(key: CacheKeyFields, failure: SampleFailure): void;
  /** A failure recorded earlier: a non-retryable one is not asked again (until `scorecache replay-bad` clears it). */
  failure?(key: CacheKeyFields): SampleFailure | null | undefined;
}

/** What the driver needs of a rate limiter: run a call, passing it the attempt's signal. */
export interface ScoreLimiter {
  run<T>(fn: (signal: AbortSignal) => Promise<T>, estTokens: number, signal?: AbortSignal): Promise<T>;
}

export interface ScoreItem {
  id: string;
  /** sha256 of the rollout's canonical JSON. */
  itemHash: string;
  rollout: Rollout;
}

/** sha256 of the rollout's canonical JSON (sorted keys): the content part of the cache key. */
export function itemHash(r: Rollout): string {
  return createHash('sha256').update(rolloutCanonicalJson(r)).digest('hex');
}

export function toScoreItem(r: Rollout): ScoreItem {
  return { id: r.rollout_id, itemHash: itemHash(r), rollout: r };
}

export type ItemResult =
  | { status: 'scored'; item: ScoreItem; samples: ScoreSample[] }
  | {
      status: 'failed';
      item: ScoreItem;
      samples: (ScoreSample | null)[];
      failures: (SampleFailure & { sampleIndex: number })[];
    };

export interface ScoreMetrics {
  items: number;
  scored_items: number;
  failed_items: number;
  samples: number;
  calls: number;
  live_calls: number;
  billable_calls: number;
  cache_hits: number;
  cache_hit_rate: number;
  failures: number;
  latency_ms: { avg: number; p95: number } | null;
  prompt_tokens: number;
  completion_tokens: number;
  wall_ms: number;
}

export interface ScoreProgress {
  done: number;
  total: number;
  calls: number;
  cacheHits: number;
  failures: number;
}

export interface ScoreItemsOptions {
  providerFor: (item: ScoreItem, sampleIndex: number) => Provider;
  cache?: ScoreCacheLike;
  limiter?: ScoreLimiter;
  k: number;
  temperature: number;
  /** The prompt field of every cache key: the prompt version and the judge spec hash (judge-spec.ts promptKey); default PROMPT_VERSION alone. */
  promptKey?: string;
  signal: AbortSignal;
  onProgress?: (p: ScoreProgress) => void;
  /** Samples in flight at once (default 1; with a limiter, 16: the limiter sets the real concurrency). */
  concurrency?: number;
  /** Tokens to reserve with the limiter for a request (default: characters / 4 + 300). */
  estTokens?: (messages: readonly JudgeMessage[]) => number;
  now?: () => number;
}

/** p95 by nearest rank. */
export function p95(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(0.95 * s.length) - 1)]!;
}

const defaultEst = (m: readonly JudgeMessage[]): number =>
  Math.ceil(m.reduce((n, x) => n + x.content.length, 0) / 4) + 300;

export async function scoreItems(
  items: readonly ScoreItem[],
  o: ScoreItemsOptions,
): Promise<{ results: ItemResult[]; metrics: ScoreMetrics }> {
  const now = o.now ?? (() => performance.now());
  const start = now();
  const k = o.k;
  const samples: (ScoreSample | null)[][] = items.map(() => new Array<ScoreSample | null>(k).fill(null));
  const failures: (SampleFailure & { sampleIndex: number })[][] = items.map(() => []);
  const left = items.map(() => k);
  const messages = new Map<number, JudgeMessage[]>();
  const latencies: number[] = [];
  const m = { calls: 0, live: 0, billable: 0, hits: 0, failures: 0, prompt: 0, completion: 0, done: 0 };

  const settle = (i: number): void => {
    if (--left[i]! > 0) return;
    messages.delete(i);
    m.done++;
    o.onProgress?.({ done: m.done, total: items.length, calls: m.calls, cacheHits: m.hits, failures: m.failures });
  };

  const total = items.length * k;
  let next = 0;
  const one = async (i: number, s: number): Promise<void> => {
    const item = items[i]!;
    const provider = o.providerFor(item, s);
    const key: CacheKeyFields = {
      provider: provider.provider,
      model: provider.model,
      rubricVersion: RUBRIC_VERSION,
      promptVersion: o.promptKey ?? PROMPT_VERSION,
      itemHash: item.itemHash,
      sampleIndex: s,
    };
    const hit = o.cache?.get(key);
    if (hit) {
      samples[i]![s] = { ...hit, cached: true };
      m.hits++;
      settle(i);
      return;
    }
    const before = o.cache?.failure?.(key);
    if (before && !before.retryable) {
      failures[i]!.push({
        sampleIndex: s,
        error: `not asked again: ${before.error} (non-retryable; rc1-build scorecache replay-bad clears it)`,
        attempts: 0,
        retryable: false,
      });
      m.failures++;
      settle(i);
      return;
    }
    let msgs = messages.get(i);
    if (!msgs) {
      msgs = renderJudgeMessages(item.rollout);
      messages.set(i, msgs);
    }
    const req: ScoreRequest = {
      itemHash: item.itemHash,
      sampleIndex: s,
      rubricVersion: RUBRIC_VERSION,
      promptVersion: key.promptVersion,
      temperature: o.temperature,
      messages: msgs,
      rollout: item.rollout,
    };
    let outcome: ScoreOutcome;
    try {
      outcome = o.limiter
        ? await o.limiter.run((signal) => provider.score(req, signal), (o.estTokens ?? defaultEst)(msgs), o.signal)
        : await provider.score(req, o.signal);
    } catch (e) {
      if (o.signal.aborted) throw e;
      if (e instanceof AuthError || (e as Error)?.name === 'AuthError') {
        next = total;
        throw e;
      }
      const err = e as Error & { attempts?: unknown; retryable?: unknown };
      outcome = {
        ok: false,
        error: err?.message ?? String(e),
        attempts: typeof err?.attempts === 'number' ? err.attempts : 1,
        retryable: err?.retryable !== false,
      };
    }
    m.calls++;
    if (outcome.ok) {
      const sample: ScoreSample = { ...outcome.sample, cached: false };
      o.cache?.put(key, sample); // stored before anything else happens: a kill after this re-bills nothing
      samples[i]![s] = sample;
      if (sample.live) {
        m.live++;
        latencies.push(sample.latencyMs);
      }
      if (sample.billable) m.billable++;
      m.prompt += sample.promptTokens;
      m.completion += sample.completionTokens;
    } else {
      const f = { error: outcome.error, attempts: outcome.attempts, retryable: outcome.retryable };
      o.cache?.recordFailure?.(key, f);
      failures[i]!.push({ sampleIndex: s, ...f });
      m.failures++;
    }
    settle(i);
  };

  const width = Math.max(1, Math.min(o.concurrency ?? (o.limiter ? 16 : 1), total));
  const worker = async (): Promise<void> => {
    while (next < total) {
      o.signal.throwIfAborted();
      const j = next++;
      await one(Math.floor(j / k), j % k);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));

  const results: ItemResult[] = items.map((item, i) => {
    const got = samples[i]!;
    const fails = failures[i]!.sort((a, b) => a.sampleIndex - b.sampleIndex);
    return fails.length === 0 && got.every((x) => x !== null)
      ? { status: 'scored', item, samples: got as ScoreSample[] }
      : { status: 'failed', item, samples: got, failures: fails };
  });
  const scored = results.filter((r) => r.status === 'scored').length;
  return {
    results,
    metrics: {
      items: items.length,
      scored_items: scored,
      failed_items: items.length - scored,
      samples: total,
      calls: m.calls,
      live_calls: m.live,
      billable_calls: m.billable,
      cache_hits: m.hits,
      cache_hit_rate: m.hits + m.calls === 0 ? 0 : m.hits / (m.hits + m.calls),
      failures: m.failures,
      latency_ms:
        latencies.length === 0
          ? null
          : { avg: latencies.reduce((a, b) => a + b, 0) / latencies.length, p95: p95(latencies) },
      prompt_tokens: m.prompt,
      completion_tokens: m.completion,
      wall_ms: now() - start,
    },
  };
}
