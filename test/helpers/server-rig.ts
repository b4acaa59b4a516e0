// The resident server's test workspace and helpers (server.test.ts, server-native-client.test.ts):
//   src/s.txt --> a --> b (copy chain, ledgers the pid that ran it)
//   (no inputs) --> hold (waits for a go file)     (no inputs) --> fail (exit 1)
//   src/s.txt --> g (gate, fails when gate.min is above the length)
//   (no inputs) --> env (writes SECRET_X as its rule sees it)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI, REPO, TestRig } from './rig.ts';
import { procStat } from '../../packages/engine/src/state/process-identity.ts';

export const PIPELINE = `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['b'], freeFormConfig: ['x'],
  commands: { whoami: { module: 'commands/whoami.ts', summary: 'prints the pid it runs in' } },
  targets: [
    defineTarget({ name: 'a', rule: 'rules/copy.ts', inputs: { src: 'src/s.txt' }, outputs: ['out/a.txt'] }),
    defineTarget({ name: 'b', rule: 'rules/copy.ts', inputs: { src: target('a') }, outputs: ['out/b.txt'] }),
    defineTarget({ name: 'hold', rule: 'rules/hold.ts', inputs: {}, outputs: ['out/hold.txt'] }),
    defineTarget({ name: 'fail', rule: 'rules/fail.ts', inputs: {}, outputs: ['out/fail.txt'] }),
    defineGate({ name: 'g', rule: 'rules/gate.ts', inputs: { src: 'src/s.txt' }, outputs: ['reports/g.json'], report: 'reports/g.json', params: ['gate.min'] }),
    defineTarget({ name: 'env', rule: 'rules/env.ts', inputs: {}, outputs: ['out/env.txt'] }),
  ],
});
`;

export const COPY = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'copy', version: 1, run(ctx) {
  if (process.env.LEDGER) fs.appendFileSync(process.env.LEDGER, ctx.target + ' ' + process.pid + '\\n');
  fs.writeFileSync(ctx.output('out/' + ctx.target + '.txt'), fs.readFileSync(ctx.inputs('src')[0], 'utf8') + '+' + ctx.target);
  return { summary: 'copied' };
}});
`;

export const HOLD = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'hold', version: 1, async run(ctx) {
  // Written whole, then renamed: a test that sees the file can read the pid in it.
  fs.writeFileSync(process.env.HOLD_ENTERED + '.tmp', String(process.pid));
  fs.renameSync(process.env.HOLD_ENTERED + '.tmp', process.env.HOLD_ENTERED);
  for (let i = 0; i < 1500 && !fs.existsSync(process.env.HOLD_GO) && !ctx.signal.aborted; i++) await new Promise((r) => setTimeout(r, 20));
  if (ctx.signal.aborted) fs.writeFileSync(process.env.HOLD_ENTERED + '.aborted', 'aborted');
  fs.writeFileSync(ctx.output('out/hold.txt'), 'held');
}});
`;

export const FAIL = `import { defineRule } from 'rc1-build';
export default defineRule({ name: 'fail', version: 1, run() { throw new Error('this rule fails on purpose'); } });
`;

export const GATE = `import { defineRule, check } from 'rc1-build';
import { z } from 'zod';
import * as fs from 'node:fs';
export default defineRule({ name: 'gate', version: 1,
  params: z.object({ gate: z.object({ min: z.number() }).strict() }),
  run(ctx) {
    const n = fs.readFileSync(ctx.inputs('src')[0], 'utf8').length;
    return { checks: [check('length', n, '>=', ctx.params.gate.min, 'lower gate.min')] };
  },
});
`;

// Reads the variable when its module loads and when it runs: a worker kept across requests would show the first.
export const ENV = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
const AT_LOAD = process.env.SECRET_X ?? '(unset)';
export default defineRule({ name: 'env', version: 1, run(ctx) {
  fs.writeFileSync(ctx.output('out/env.txt'), 'SECRET_X=' + (process.env.SECRET_X ?? '(unset)') + ' at load ' + AT_LOAD);
}});
`;

export const WHOAMI = `import { defineCommand } from 'rc1-build';
export default defineCommand((args, ctx) => { ctx.out(process.pid + '\\n'); return 0; });
`;

export function serverRig(): TestRig {
  return new TestRig({
    'commands/whoami.ts': WHOAMI,
    'rc1.build.ts': PIPELINE,
    'rules/copy.ts': COPY,
    'rules/hold.ts': HOLD,
    'rules/fail.ts': FAIL,
    'rules/gate.ts': GATE,
    'rules/env.ts': ENV,
    'configs/default.yaml': 'x: 1\ngate:\n  min: 1000\n',
    'src/s.txt': 'source\n',
  });
}

export interface Info {
  pid: number;
  socket: string;
}

export const info = (r: TestRig): Info | null => {
  try {
    return JSON.parse(r.read('.rc1/server.json')) as Info;
  } catch {
    return null;
  }
};

/** Whether a pid runs (a zombie, exited but not reaped by its new parent, does not). */
export const alive = (pid: number): boolean => {
  const st = procStat(pid);
  return st !== null && st.state !== 'Z' && st.state !== 'X';
};

/** The commands the server says it served (rc1-build server status). */
export function servedCount(r: TestRig): number {
  const st = r.run(['server', 'status']);
  const m = /commands served: (\d+)/.exec(st.stdout);
  assert.ok(m, `server status: ${st.stdout}${st.stderr}`);
  return Number(m[1]);
}

export async function waitFor(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Starts the server of a rig (with `env` as the starting shell's), runs `body`, and always stops it. */
export async function withServer(
  r: TestRig,
  body: (pid: number) => Promise<void>,
  opts: { env?: Record<string, string>; args?: string[]; cli?: string } = {},
): Promise<void> {
  const cli = opts.cli ?? CLI;
  // A dry run of every target, in-process: the pipeline and the rules' params are read and cached
  // (the server never loads them on its main thread; the first command after they change runs in-process).
  const prime = spawnSync(process.execPath, [cli, '-n', 'a', 'b', 'hold', 'fail', 'g', 'env'], {
    cwd: r.dir,
    encoding: 'utf8',
    env: { ...process.env, RC1_NO_SERVER: '1' },
  });
  assert.equal(prime.status, 0, prime.stdout + prime.stderr);
  const start = spawnSync(process.execPath, [cli, 'server', 'start', ...(opts.args ?? [])], {
    cwd: r.dir,
    encoding: 'utf8',
    env: { ...process.env, ...opts.env },
  });
  assert.equal(start.status, 0, start.stdout + start.stderr);
  const pid = info(r)!.pid;
  try {
    await body(pid);
  } finally {
    spawnSync(process.execPath, [cli, 'server', 'stop'], { cwd: r.dir, env: process.env });
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    r.cleanup();
  }
}

export const mask = (s: string): string => s.replace(/\d+(\.\d+)?\s?m?s\b/g, 'T');

/** Pids in the ledger, by target, since the last call. */
export function ledgerPids(file: string): Map<string, number> {
  const m = new Map<string, number>();
  if (!fs.existsSync(file)) return m;
  for (const l of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [t, p] = l.split(' ');
    m.set(t!, Number(p));
  }
  fs.rmSync(file);
  return m;
}

/** A private copy of the engine (bin, dist, src), so that changing its dist touches no other test's. */
export function engineCopy(): { eng: string; cli: string } {
  const eng = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-engine-copy-'));
  const src = path.join(REPO, 'packages', 'engine');
  for (const d of ['bin', 'dist', 'src', 'package.json'])
    fs.cpSync(path.join(src, d), path.join(eng, d), { recursive: true });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(eng, 'node_modules'));
  return { eng, cli: path.join(eng, 'bin', 'rc1-build.js') };
}

/** A listener on `socket` that answers every connection as a server would ("ok", exit 0) and keeps every byte it is sent. */
export async function fakeServer(
  socket: string,
  hello: object | null,
): Promise<{ got: () => string; close: () => Promise<void> }> {
  const net = await import('node:net');
  const chunks: Buffer[] = [];
  const conns = new Set<import('node:net').Socket>();
  const frameOf = (type: number, s: string): Buffer => {
    const body = Buffer.from(s);
    const head = Buffer.alloc(5);
    head[0] = type;
    head.writeUInt32BE(body.length, 1);
    return Buffer.concat([head, body]);
  };
  const srv = net.createServer((c) => {
    conns.add(c);
    c.on('data', (d: Buffer) => chunks.push(d));
    c.on('error', () => {});
    if (hello) c.write(frameOf(3, JSON.stringify(hello)));
    c.write(frameOf(3, JSON.stringify({ t: 'accepted' })));
    c.write(frameOf(1, 'ok\n'));
    c.end(frameOf(3, JSON.stringify({ t: 'exit', code: 0 })));
  });
  await new Promise<void>((res) => srv.listen(socket, () => res()));
  return {
    got: () => Buffer.concat(chunks).toString('utf8'),
    close: () =>
      new Promise<void>((res) => {
        for (const c of conns) c.destroy();
        srv.close(() => res());
      }),
  };
}

/** r.run without blocking this process (a listener in it must answer), killed after `ms`. */
export function runAsync(
  r: TestRig,
  args: string[],
  env: Record<string, string>,
  ms = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = r.spawn(args, env);
    let stdout = '';
    let stderr = '';
    c.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => c.kill('SIGKILL'), ms);
    c.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
