// A minimal scoring loop over the live provider, the rate limiter and the score cache, for the
// tests and the benchmark (the real driver, score-items.ts, adds rollouts, the rubric and K-sample
// aggregation on top of the same three parts). Each sample: cache lookup; on a miss one call
// through the limiter; the answer is put in the cache at once, a failure recorded. Run as a
// script it scores against a server and prints one line per stored sample, so a test can
// SIGKILL it mid-run; MODE `loop` runs this loop over N synthetic items, MODE `driver` runs the
// real driver (score-items.ts scoreItems) over the fixture rollouts of N scenarios per task:
//   node --import tsx test/helpers/score-loop.ts MODE BASE_URL DB_PATH N K   (key in $JUDGE_KEY)
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { createOpenAICompatibleProvider, estimateTokens, scoreLimited } from '../../lib/scoring/openai-provider.ts';
import { type LimiterOptions, createRateLimiter, type RateLimiter } from '../../lib/scoring/rate-limiter.ts';
import { cacheKeyFor, openScoreCache, type ScoreCache, type ScoreCacheKey } from '../../lib/scoring/score-cache.ts';
import { scoreItems, toScoreItem } from '../../lib/scoring/score-items.ts';
import type { DimScores, Provider, ScoreRequest, ScoreSample } from '../../lib/scoring/types.ts';
import { fixtureRollouts } from './scoring-fixtures.ts';

export interface LoopItem {
  itemHash: string;
  messages: ScoreRequest['messages'];
}

export interface LoopResult {
  scored: number;
  failed: number;
  fromCache: number;
  called: number;
  /** Per item (in input order), its K samples' scores; a failed sample is null. */
  samples: (DimScores | null)[][];
}

/** Synthetic items: the prompt names the item, so the fake server's per-prompt count is per item. */
export function syntheticItems(n: number): LoopItem[] {
  return Array.from({ length: n }, (_, i) => {
    const rollout = { id: `item-${i}`, question: `What is ${i} + ${i * 7}?`, answer: String(i * 8) };
    return {
      itemHash: createHash('sha256').update(JSON.stringify(rollout)).digest('hex'),
      messages: [
        { role: 'system' as const, content: 'Grade the attempt on seven dimensions; answer with one JSON object.' },
        {
          role: 'user' as const,
          content: `Item ${rollout.id}. Question: ${rollout.question} Attempt: ${rollout.answer}`,
        },
      ],
    };
  });
}

export const LOOP_VERSIONS = { rubricVersion: 'rubric-test-1', promptVersion: 'prompt-test-1' };

export async function scoreLoop(o: {
  provider: Provider;
  limiter: RateLimiter;
  cache: ScoreCache;
  items: LoopItem[];
  k: number;
  maxTokens: number;
  versions?: { rubricVersion: string; promptVersion: string };
  onStored?: (itemHash: string, sampleIndex: number) => void;
  log?: (line: string) => void;
}): Promise<LoopResult> {
  const v = o.versions ?? LOOP_VERSIONS;
  const result: LoopResult = { scored: 0, failed: 0, fromCache: 0, called: 0, samples: [] };
  const pending: Promise<void>[] = [];
  for (const item of o.items) {
    const got: (DimScores | null)[] = new Array<DimScores | null>(o.k).fill(null);
    result.samples.push(got);
    for (let s = 0; s < o.k; s++) {
      const req: ScoreRequest = {
        itemHash: item.itemHash,
        sampleIndex: s,
        ...v,
        temperature: 0.7,
        messages: item.messages,
        rollout: null,
      };
      const key = cacheKeyFor(o.provider, req);
      const hit = o.cache.get(key);
      if (hit) {
        got[s] = hit.scores;
        result.scored++;
        result.fromCache++;
        continue;
      }
      result.called++;
      pending.push(
        scoreLimited(o.provider, o.limiter, req, estimateTokens(req, o.maxTokens)).then(
          (out) => {
            if (out.ok) {
              o.cache.put(key, out.sample);
              got[s] = out.sample.scores;
              result.scored++;
              o.onStored?.(item.itemHash, s);
            } else {
              o.cache.recordFailure(key, out);
              result.failed++;
              o.log?.(`failed ${item.itemHash.slice(0, 12)}#${s}: ${out.error}`);
            }
          },
          (e: unknown) => {
            // A refused key stops the provider (AuthError): every later sample fails with its message.
            if ((e as Error)?.name !== 'AuthError') throw e;
            result.failed++;
            o.log?.(`failed ${item.itemHash.slice(0, 12)}#${s}: ${(e as Error).message}`);
          },
        ),
      );
    }
  }
  await Promise.all(pending);
  return result;
}

export const FAST_LIMITS: LimiterOptions = {
  requestsPerSecond: 1000,
  burst: 50,
  tokensPerMinute: 1e9,
  concurrencyMin: 2,
  concurrencyMax: 8,
  concurrencyInitial: 4,
  window: 20,
  target429Ratio: 0.05,
  decreaseFactor: 0.5,
  timeoutMs: 2000,
  maxAttempts: 6,
  backoffBaseMs: 20,
  backoffMaxMs: 200,
  maxRetryAfterMs: 2000,
};

export function testProvider(
  baseUrl: string,
  apiKey: string | undefined,
  overrides: { malformedRetries?: number } = {},
): Provider {
  return createOpenAICompatibleProvider({
    preset: 'openai',
    provider: 'openai',
    baseUrl,
    model: 'gpt-4o-mini',
    keyEnv: 'JUDGE_KEY',
    requiresKey: true,
    responseFormat: 'json_schema',
    billable: true,
    maxTokens: 64,
    malformedRetries: overrides.malformedRetries ?? 2,
    apiKey,
  });
}

async function main(argv: string[]): Promise<void> {
  const [mode, url, db, n, k] = argv;
  const opened = await openScoreCache({ path: db!, ttlDays: 14, synchronous: 'normal' });
  if (!opened.ok) throw new Error(opened.error);
  const provider = testProvider(url!, process.env.JUDGE_KEY);
  const limiter = createRateLimiter(FAST_LIMITS);
  if (mode === 'driver') {
    const cache = opened.cache;
    const announcing = {
      get: (key: ScoreCacheKey) => cache.get(key),
      put: (key: ScoreCacheKey, sample: ScoreSample) => {
        cache.put(key, sample);
        process.stdout.write(`stored ${key.itemHash} ${key.sampleIndex}\n`);
      },
      recordFailure: (key: ScoreCacheKey, f: { error: string; attempts: number; retryable: boolean }) =>
        cache.recordFailure(key, f),
      failure: (key: ScoreCacheKey) => cache.failure(key),
    };
    const items = (await fixtureRollouts(Number(n))).map(toScoreItem);
    const run = await scoreItems(items, {
      providerFor: () => provider,
      k: Number(k),
      temperature: 0.7,
      signal: new AbortController().signal,
      cache: announcing,
      limiter,
    });
    cache.close();
    process.stdout.write(
      `done ${JSON.stringify({ scored: run.metrics.scored_items * Number(k), failed: run.metrics.failures, fromCache: run.metrics.cache_hits, called: run.metrics.calls })}\n`,
    );
    return;
  }
  const r = await scoreLoop({
    provider,
    limiter,
    cache: opened.cache,
    items: syntheticItems(Number(n)),
    k: Number(k),
    maxTokens: 64,
    onStored: (h, s) => process.stdout.write(`stored ${h} ${s}\n`),
    log: (line) => process.stdout.write(`${line}\n`),
  });
  opened.cache.close();
  process.stdout.write(`done ${JSON.stringify({ ...r, samples: undefined })}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
