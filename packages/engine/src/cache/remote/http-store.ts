// The Bazel HTTP cache protocol: GET/HEAD/PUT <base>/cas/<sha256> and <base>/ac/<key>, over
// undici (pinned, loaded on the first request, so only by builds that use an HTTP cache): one
// Pool of `maxSockets` keep-alive connections. undici costs about half of node:http's CPU per
// request (bench/remote-cache-throughput.ts: 1 000 small GETs, 16 in flight, in about half the
// time), which is what a restore of many small objects spends. Every request has a connect
// timeout, a timeout for the answer's headers (restarted while a body is still being sent) and one
// between body chunks (timeoutMs each): a server silent for timeoutMs fails the request. Those
// measure gaps, so a server trickling a byte now and then would keep a request alive for ever:
// every request also has a deadline for the whole of it: 2 × timeoutMs (a connect and a wait for
// the headers) plus its bytes (the body sent, then the answer's content-length, 1 GiB when it
// gives none) at MIN_RATE. Downloads are hashed
// on the way and written with O_EXCL. The auth header's value is sent, never put in a message.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher, Pool } from 'undici';
import { type BlobStore, type Body, type Namespace, StoreError } from './store.ts';

/** Objects up to this size are sent and received as one buffer; bigger ones stream. */
const SMALL = 1 << 20;
/** The slowest transfer a request's deadline allows for: 256 KiB/s (1 GiB in about 68 min). */
export const MIN_RATE = 256 * 1024;
/** What the deadline assumes of an answer without content-length. */
const UNKNOWN_LENGTH = 1 << 30;

export interface HttpStoreOptions {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxSockets: number;
}

/** The URL as it may be printed: no user name or password. */
export function describeUrl(u: string): string {
  try {
    const url = new URL(u);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}

type Answer = Dispatcher.ResponseData;

/** A failure that says what happened in words (undici's own error names are not for users). */
function describeError(e: unknown, timeoutMs: number): Error {
  const err = e as Error & { code?: string };
  switch (err.code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new StoreError(`no answer within ${timeoutMs} ms`);
    case 'UND_ERR_SOCKET':
      return new StoreError(`connection closed by the server (${err.message})`);
    case 'UND_ERR_ABORTED':
      return err.cause instanceof Error ? err.cause : err;
    default:
      return err;
  }
}

export class HttpStore implements BlobStore {
  readonly describe: string;
  private readonly base: URL;
  /** The base path with a trailing slash, e.g. '/rc1/'. */
  private readonly prefix: string;
  private readonly headers: Record<string, string>;
  private pool: Promise<Pool> | null = null;
  /** close() was called: every request from then on fails (none opens a new pool). */
  private closed = false;

  constructor(private readonly o: HttpStoreOptions) {
    this.base = new URL(o.url.endsWith('/') ? o.url : `${o.url}/`);
    this.describe = describeUrl(o.url);
    this.prefix = this.base.pathname;
    this.headers = { ...o.headers };
    if (this.base.username || this.base.password) {
      this.headers.authorization ??= `Basic ${Buffer.from(`${decodeURIComponent(this.base.username)}:${decodeURIComponent(this.base.password)}`).toString('base64')}`;
    }
  }

  private connect(): Promise<Pool> {
    if (this.closed) return Promise.reject(new StoreError('the remote cache connection is closed'));
    this.pool ??= import('undici').then(
      ({ Pool }) =>
        new Pool(this.base.origin, {
          connections: this.o.maxSockets,
          pipelining: 1,
          connectTimeout: this.o.timeoutMs,
          headersTimeout: this.o.timeoutMs,
          bodyTimeout: this.o.timeoutMs,
          keepAliveTimeout: 30_000,
        }),
    );
    return this.pool;
  }

  /**
   * One request. A keep-alive connection the server closed while it was idle fails at once
   * (reset, "other side closed"): such a request is sent once more, as every request here is
   * idempotent and every body can be read again.
   */
  private async request(method: 'GET' | 'HEAD' | 'PUT', ns: Namespace, key: string, body?: Body): Promise<Answer> {
    const pool = await this.connect();
    try {
      return await this.send(pool, method, ns, key, body);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET' && code !== 'EPIPE')
        throw describeError(e, this.o.timeoutMs);
      try {
        return await this.send(pool, method, ns, key, body);
      } catch (e2) {
        throw describeError(e2, this.o.timeoutMs);
      }
    }
  }

  /**
   * One request under its deadline (see the top of this file): 2 × timeoutMs plus the body's bytes at
   * MIN_RATE until the answer's headers, then plus the answer's length; cleared once its body is
   * read or dropped.
   */
  private async send(pool: Pool, method: string, ns: Namespace, key: string, body?: Body): Promise<Answer> {
    const sent = !body ? 0 : Buffer.isBuffer(body) ? body.length : body.size;
    const t0 = Date.now();
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const arm = (bytes: number): void => {
      clearTimeout(timer);
      const ms = 2 * this.o.timeoutMs + Math.ceil((bytes / MIN_RATE) * 1000);
      timer = setTimeout(
        () =>
          ac.abort(
            new StoreError(
              `${method} /${ns}/${key.slice(0, 12)}… took longer than its deadline of ${ms} ms (2 × timeoutMs ${this.o.timeoutMs} + ${bytes} bytes at ${MIN_RATE / 1024} KiB/s)`,
            ),
          ),
        Math.max(0, t0 + ms - Date.now()),
      );
      timer.unref();
    };
    arm(sent);
    let res: Answer;
    try {
      res = await this.dispatch(pool, method, ns, key, ac.signal, body);
    } catch (e) {
      clearTimeout(timer);
      throw e;
    }
    const header = res.headers['content-length'];
    const length = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : UNKNOWN_LENGTH;
    arm(sent + (method === 'HEAD' ? 0 : length));
    res.body.once('close', () => clearTimeout(timer));
    return res;
  }

  private async dispatch(
    pool: Pool,
    method: string,
    ns: Namespace,
    key: string,
    signal: AbortSignal,
    body?: Body,
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...this.headers };
    const path = `${this.prefix}${ns}/${key}`;
    if (!body) return await pool.request({ method: method as Dispatcher.HttpMethod, path, headers, signal });
    headers['content-type'] = 'application/octet-stream';
    if (Buffer.isBuffer(body)) return await pool.request({ method: 'PUT', path, headers, body, signal });
    if (body.size <= SMALL) {
      const data = fs.readFileSync(body.file);
      return await pool.request({ method: 'PUT', path, headers, body: data, signal });
    }
    // A big file streams; undici restarts its headers timeout whenever the socket takes more of
    // the body, so a server that stops taking it fails the request after timeoutMs.
    headers['content-length'] = String(body.size);
    const src = fs.createReadStream(body.file, { highWaterMark: 1 << 16 });
    try {
      return await pool.request({ method: 'PUT', path, headers, body: src, signal });
    } finally {
      src.destroy();
    }
  }

  private async unexpected(method: string, ns: Namespace, key: string, res: Answer): Promise<StoreError> {
    await res.body.dump().catch(() => undefined);
    const hint =
      res.statusCode === 401 || res.statusCode === 403
        ? ' (check remoteCache.authHeader and its environment variable)'
        : '';
    const { STATUS_CODES } = await import('node:http');
    const text = STATUS_CODES[res.statusCode];
    return new StoreError(
      `${method} /${ns}/${key.slice(0, 12)}… answered HTTP ${res.statusCode}${text ? ` ${text}` : ''}${hint}`,
    );
  }

  async download(ns: Namespace, key: string, dest: string): Promise<{ sha256: string; size: number } | null> {
    const res = await this.request('GET', ns, key);
    if (res.statusCode === 404) {
      await res.body.dump();
      return null;
    }
    if (res.statusCode !== 200) throw await this.unexpected('GET', ns, key, res);
    const header = res.headers['content-length'];
    const length = header === undefined ? Number.NaN : Number(header);
    try {
      if (length <= SMALL) {
        // Small objects (most of a build's): read whole, hash, one write; no stream pipeline.
        const body = Buffer.from(await res.body.arrayBuffer());
        if (body.length !== length)
          throw new StoreError(`GET /${ns}/${key.slice(0, 12)}… ended after ${body.length} of ${length} bytes`);
        fs.writeFileSync(dest, body, { flag: 'wx' });
        return { sha256: createHash('sha256').update(body).digest('hex'), size: body.length };
      }
      const h = createHash('sha256');
      let size = 0;
      await pipeline(
        res.body,
        async function* (src: AsyncIterable<Buffer>) {
          for await (const chunk of src) {
            h.update(chunk);
            size += chunk.length;
            yield chunk;
          }
        },
        fs.createWriteStream(dest, { flags: 'wx' }),
      );
      if (!Number.isNaN(length) && length !== size)
        throw new StoreError(`GET /${ns}/${key.slice(0, 12)}… ended after ${size} of ${length} bytes`);
      return { sha256: h.digest('hex'), size };
    } catch (e) {
      if (e instanceof StoreError || (e as { code?: string }).code === 'EEXIST') throw e;
      throw describeError(e, this.o.timeoutMs);
    }
  }

  async getBytes(ns: Namespace, key: string): Promise<Buffer | null> {
    const res = await this.request('GET', ns, key);
    if (res.statusCode === 404) {
      await res.body.dump();
      return null;
    }
    if (res.statusCode !== 200) throw await this.unexpected('GET', ns, key, res);
    try {
      return Buffer.from(await res.body.arrayBuffer());
    } catch (e) {
      throw describeError(e, this.o.timeoutMs);
    }
  }

  async has(ns: Namespace, key: string): Promise<boolean> {
    const res = await this.request('HEAD', ns, key);
    await res.body.dump();
    if (res.statusCode === 404) return false;
    if (res.statusCode === 200) return true;
    throw await this.unexpected('HEAD', ns, key, res);
  }

  async upload(ns: Namespace, key: string, body: Body): Promise<'stored' | 'exists'> {
    const res = await this.request('PUT', ns, key, body);
    if (res.statusCode === 200 || res.statusCode === 201 || res.statusCode === 204) {
      await res.body.dump();
      return 'stored';
    }
    if (res.statusCode === 412) {
      await res.body.dump();
      return 'exists';
    }
    throw await this.unexpected('PUT', ns, key, res);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    // a pool that never opened (undici failed to load) has nothing to destroy
    if (pool) await (await pool.catch(() => null))?.destroy();
  }
}
