// A token bucket in milliseconds: `perMs` tokens accrue per millisecond up to `capacity`; the
// rate limiter keeps one for requests per second and one for tokens per minute. Time is passed
// in (the limiter's injectable clock), so the bucket itself never reads a clock.
export class TokenBucket {
  private tokens: number;
  constructor(
    private readonly perMs: number,
    readonly capacity: number,
    private last: number,
  ) {
    this.tokens = capacity;
  }
  private refill(now: number): void {
    if (now <= this.last) return;
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
  }
  /** Empty the bucket and accrue nothing before `until`: after a 429 the saved-up burst is not spent at once. */
  drain(until: number): void {
    this.tokens = 0;
    this.last = Math.max(this.last, until);
  }
  /** Milliseconds until n tokens are there (0: now). */
  wait(n: number, now: number): number {
    this.refill(now);
    const need = Math.min(n, this.capacity) - this.tokens;
    return need <= 0 ? 0 : Math.ceil(need / this.perMs);
  }
  take(n: number): void {
    this.tokens -= Math.min(n, this.capacity);
  }
}
