// A served command's output on its connection (server/requests.ts): the lines a command writes in
// one turn of the event loop leave in one socket write, in order, and everything written reaches
// the client before its exit frame.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ServerSide, serveConnection } from '../../packages/engine/src/server/requests.ts';
import {
  Deframer,
  FRAME_JSON,
  FRAME_STDOUT,
  engineIdentity,
  frame,
} from '../../packages/engine/src/server/server-files.ts';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test("a served command's lines written in one turn leave in one socket write, in order, before its exit", async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-served-out-'));
  const dist = path.join(tmp, 'dist');
  fs.mkdirSync(dist);
  fs.writeFileSync(path.join(dist, 'cli.js'), '');
  const identity = engineIdentity(dist);
  const root = process.cwd();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  /** Socket writes (one per _write or _writev call) while each burst of lines was written. */
  const perBurst: number[] = [];
  let writes = 0;
  const side: ServerSide = {
    root,
    identity,
    distDir: dist,
    baseEnv: { ...process.env },
    rootOf: () => root,
    main: async (_argv, io) => {
      for (let burst = 0; burst < 3; burst++) {
        const before = writes;
        for (let i = 0; i < 50; i++) io.out(`line ${burst}.${i}\n`);
        await turn();
        await turn();
        perBurst.push(writes - before);
      }
      io.out('last\n'); // written in the command's last turn: still sent before the exit frame
      return 0;
    },
    stopping: () => null,
    busy: () => false,
    shutdown: () => {},
    status: () => ({}),
    started: () => {},
    ran: () => {},
    ended: () => {},
    after: () => {},
    takeWorker: () => undefined,
  };
  const sock = path.join(tmp, 's.sock');
  const server = net.createServer((conn) => {
    const s = conn as unknown as {
      _write: (...a: unknown[]) => void;
      _writev: (...a: unknown[]) => void;
    };
    const w = s._write.bind(conn);
    const wv = s._writev.bind(conn);
    s._write = (...a) => {
      writes++;
      w(...a);
    };
    s._writev = (...a) => {
      writes++;
      wv(...a);
    };
    serveConnection(conn, 'token', side);
  });
  await new Promise<void>((r) => server.listen(sock, r));
  try {
    const got = await new Promise<{ out: string; exit: number | null }>((resolve, reject) => {
      const c = net.connect(sock);
      let out = '';
      let exit: number | null = null;
      const de = new Deframer((type, payload) => {
        if (type === FRAME_STDOUT) out += payload.toString('utf8');
        else if (type === FRAME_JSON) {
          const m = JSON.parse(payload.toString('utf8')) as { t: string; code?: number };
          if (m.t === 'hello')
            c.write(
              frame(
                FRAME_JSON,
                JSON.stringify({
                  t: 'run',
                  argv: [],
                  cwd: root,
                  env,
                  stdoutTTY: false,
                  stderrTTY: false,
                  columns: null,
                  umask: process.umask(),
                  identity,
                }),
              ),
            );
          else if (m.t === 'exit') exit = m.code ?? null;
          else if (m.t === 'refused') reject(new Error(`refused: ${JSON.stringify(m)}`));
        }
      });
      c.on('data', (d: Buffer) => de.push(d));
      c.on('close', () => resolve({ out, exit }));
      c.on('error', reject);
    });
    const want: string[] = [];
    for (let burst = 0; burst < 3; burst++) for (let i = 0; i < 50; i++) want.push(`line ${burst}.${i}`);
    want.push('last');
    assert.equal(got.out, `${want.join('\n')}\n`);
    assert.equal(got.exit, 0);
    assert.deepEqual(perBurst, [1, 1, 1], `socket writes per burst of 50 lines: ${perBurst.join(', ')}`);
  } finally {
    server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
