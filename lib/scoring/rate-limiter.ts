// The rate limiter every billable call goes through: two token buckets (requests per second,
// tokens per minute), adaptive concurrency between a floor and a ceiling driven by the 429 ratio
// (AIMD), a 429's Retry-After honoured as a pause for every request (and a 429 empties the request
// bucket, so no saved-up burst follows it), exponential backoff with full jitter for 5xx, timeouts
// and network errors (never sooner than a 503's Retry-After), and a per-attempt timeout through an
// AbortSignal. The caller's own signal (an interrupted build) ends any wait at once.
//
// AIMD, with the defaults of configs/scoring_live.yaml: the 429 ratio is taken over the last
// `window` = 20 attempts. A 429 while that ratio is above `target_429_ratio` = 0.05 (two or more
// 429s in the last 20) multiplies concurrency by `decrease_factor` = 0.5 (floor 2), at most once
// per round (as many completions as the concurrency then), so one burst halves it once, not once
// per rejected request. A round of successful completions while the ratio is at or below the
// target adds 1 (ceiling 8).
//
// A limited function signals a retryable failure by throwing TransportError; any other error
// passes straight through. When the attempts are spent, run() rejects with RetriesExhaustedError.
// Clock, sleep and randomness are injectable so the unit tests run in virtual time.
import type { ScoringLiveConfig } from './presets.ts';
import { TokenBucket } from './token-bucket.ts';

export type RetryKind = 'rate-limited' | 'server' | 'timeout' | 'network';

/** A failure worth retrying: a 429 (with the server's Retry-After, if any), a 5xx, a network error. */
export class TransportError extends Error {
  constructor(
    readonly kind: Exclude<RetryKind, 'timeout'>,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** Every attempt failed with a retryable error; `kind` and the message are the last attempt's. */
export class RetriesExhaustedError extends Error {
  constructor(
    readonly kind: RetryKind,
    readonly attempts: number,
    message: string,
  ) {
    super(message);
    this.name = 'RetriesExhaustedError';
  }
}

export interface LimiterOptions {
  requestsPerSecond: number;
  burst: number;
  tokensPerMinute: number;
  concurrencyMin: number;
  concurrencyMax: number;
  concurrencyInitial: number;
  window: number;
  target429Ratio: number;
  decreaseFactor: number;
  timeoutMs: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  maxRetryAfterMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Called when concurrency changes (for logs and tests). */
  onConcurrency?: (concurrency: number, why: 'increase' | 'decrease') => void;
}

export function limiterOptionsFromConfig(r: ScoringLiveConfig['rate']): LimiterOptions {
  return {
    requestsPerSecond: r.requests_per_s,
    burst: r.burst,
    tokensPerMinute: r.tokens_per_min,
    concurrencyMin: r.concurrency_min,
    concurrencyMax: r.concurrency_max,
    concurrencyInitial: r.concurrency_initial,
    window: r.window,
    target429Ratio: r.target_429_ratio,
    decreaseFactor: r.decrease_factor,
    timeoutMs: r.timeout_s * 1000,
    maxAttempts: r.max_attempts,
    backoffBaseMs: r.backoff_base_ms,
    backoffMaxMs: r.backoff_max_ms,
    maxRetryAfterMs: r.max_retry_after_s * 1000,
  };
}

export interface LimiterMetrics {
  attempts: number;
  successes: number;
  retries: number;
  rate_limited: number;
  server_errors: number;
  timeouts: number;
  network_errors: number;
  /** Requests whose attempts were all spent. */
  exhausted: number;
  /** Successful calls per second between the first attempt's start and the last one's end. */
  rps: number;
  '429_rate': number;
  avg_latency_ms: number;
  p95_latency_ms: number;
  concurrency: number;
  concurrency_low: number;
  concurrency_high: number;
  in_flight: number;
  queued: number;
  /** Estimated tokens admitted by the tokens/min bucket. */
  tokens: number;
}

export interface Limiter {
  run<T>(fn: (signal: AbortSignal) => Promise<T>, estTokens: number, signal?: AbortSignal): Promise<T>;
  metrics(sinceMs?: number): LimiterMetrics;
}

type Outcome = 'ok' | 'error' | RetryKind;
interface AttemptRecord {
  start: number;
  end: number;
  outcome: Outcome;
}
interface Waiter {
  tokens: number;
  resolve(): void;
  reject(e: unknown): void;
  signal: AbortSignal | undefined;
}

const RECORDS_KEPT = 200_000;

export class RateLimiter implements Limiter {
  private readonly now: () => number;
  /** The injected sleep, or a timer that an abort of `signal` clears (so no timer outlives an aborted wait). */
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly rps: TokenBucket;
  private readonly tpm: TokenBucket;
  private queue: Waiter[] = [];
  private head = 0;
  private pumping = false;
  private inFlight = 0;
  private pausedUntil = 0;
  private conc: number;
  private low: number;
  private high: number;
  private readonly recent: boolean[] = [];
  private recent429 = 0;
  private sinceDecrease = Number.POSITIVE_INFINITY;
  private sinceChange = 0;
  private records: AttemptRecord[] = [];
  private retries = 0;
  private exhausted = 0;
  private tokensAdmitted = 0;

  constructor(private readonly o: LimiterOptions) {
    this.now = o.now ?? (() => performance.timeOrigin + performance.now());
    this.sleep =
      o.sleep ??
      ((ms, signal) =>
        new Promise((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
        }));
    this.random = o.random ?? Math.random;
    const t = this.now();
    this.rps = new TokenBucket(o.requestsPerSecond / 1000, o.burst, t);
    this.tpm = new TokenBucket(o.tokensPerMinute / 60_000, o.tokensPerMinute, t);
    this.conc = this.low = this.high = o.concurrencyInitial;
  }

  get concurrency(): number {
    return this.conc;
  }

  async run<T>(fn: (signal: AbortSignal) => Promise<T>, estTokens: number, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      await this.acquire(Math.max(0, estTokens), signal);
      const ac = new AbortController();
      const onAbort = (): void => ac.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ac.abort(new Error(`timed out after ${this.o.timeoutMs} ms`));
      }, this.o.timeoutMs);
      const start = this.now();
      let failure: { kind: RetryKind; message: string; retryAfterMs: number | undefined };
      try {
        const value = await fn(ac.signal);
        this.finish(start, 'ok');
        return value;
      } catch (e) {
        if (signal?.aborted) {
          this.finish(start, 'error');
          throw signal.reason ?? e;
        }
        if (timedOut)
          failure = { kind: 'timeout', message: `no answer within ${this.o.timeoutMs} ms`, retryAfterMs: undefined };
        else if (e instanceof TransportError)
          failure = { kind: e.kind, message: e.message, retryAfterMs: e.retryAfterMs };
        else {
          this.finish(start, 'error');
          throw e;
        }
        this.finish(start, failure.kind);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
      if (attempt >= this.o.maxAttempts) {
        this.exhausted++;
        throw new RetriesExhaustedError(failure.kind, attempt, `gave up after ${attempt} attempts: ${failure.message}`);
      }
      this.retries++;
      let delay: number;
      if (failure.kind === 'rate-limited' && failure.retryAfterMs !== undefined) {
        delay = Math.min(failure.retryAfterMs, this.o.maxRetryAfterMs);
        this.pausedUntil = Math.max(this.pausedUntil, this.now() + delay);
        this.rps.drain(this.pausedUntil);
      } else {
        if (failure.kind === 'rate-limited') this.rps.drain(this.now());
        delay = this.random() * Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** (attempt - 1));
        // A 503 may say when to come back: not sooner than that (for this request only).
        if (failure.retryAfterMs !== undefined)
          delay = Math.max(delay, Math.min(failure.retryAfterMs, this.o.maxRetryAfterMs));
      }
      await this.sleepUnlessAborted(delay, signal);
    }
  }

  /** Sleep, but reject as soon as the caller aborts (a long Retry-After must not hold up Ctrl-C). */
  private async sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (!signal) return this.sleep(ms);
    signal.throwIfAborted();
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([this.sleep(ms, signal), aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Wait for a concurrency slot and for both buckets, in FIFO order. */
  private acquire(tokens: number, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { tokens, resolve, reject, signal };
      const onAbort = (): void => {
        const i = this.queue.indexOf(w, this.head);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal?.reason);
      };
      w.resolve = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(w);
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.head < this.queue.length && this.inFlight < this.conc) {
        const w = this.queue[this.head]!;
        const now = this.now();
        const wait = Math.max(this.pausedUntil - now, this.rps.wait(1, now), this.tpm.wait(w.tokens, now));
        if (wait > 0) {
          await this.sleep(wait);
          continue;
        }
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        this.rps.take(1);
        this.tpm.take(w.tokens);
        this.tokensAdmitted += w.tokens;
        this.inFlight++;
        w.resolve();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Record an attempt's end, release its slot and adapt concurrency. */
  private finish(start: number, outcome: Outcome): void {
    this.records.push({ start, end: this.now(), outcome });
    if (this.records.length > RECORDS_KEPT * 1.5) this.records = this.records.slice(-RECORDS_KEPT);
    this.inFlight--;
    if (outcome !== 'error') this.adapt(outcome === 'rate-limited');
    void this.pump();
  }

  private adapt(is429: boolean): void {
    this.recent.push(is429);
    if (is429) this.recent429++;
    if (this.recent.length > this.o.window && this.recent.shift()) this.recent429--;
    this.sinceDecrease++;
    this.sinceChange++;
    const ratio = this.recent429 / this.recent.length;
    if (is429 && ratio > this.o.target429Ratio && this.sinceDecrease >= this.conc) {
      const next = Math.max(this.o.concurrencyMin, Math.floor(this.conc * this.o.decreaseFactor));
      this.sinceDecrease = 0;
      this.sinceChange = 0;
      if (next !== this.conc) this.setConcurrency(next, 'decrease');
    } else if (
      !is429 &&
      ratio <= this.o.target429Ratio &&
      this.sinceChange >= this.conc &&
      this.conc < this.o.concurrencyMax
    ) {
      this.sinceChange = 0;
      this.setConcurrency(this.conc + 1, 'increase');
    }
  }

  private setConcurrency(c: number, why: 'increase' | 'decrease'): void {
    this.conc = c;
    this.low = Math.min(this.low, c);
    this.high = Math.max(this.high, c);
    this.o.onConcurrency?.(c, why);
  }

  /** Counters and rates over the attempts that started at or after `sinceMs` (default: all kept). */
  metrics(sinceMs = Number.NEGATIVE_INFINITY): LimiterMetrics {
    const rs = this.records.filter((r) => r.start >= sinceMs);
    const count = (o: Outcome): number => rs.reduce((n, r) => n + (r.outcome === o ? 1 : 0), 0);
    const lat = rs
      .filter((r) => r.outcome === 'ok')
      .map((r) => r.end - r.start)
      .sort((a, b) => a - b);
    const first = rs.reduce((m, r) => Math.min(m, r.start), Number.POSITIVE_INFINITY);
    const last = rs.reduce((m, r) => Math.max(m, r.end), Number.NEGATIVE_INFINITY);
    const span = (last - first) / 1000;
    const rl = count('rate-limited');
    return {
      attempts: rs.length,
      successes: lat.length,
      retries: this.retries,
      rate_limited: rl,
      server_errors: count('server'),
      timeouts: count('timeout'),
      network_errors: count('network'),
      exhausted: this.exhausted,
      rps: span > 0 ? lat.length / span : 0,
      '429_rate': rs.length > 0 ? rl / rs.length : 0,
      avg_latency_ms: lat.length > 0 ? lat.reduce((a, b) => a + b, 0) / lat.length : 0,
      p95_latency_ms: lat.length > 0 ? lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.95) - 1)]! : 0,
      concurrency: this.conc,
      concurrency_low: this.low,
      concurrency_high: this.high,
      in_flight: this.inFlight,
      queued: this.queue.length - this.head,
      tokens: this.tokensAdmitted,
    };
  }
}

export function createRateLimiter(o: LimiterOptions): RateLimiter {
  if (!(o.concurrencyMin <= o.concurrencyInitial && o.concurrencyInitial <= o.concurrencyMax)) {
    throw new Error('internal error: need concurrencyMin <= concurrencyInitial <= concurrencyMax; please report');
  }
  return new RateLimiter(o);
}
