// A remote cache lookup that fails part-way (packages/engine/src/cache/remote/remote-cache.ts) and
// an HttpStore once closed (http-store.ts): no download outlives the lookup, no request reaches
// the server after close().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { gcCache, sizeBound } from '../../packages/engine/src/cache/cache-gc.ts';
import { OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { HttpStore } from '../../packages/engine/src/cache/remote/http-store.ts';
import { RemoteCache } from '../../packages/engine/src/cache/remote/remote-cache.ts';
import {
  Signer,
  type TrustedKey,
  generateSigningKey,
  keyIdOf,
  parsePrivateKey,
} from '../../packages/engine/src/cache/remote/signing.ts';
import type { BlobStore } from '../../packages/engine/src/cache/remote/store.ts';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const KEY = 'f'.repeat(64);

/** A signed action entry for KEY with one output file per blob, and the key that trusts it. */
function signedEntry(blobs: Buffer[]): { doc: Buffer; trusted: Map<string, TrustedKey> } {
  const priv = parsePrivateKey(generateSigningKey().privateKey);
  const pub = createPublicKey(priv);
  const entry = {
    target: 't',
    key: KEY,
    result: 'ok',
    rule: { name: 'r', version: 1 },
    outputs: blobs.map((b, i) => ({ path: `o${i}`, sha256: sha(b), size: b.length })),
  };
  return {
    doc: Buffer.from(JSON.stringify(new Signer(priv).sign(entry as never))),
    trusted: new Map([[keyIdOf(pub), { name: 'ci', id: keyIdOf(pub), key: pub }]]),
  };
}

const outputsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `o${i}`, dir: false }));

function objectsOnDisk(cacheDir: string): number {
  const root = path.join(cacheDir, 'objects');
  if (!fs.existsSync(root)) return 0;
  return fs.readdirSync(root).flatMap((d) => fs.readdirSync(path.join(root, d)).filter((f) => !f.includes('.tmp')))
    .length;
}

test("a lookup whose first download fails returns only once its other downloads ended, and starts none of those still queued: the cap's walk counts every object", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-lookup-end-'));
  try {
    const local = new OutputCache(path.join(dir, 'cache'));
    fs.mkdirSync(path.join(dir, 'cache', 'objects'), { recursive: true });
    const blobs = Array.from({ length: 8 }, (_, i) => Buffer.alloc(1000, i));
    const { doc, trusted } = signedEntry(blobs);
    let started = 0;
    const store: BlobStore = {
      describe: 'test store',
      getBytes: async () => doc,
      has: async () => false,
      upload: async () => 'stored',
      close: async () => {},
      download: async (_ns, key, dest) => {
        const i = started++;
        if (i === 0) throw new Error('HTTP 500'); // the first object fails at once
        await new Promise((r) => setTimeout(r, 100 * i)); // the others are slow
        const b = blobs.find((x) => sha(x) === key)!;
        fs.writeFileSync(dest, b, { flag: 'wx' });
        return { sha256: key, size: b.length };
      },
    };
    const rc = new RemoteCache(store, local, 'read', trusted, null, dir, 2);
    const warnings: string[] = [];
    rc.attach((e) => {
      if (e.event === 'warning') warnings.push(e.message);
    });
    assert.equal(await rc.lookup('t', KEY, outputsOf(8)), null);
    assert.equal(started, 2, 'the one in flight beside the failed one, and no other');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /unavailable \(HTTP 500\)/);
    const r = gcCache(local, { maxBytes: 1e9 }); // the cap's walk after the build
    await rc.close();
    await new Promise((res) => setTimeout(res, 400));
    const n = objectsOnDisk(local.dir);
    assert.equal(started, 2, 'nothing started after the lookup returned');
    assert.ok((sizeBound(local.dir) ?? 0) >= n * 1000, `bound ${sizeBound(local.dir)}, walk ${r.after}, ${n} objects`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an HttpStore sends nothing once closed: a request after close() fails at once, and no new connection is opened', async () => {
  let requests = 0;
  const srv = http.createServer((_req, res) => {
    requests++;
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const store = new HttpStore({ url: `http://127.0.0.1:${port}/c`, headers: {}, timeoutMs: 1000, maxSockets: 2 });
  try {
    assert.equal(await store.has('cas', 'a'.repeat(64)), false);
    assert.equal(requests, 1);
    await store.close();
    await assert.rejects(store.has('cas', 'a'.repeat(64)), /closed/);
    await assert.rejects(store.getBytes('ac', KEY), /closed/);
    assert.equal(requests, 1, 'no request after close()');
    await store.close(); // twice is fine
  } finally {
    srv.closeAllConnections();
    srv.close();
  }
});

test('a lookup against a server that fails one object and then hangs ends within the request timeout; nothing reaches the server after close()', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-lookup-end-'));
  const blobs = Array.from({ length: 8 }, (_, i) => Buffer.from(`o${i}`));
  const { doc, trusted } = signedEntry(blobs);
  let cas = 0;
  const srv = http.createServer((req, res) => {
    if (req.url!.includes('/ac/')) return void res.end(doc);
    if (cas++ === 0) {
      res.statusCode = 500;
      return void res.end();
    }
    // the others hang: no answer
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const store = new HttpStore({ url: `http://127.0.0.1:${port}/c`, headers: {}, timeoutMs: 500, maxSockets: 2 });
  try {
    const rc = new RemoteCache(store, new OutputCache(path.join(dir, 'cache')), 'read', trusted, null, dir, 2);
    rc.attach(() => {});
    assert.equal(await rc.lookup('t', KEY, outputsOf(8)), null);
    await rc.close();
    const atClose = cas;
    assert.equal(atClose, 2, 'the failed request and the one in flight beside it');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(cas - atClose, 0, '/cas requests after close()');
  } finally {
    srv.closeAllConnections();
    srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("HttpStore.close() resolves when its connection pool never opened (the client failed to load), so the build's cleanup after it still runs", async () => {
  const store = new HttpStore({ url: 'http://127.0.0.1:9/c', headers: {}, timeoutMs: 1000, maxSockets: 2 });
  const failed = Promise.reject(new Error('Cannot find package undici'));
  failed.catch(() => {});
  (store as unknown as { pool: Promise<unknown> }).pool = failed; // what connect() holds when import('undici') rejected
  await store.close();
  await assert.rejects(store.has('cas', 'a'.repeat(64)), /closed/);
});
