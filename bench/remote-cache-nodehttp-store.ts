// The baseline for bench/remote-cache-throughput.ts: the engine's HTTP cache client as it was
// before it moved to undici (commit 1ff8f1e's packages/engine/src/cache/remote/http-store.ts,
// unchanged but for its imports and class name), so both clients are measured in the same run.
// The Bazel HTTP cache protocol over node:http(s): GET/HEAD/PUT <base>/cas/<sha256> and
// <base>/ac/<key>. One keep-alive agent with at most `maxSockets` connections; every request has
// an idle timeout (no byte sent or received for timeoutMs ends it). Downloads stream to a file
// and are hashed on the way. The auth header's value is sent, never put in a message.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import type * as https from 'node:https';
import { createRequire } from 'node:module';
import { pipeline } from 'node:stream/promises';
import { describeUrl } from '../packages/engine/src/cache/remote/http-store.ts';
import { type BlobStore, type Body, type Namespace, StoreError } from '../packages/engine/src/cache/remote/store.ts';

/** Objects up to this size are sent and received as one buffer; bigger ones stream. */
const SMALL = 1 << 20;

export interface HttpStoreOptions {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxSockets: number;
}

export class NodeHttpStore implements BlobStore {
  readonly describe: string;
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly mod: typeof http | typeof https;
  private readonly headers: Record<string, string>;

  constructor(private readonly o: HttpStoreOptions) {
    this.base = new URL(o.url.endsWith('/') ? o.url : `${o.url}/`);
    this.describe = describeUrl(o.url);
    // node:http and node:https (~5–10 ms to load) only for a build that has a remote cache.
    const load = createRequire(import.meta.url);
    this.mod =
      this.base.protocol === 'https:' ? (load('node:https') as typeof https) : (load('node:http') as typeof http);
    this.agent = new this.mod.Agent({ keepAlive: true, maxSockets: o.maxSockets, maxFreeSockets: o.maxSockets });
    this.headers = { ...o.headers };
    if (this.base.username || this.base.password) {
      this.headers.authorization ??= `Basic ${Buffer.from(`${decodeURIComponent(this.base.username)}:${decodeURIComponent(this.base.password)}`).toString('base64')}`;
    }
  }

  /**
   * One request. A keep-alive connection the server closed while it was idle fails at once
   * (ECONNRESET, "socket hang up"): such a request is sent once more on a new connection, as
   * every request here is idempotent.
   */
  private async request(method: string, ns: Namespace, key: string, body?: Body): Promise<http.IncomingMessage> {
    try {
      return await this.send(method, ns, key, body);
    } catch (e) {
      if (!(e as { reused?: boolean }).reused) throw e;
      return await this.send(method, ns, key, body);
    }
  }

  private send(method: string, ns: Namespace, key: string, body?: Body): Promise<http.IncomingMessage> {
    const url = new URL(`${ns}/${key}`, this.base);
    url.username = '';
    url.password = '';
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...this.headers };
      if (body) {
        headers['content-type'] = 'application/octet-stream';
        headers['content-length'] = Buffer.isBuffer(body) ? body.length : body.size;
      }
      const req = this.mod.request(url, { method, agent: this.agent, headers }, resolve);
      req.setTimeout(this.o.timeoutMs, () => req.destroy(new StoreError(`no answer within ${this.o.timeoutMs} ms`)));
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (req.reusedSocket && (e.code === 'ECONNRESET' || e.message === 'socket hang up'))
          Object.assign(e, { reused: true });
        reject(e);
      });
      if (!body) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else if (body.size <= SMALL) {
        let data: Buffer;
        try {
          data = fs.readFileSync(body.file);
        } catch (e) {
          req.destroy(e as Error);
          return;
        }
        req.end(data);
      } else {
        const src = fs.createReadStream(body.file);
        src.on('error', (e) => req.destroy(e));
        src.pipe(req);
      }
    });
  }

  private unexpected(method: string, ns: Namespace, key: string, res: http.IncomingMessage): StoreError {
    res.resume();
    const hint =
      res.statusCode === 401 || res.statusCode === 403
        ? ' (check remoteCache.authHeader and its environment variable)'
        : '';
    return new StoreError(
      `${method} /${ns}/${key.slice(0, 12)}… answered HTTP ${res.statusCode}${res.statusMessage ? ` ${res.statusMessage}` : ''}${hint}`,
    );
  }

  async download(ns: Namespace, key: string, dest: string): Promise<{ sha256: string; size: number } | null> {
    const res = await this.request('GET', ns, key);
    if (res.statusCode === 404) {
      res.resume();
      return null;
    }
    if (res.statusCode !== 200) throw this.unexpected('GET', ns, key, res);
    const length = Number(res.headers['content-length'] ?? Number.NaN);
    if (length <= SMALL) {
      // Small objects (most of a build's): read whole, hash, one write; no stream pipeline.
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      if (body.length !== length)
        throw new StoreError(`GET /${ns}/${key.slice(0, 12)}… ended after ${body.length} of ${length} bytes`);
      fs.writeFileSync(dest, body, { flag: 'wx' });
      return { sha256: createHash('sha256').update(body).digest('hex'), size: body.length };
    }
    const h = createHash('sha256');
    let size = 0;
    await pipeline(
      res,
      async function* (src: AsyncIterable<Buffer>) {
        for await (const chunk of src) {
          h.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      },
      fs.createWriteStream(dest, { flags: 'wx' }),
    );
    if (res.headers['content-length'] !== undefined && Number(res.headers['content-length']) !== size) {
      throw new StoreError(
        `GET /${ns}/${key.slice(0, 12)}… ended after ${size} of ${res.headers['content-length']} bytes`,
      );
    }
    return { sha256: h.digest('hex'), size };
  }

  async getBytes(ns: Namespace, key: string): Promise<Buffer | null> {
    const res = await this.request('GET', ns, key);
    if (res.statusCode === 404) {
      res.resume();
      return null;
    }
    if (res.statusCode !== 200) throw this.unexpected('GET', ns, key, res);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  async has(ns: Namespace, key: string): Promise<boolean> {
    const res = await this.request('HEAD', ns, key);
    res.resume();
    if (res.statusCode === 404) return false;
    if (res.statusCode === 200) return true;
    throw this.unexpected('HEAD', ns, key, res);
  }

  async upload(ns: Namespace, key: string, body: Body): Promise<'stored' | 'exists'> {
    const res = await this.request('PUT', ns, key, body);
    res.resume();
    if (res.statusCode === 200 || res.statusCode === 201 || res.statusCode === 204) return 'stored';
    if (res.statusCode === 412) return 'exists';
    throw this.unexpected('PUT', ns, key, res);
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}
