// The rate limiter in virtual time (injected clock and sleep): token buckets, Retry-After,
// backoff with full jitter, AIMD concurrency on the 429 ratio, timeouts, aborts and metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetryAfter } from '../../lib/scoring/parse-retry-after.ts';
import {
  createRateLimiter,
  type LimiterOptions,
  RetriesExhaustedError,
  TransportError,
} from '../../lib/scoring/rate-limiter.ts';

function virtualTime(): { now: () => number; sleep: (ms: number) => Promise<void>; sleeps: number[] } {
  let t = 0;
  const sleeps: number[] = [];
  // Let everything already admitted run before the clock moves on.
  const sleep = async (ms: number): Promise<void> => {
    sleeps.push(ms);
    await new Promise((r) => setImmediate(r));
    t += ms;
  };
  return { now: () => t, sleep, sleeps };
}

function options(over: Partial<LimiterOptions> = {}): LimiterOptions {
  return {
    requestsPerSecond: 1000,
    burst: 1000,
    tokensPerMinute: 1e12,
    concurrencyMin: 2,
    concurrencyMax: 8,
    concurrencyInitial: 4,
    window: 20,
    target429Ratio: 0.05,
    decreaseFactor: 0.5,
    timeoutMs: 10_000,
    maxAttempts: 3,
    backoffBaseMs: 100,
    backoffMaxMs: 1000,
    maxRetryAfterMs: 60_000,
    random: () => 1,
    ...over,
  };
}

const headers = (h: Record<string, string>): { get(n: string): string | null } => ({
  get: (n) => h[n.toLowerCase()] ?? null,
});

test('the request bucket spaces calls at requests_per_s once the burst is spent', async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(options({ requestsPerSecond: 10, burst: 1, now: vt.now, sleep: vt.sleep }));
  const starts: number[] = [];
  await Promise.all(
    Array.from({ length: 11 }, () =>
      lim.run(async () => {
        starts.push(vt.now());
      }, 1),
    ),
  );
  assert.deepEqual(starts, [0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
});

test('the tokens/min bucket holds a request until its estimated tokens have accrued', async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(options({ tokensPerMinute: 6000, now: vt.now, sleep: vt.sleep }));
  const starts: number[] = [];
  await Promise.all(
    [3000, 3000, 3000].map((t) =>
      lim.run(async () => {
        starts.push(vt.now());
      }, t),
    ),
  );
  assert.deepEqual(starts, [0, 0, 30_000], '6000 tokens/min refill 3000 tokens in 30 s');
  assert.equal(lim.metrics().tokens, 9000);
});

test('Retry-After is read from retry-after-ms, from seconds and from an HTTP-date', () => {
  const now = Date.parse('2025-08-20T12:00:00Z');
  assert.equal(parseRetryAfter(headers({ 'retry-after': '3' }), now), 3000);
  assert.equal(parseRetryAfter(headers({ 'retry-after': '0.5' }), now), 500);
  assert.equal(parseRetryAfter(headers({ 'retry-after': 'Wed, 20 Aug 2025 12:00:07 GMT' }), now), 7000);
  assert.equal(
    parseRetryAfter(headers({ 'retry-after': 'Wed, 20 Aug 2025 11:00:00 GMT' }), now),
    0,
    'a date in the past means now',
  );
  assert.equal(
    parseRetryAfter(headers({ 'retry-after': '2', 'retry-after-ms': '250' }), now),
    250,
    'the precise header wins',
  );
  assert.equal(parseRetryAfter(headers({ 'retry-after': 'soon' }), now), undefined);
  assert.equal(parseRetryAfter(headers({}), now), undefined);
});

test('a 429 with Retry-After pauses every request, not only the rejected one, until it has passed', async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(options({ now: vt.now, sleep: vt.sleep }));
  const starts: Record<string, number[]> = { a: [], b: [] };
  let first = true;
  const a = lim.run(async () => {
    starts.a!.push(vt.now());
    if (first) {
      first = false;
      throw new TransportError('rate-limited', 'HTTP 429', 429, 2000);
    }
  }, 1);
  await new Promise((r) => setImmediate(r));
  const b = lim.run(async () => {
    starts.b!.push(vt.now());
  }, 1);
  await Promise.all([a, b]);
  assert.equal(starts.a![0], 0);
  assert.ok(starts.a![1]! >= 2000, `retry at ${starts.a![1]}`);
  assert.ok(starts.b![0]! >= 2000, `a request queued during the pause started at ${starts.b![0]}`);
  assert.ok(vt.sleeps.includes(2000));
});

test('a Retry-After longer than max_retry_after_s is clamped to it', async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(options({ maxRetryAfterMs: 5000, now: vt.now, sleep: vt.sleep }));
  let n = 0;
  await lim.run(async () => {
    if (n++ === 0) throw new TransportError('rate-limited', 'HTTP 429', 429, 3_600_000);
  }, 1);
  assert.ok(vt.sleeps.includes(5000) && !vt.sleeps.includes(3_600_000));
});

test('5xx failures back off exponentially with full jitter and stop after max_attempts', async () => {
  for (const [rnd, expected] of [
    [1, [100, 200, 400, 800]],
    [0.5, [50, 100, 200, 400]],
  ] as const) {
    const vt = virtualTime();
    const lim = createRateLimiter(options({ maxAttempts: 5, random: () => rnd, now: vt.now, sleep: vt.sleep }));
    let calls = 0;
    await assert.rejects(
      lim.run(async () => {
        calls++;
        throw new TransportError('server', 'HTTP 503 from judge', 503);
      }, 1),
      (e: unknown) =>
        e instanceof RetriesExhaustedError && e.kind === 'server' && e.attempts === 5 && /HTTP 503/.test(e.message),
    );
    assert.equal(calls, 5);
    assert.deepEqual(vt.sleeps, [...expected]);
    assert.equal(lim.metrics().retries, 4);
  }
});

test('the backoff delay never exceeds backoff_max_ms', async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(
    options({ maxAttempts: 8, backoffBaseMs: 100, backoffMaxMs: 500, now: vt.now, sleep: vt.sleep }),
  );
  await assert.rejects(
    lim.run(async () => {
      throw new TransportError('network', 'ECONNRESET');
    }, 1),
    RetriesExhaustedError,
  );
  assert.deepEqual(vt.sleeps, [100, 200, 400, 500, 500, 500, 500]);
});

test('an attempt that outlives timeout_s is aborted through its signal and retried as a timeout', async () => {
  const lim = createRateLimiter(options({ timeoutMs: 30, maxAttempts: 2, backoffBaseMs: 1, backoffMaxMs: 1 }));
  const aborted: boolean[] = [];
  await assert.rejects(
    lim.run(
      (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted.push(true);
            reject(signal.reason);
          }),
        ),
      1,
    ),
    (e: unknown) => e instanceof RetriesExhaustedError && e.kind === 'timeout' && e.attempts === 2,
  );
  assert.deepEqual(aborted, [true, true]);
  assert.equal(lim.metrics().timeouts, 2);
});

test('an error that is not a TransportError is not retried', async () => {
  const lim = createRateLimiter(options());
  let calls = 0;
  await assert.rejects(
    lim.run(async () => {
      calls++;
      throw new Error('bad request body');
    }, 1),
    /bad request body/,
  );
  assert.equal(calls, 1);
});

test("the caller's abort stops a queued request before it is sent", async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(
    options({
      requestsPerSecond: 1,
      burst: 1,
      now: vt.now,
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))),
    }),
  );
  const ac = new AbortController();
  let sent = 0;
  await lim.run(async () => {
    sent++;
  }, 1);
  const queued = lim.run(
    async () => {
      sent++;
    },
    1,
    ac.signal,
  );
  ac.abort(new Error('interrupted'));
  await assert.rejects(queued, /interrupted/);
  assert.equal(sent, 1);
});

test("the caller's abort ends a long Retry-After wait at once, and leaves no timer behind", async () => {
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const lim = createRateLimiter(options({ maxRetryAfterMs: 60_000 }));
  const ac = new AbortController();
  const t0 = Date.now();
  const p = lim.run(
    async () => {
      throw new TransportError('rate-limited', 'HTTP 429', 429, 60_000);
    },
    1,
    ac.signal,
  );
  let atAbort = -1; // timers running when the caller aborts: this one and the limiter's 60 s wait among them
  setTimeout(() => {
    atAbort = timers();
    ac.abort(new Error('interrupted'));
  }, 20);
  await assert.rejects(p, /interrupted/);
  assert.ok(Date.now() - t0 < 5000);
  // The 60 s wait's timer is gone (a timer left running would hold the process open for a minute).
  assert.ok(timers() <= atAbort - 2, `${atAbort} timers running at the abort (its own included), ${timers()} after it`);
});

test('concurrency halves under a 429 burst, once per round and never below 2, then climbs back one step per round', async () => {
  const vt = virtualTime();
  const changes: [number, string][] = [];
  const lim = createRateLimiter(
    options({
      concurrencyInitial: 8,
      maxAttempts: 1,
      now: vt.now,
      sleep: vt.sleep,
      onConcurrency: (c, why) => changes.push([c, why]),
    }),
  );
  for (let i = 0; i < 30; i++) {
    await lim
      .run(async () => {
        throw new TransportError('rate-limited', 'HTTP 429', 429);
      }, 1)
      .catch(() => undefined);
  }
  assert.deepEqual(changes, [
    [4, 'decrease'],
    [2, 'decrease'],
  ]);
  assert.equal(lim.concurrency, 2);
  for (let i = 0; i < 18; i++) await lim.run(async () => undefined, 1);
  assert.equal(lim.concurrency, 2, 'no increase while the last 20 attempts hold more than 5 % 429s');
  for (let i = 0; i < 200; i++) await lim.run(async () => undefined, 1);
  assert.equal(lim.concurrency, 8);
  assert.deepEqual(
    changes.slice(2).map(([c]) => c),
    [3, 4, 5, 6, 7, 8],
  );
  const m = lim.metrics();
  assert.equal(m.concurrency_low, 2);
  assert.equal(m.concurrency_high, 8);
});

test('a single 429 among many successes does not cut concurrency', async () => {
  const vt = virtualTime();
  const lim = createRateLimiter(options({ concurrencyInitial: 8, maxAttempts: 1, now: vt.now, sleep: vt.sleep }));
  for (let i = 0; i < 40; i++) await lim.run(async () => undefined, 1);
  await lim
    .run(async () => {
      throw new TransportError('rate-limited', 'HTTP 429', 429);
    }, 1)
    .catch(() => undefined);
  assert.equal(lim.concurrency, 8);
});

test('no more calls run at once than the current concurrency', async () => {
  const lim = createRateLimiter(options({ concurrencyInitial: 3 }));
  let running = 0;
  let peak = 0;
  await Promise.all(
    Array.from({ length: 30 }, () =>
      lim.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running--;
      }, 1),
    ),
  );
  assert.ok(peak <= 8 && peak >= 3, `peak ${peak}`);
  const lim2 = createRateLimiter(options({ concurrencyInitial: 2, concurrencyMax: 2 }));
  running = 0;
  peak = 0;
  await Promise.all(
    Array.from({ length: 10 }, () =>
      lim2.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running--;
      }, 1),
    ),
  );
  assert.equal(peak, 2);
});

test('metrics report rps, the 429 rate, average and p95 latency and retries', async () => {
  let t = 0;
  const lim = createRateLimiter(
    options({
      now: () => t,
      sleep: async (ms) => {
        t += ms;
      },
      random: () => 0,
    }),
  );
  let n = 0;
  for (let i = 0; i < 20; i++) {
    await lim.run(async () => {
      const start = t;
      t = start + (i < 19 ? 10 : 100);
      if (i === 0 && n++ === 0) throw new TransportError('rate-limited', 'HTTP 429', 429);
    }, 1);
  }
  const m = lim.metrics();
  assert.equal(m.attempts, 21);
  assert.equal(m.successes, 20);
  assert.equal(m.retries, 1);
  assert.equal(m['429_rate'], 1 / 21);
  assert.equal(m.p95_latency_ms, 10);
  assert.equal(m.avg_latency_ms, (19 * 10 + 100) / 20);
  assert.equal(m.rps, 20 / (t / 1000));
  assert.equal(lim.metrics(t + 1).attempts, 0, 'a later window holds nothing');
});
