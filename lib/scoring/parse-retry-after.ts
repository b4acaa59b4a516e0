// How long a 429 (or 503) asks the client to wait: the precise `retry-after-ms` header some
// providers send, else `Retry-After` as delta-seconds or as an HTTP-date (RFC 9110 §10.2.3).
/** Retry-After as milliseconds from now: `retry-after-ms`, then `Retry-After` in seconds or as an HTTP-date. */
export function parseRetryAfter(headers: { get(name: string): string | null }, nowMs: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.max(0, Number(ms));
  const v = headers.get('retry-after');
  if (v === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.max(0, Number(v) * 1000);
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
