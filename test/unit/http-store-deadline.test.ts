// The whole-request deadline of the HTTP cache client (packages/engine/src/cache/remote/http-store.ts):
// undici's timeouts measure gaps between bytes, so a server trickling bytes never trips them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { HttpStore } from '../../packages/engine/src/cache/remote/http-store.ts';

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => void }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/c`,
    close: () => {
      srv.closeAllConnections();
      srv.close();
    },
  };
}

test('a server trickling one byte every 300 ms (never silent for timeoutMs) fails the request at its deadline, saying so', async () => {
  const srv = await serve((_req, res) => {
    res.writeHead(200, { 'content-length': '20' });
    let n = 0;
    const t = setInterval(() => {
      if (res.destroyed) return clearInterval(t);
      res.write('x');
      if (++n === 20) {
        clearInterval(t);
        res.end();
      }
    }, 300);
  });
  const s = new HttpStore({ url: srv.url, headers: {}, timeoutMs: 1000, maxSockets: 2 });
  try {
    const t0 = Date.now();
    const e = await s.getBytes('ac', 'a'.repeat(64)).then(
      () => null,
      (x: Error) => x,
    );
    const ms = Date.now() - t0;
    assert.ok(e, 'the request failed');
    assert.match(
      e.message,
      /GET \/ac\/aaaaaaaaaaaa… took longer than its deadline of 2001 ms \(2 × timeoutMs 1000 \+ 20 bytes at 256 KiB\/s\)/,
    );
    assert.ok(ms < 3500, `failed after ${ms} ms (the server would take 6 s)`);
    // a download too
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-deadline-'));
    try {
      await assert.rejects(s.download('cas', 'b'.repeat(64), path.join(dir, 'x')), /took longer than its deadline/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await s.close();
    srv.close();
  }
});

test('an answer at a normal rate is not cut by the deadline: a 4 MiB body sent in 64 KiB pieces over about 1.3 s with timeoutMs 1000', async () => {
  const body = Buffer.alloc(4 << 20, 7);
  const srv = await serve((_req, res) => {
    res.writeHead(200, { 'content-length': String(body.length) });
    let off = 0;
    const t = setInterval(() => {
      if (res.destroyed) return clearInterval(t);
      res.write(body.subarray(off, off + (1 << 16)));
      off += 1 << 16;
      if (off >= body.length) {
        clearInterval(t);
        res.end();
      }
    }, 20);
  });
  const s = new HttpStore({ url: srv.url, headers: {}, timeoutMs: 1000, maxSockets: 2 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-deadline-'));
  try {
    const got = await s.download('cas', 'c'.repeat(64), path.join(dir, 'x'));
    assert.equal(got?.size, body.length);
  } finally {
    await s.close();
    srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
