// The thin client (packages/engine/bin/rc1-build.js) against a stand-in server on the workspace's
// socket: a signal that reaches the client in the same event-loop turn as the server's
// 'accepted' must still be forwarded to the build. The client is stopped (SIGSTOP) while
// 'accepted' arrives and SIGTERM is sent, then continued: both wait for it at once, the socket
// first. A client that swapped its signal handlers on 'accepted' lost that SIGTERM (libuv drops
// a signal dispatched to a handler already removed) and went on waiting for the build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestRig } from '../helpers/rig.ts';

function frame(obj: object): Buffer {
  const body = Buffer.from(JSON.stringify(obj), 'utf8');
  const head = Buffer.alloc(5);
  head[0] = 3;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** JSON frames as they arrive on a connection. */
function frames(conn: net.Socket, on: (m: { t: string; [k: string]: unknown }) => void): void {
  let buf = Buffer.alloc(0);
  conn.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 5) {
      const n = buf.readUInt32BE(1);
      if (buf.length < 5 + n) break;
      if (buf[0] === 3) on(JSON.parse(buf.subarray(5, 5 + n).toString('utf8')) as { t: string });
      buf = buf.subarray(5 + n);
    }
  });
}

test("a SIGTERM that reaches the client in the turn it reads 'accepted' is forwarded to the build", async () => {
  const r = new TestRig({ 'rc1.build.ts': 'export default {};\n' });
  const socket = path.join(r.dir, '.rc1', 'server.sock');
  fs.mkdirSync(path.dirname(socket), { recursive: true });
  const token = 'stand-in-token';
  const got: string[] = [];
  let client: import('node:child_process').ChildProcess | null = null;
  const server = net.createServer((conn) => {
    conn.write(frame({ t: 'hello', token }));
    frames(conn, (m) => {
      got.push(m.t === 'signal' ? `signal ${String(m.sig)}` : m.t);
      if (m.t === 'run') {
        void (async () => {
          const pid = client!.pid!;
          process.kill(pid, 'SIGSTOP');
          conn.write(frame({ t: 'accepted' }));
          await sleep(200); // 'accepted' is in the stopped client's socket before the signal
          process.kill(pid, 'SIGTERM');
          await sleep(50);
          process.kill(pid, 'SIGCONT');
        })();
      } else if (m.t === 'signal') {
        // As the server does: the build interrupted, its exit code, the connection ended.
        conn.write(frame({ t: 'exit', code: m.sig === 'SIGINT' ? 130 : 143 }));
        conn.end();
      }
    });
  });
  await new Promise<void>((res) => server.listen(socket, res));
  // This process stands in for the server: alive, its start time not checked.
  fs.writeFileSync(
    path.join(r.dir, '.rc1', 'server.json'),
    JSON.stringify({ socket, pid: process.pid, startTicks: null, token, root: r.dir }),
  );
  try {
    client = r.spawn(['build']);
    let stderr = '';
    client.stderr!.on('data', (d) => {
      stderr += d;
    });
    const code = await Promise.race([
      new Promise<number | null>((res) => client!.on('exit', (c) => res(c))),
      sleep(20_000).then(() => 'hung' as const),
    ]);
    assert.deepEqual(got, ['run', 'signal SIGTERM'], `the client forwards the signal (stderr: ${stderr})`);
    assert.equal(code, 143);
  } finally {
    if (client && client.exitCode === null) client.kill('SIGKILL');
    server.close();
    r.cleanup();
  }
});
