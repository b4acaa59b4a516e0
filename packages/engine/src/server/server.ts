// The resident server (docs/engine.md, "The resident server"): one process per workspace root
// that keeps the engine's code loaded and its JIT warm, and runs the commands the thin client
// (bin/rc1-build.js) forwards, one at a time, each exactly as the CLI would run it in-process:
// the request's argv, working directory and environment (process.env is replaced by a copy of the
// request's for the length of the command and restored after), its terminal, its signals
// (SIGINT/SIGTERM interrupt the build; a client that goes away is a SIGTERM). Nothing keyed on a
// request outlives it: each command opens the workspace and reads its state from disk again.
// The server exits after its idle timeout, when the engine it runs changes on disk, when a client
// of another engine asks, when its server.json goes (a removed .rc1/), and on SIGTERM/SIGINT/SIGHUP.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { stopCompilerService } from '../config/compile-module.ts';
import { procStat } from '../state/process-identity.ts';
import { forgetMadeDirs, writeFileAtomic } from '../util/fs.ts';
import { setServedTerminal } from '../util/terminal.ts';
import { setMainThreadImportGuard } from '../util/main-thread-import.ts';
import { STATE_DIR } from '../workspace/workspace.ts';
import { NotServed, type Served, type Sig } from './served.ts';
import {
  Deframer,
  FRAME_JSON,
  FRAME_STDERR,
  FRAME_STDOUT,
  type ServerInfo,
  engineIdentity,
  ensurePrivateDir,
  frame,
  pinnedDifference,
  readServerInfo,
  serverFile,
  socketPathFor,
} from './server-files.ts';

export interface RunRequest {
  t: 'run';
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdoutTTY: boolean;
  stderrTTY: boolean;
  columns: number | null;
  /** The client's file mode creation mask: the files the command creates get the modes they would in-process. */
  umask: number;
  identity: string;
}

type Msg = { t?: string; sig?: string; columns?: number } & Partial<Omit<RunRequest, 't'>>;
type Main = (
  argv: string[],
  io: { out: (s: string) => void; err: (s: string) => void; tty: boolean },
  served: Served,
) => Promise<number>;
type RootOf = (argv: string[], cwd: string) => string;

const POLL_MS = 1000;
/** Rule workers kept started ahead (fresh: no rule loaded, no request's environment), for -j 2 builds. */
const SPARE_WORKERS = 2;

function log(msg: string): void {
  // stderr is .rc1/server.log. Never a request's environment, argv values or output.
  process.stderr.write(`${new Date().toISOString()} rc1-build server ${process.pid}: ${msg}\n`);
}

/** Runs the server of `root` until it exits. `main` is the CLI's main(); `rootOf` finds a request's workspace root as the CLI does. */
export async function runServer(
  root: string,
  idleS: number,
  main: Main,
  rootOf: RootOf,
  socketArg?: string,
): Promise<void> {
  const distDir = path.dirname(fileURLToPath(import.meta.url));
  const identity = engineIdentity(distDir);
  const baseEnv = { ...process.env };
  const socket = socketArg ?? socketPathFor(root);
  if (path.dirname(socket) !== path.join(root, STATE_DIR)) ensurePrivateDir(path.dirname(socket));
  // Sent first on every connection: only a process that can read the 0600 server.json knows it,
  // and the client sends its request (its environment) only after it has seen it.
  const token = crypto.randomBytes(16).toString('hex');
  fs.rmSync(socket, { force: true }); // `server start` found no live server: a dead one's socket
  let busy = false;
  let served = 0;
  /** Wall and CPU time (process.cpuUsage: every thread, the rule workers' too) of the last command served. */
  let last: { wallMs: number; cpuMs: number } | null = null;
  let stopping: string | null = null;
  let current: { signal: (sig: Sig) => void } | null = null;
  let idle: NodeJS.Timeout | null = null;
  // Rule workers started while idle, each handed to one build (WorkerPool: it gets the build's
  // environment then) and terminated with that build's pool: none outlives the request that used it.
  const spares: Worker[] = [];
  const workerUrl = new URL('./worker.js', import.meta.url);
  const fillSpares = (): void => {
    while (spares.length < SPARE_WORKERS) {
      const w = new Worker(workerUrl, { stdout: true, stderr: true, env: { ...baseEnv } });
      const drop = (): void => {
        const i = spares.indexOf(w);
        if (i >= 0) spares.splice(i, 1);
      };
      w.on('error', drop);
      w.on('exit', drop);
      spares.push(w);
    }
  };

  const srv = net.createServer((conn) => {
    conn.write(frame(FRAME_JSON, JSON.stringify({ t: 'hello', token })));
    // Messages after the run request (signals, the terminal's width) go to that request.
    let during: ((m: Msg) => void) | null = null;
    const de = new Deframer((type, payload) => {
      if (type !== FRAME_JSON) return;
      let m: Msg;
      try {
        m = JSON.parse(payload.toString('utf8')) as Msg;
      } catch {
        conn.destroy();
        return;
      }
      if (during) during(m);
      else if (m.t === 'run')
        void handle(conn, m as RunRequest, (f) => {
          during = f;
        });
      else if (m.t === 'ping')
        send(conn, { t: 'pong', pid: process.pid, served, busy, last, identity, idleTimeoutS: idleS });
    });
    conn.on('data', (c: Buffer) => de.push(c));
    conn.on('error', () => {});
  });

  const send = (conn: net.Socket, msg: object): void => {
    if (!conn.destroyed) conn.write(frame(FRAME_JSON, JSON.stringify(msg)));
  };

  const armIdle = (): void => {
    if (idle) clearTimeout(idle);
    // At most 2^31-1 ms (control.ts refuses more): a longer delay would fire at once.
    idle = setTimeout(() => shutdown(`idle for ${idleS} s`), Math.min(idleS * 1000, 2 ** 31 - 1));
  };

  /**
   * Ends the server: at once when idle. During a command, new requests are refused (they run
   * in-process) and the server exits when the command is done; only `interrupt` (SIGTERM, SIGINT,
   * SIGHUP to the server: `server stop`) interrupts the command, as a SIGTERM to an in-process
   * build (143). A changed engine, another engine's client or a gone server.json never does.
   */
  function shutdown(why: string, interrupt = false): void {
    stopping ??= why;
    if (busy) {
      if (interrupt) current?.signal('SIGTERM');
      return; // handle() exits when the command is done
    }
    exit();
  }

  function exit(): void {
    log(`exiting: ${stopping}`);
    // No srv.close(): node would unlink the socket path, which may be another server's by now.
    const info = readServerInfo(root);
    if (info?.pid === process.pid) fs.rmSync(serverFile(root), { force: true });
    // Not when server.json names another server: it listens on the same path (two starts at once).
    if (info === null || info.pid === process.pid) fs.rmSync(socket, { force: true });
    process.exit(0);
  }

  async function handle(conn: net.Socket, req: RunRequest, onMessage: (f: (m: Msg) => void) => void): Promise<void> {
    const refuse = (why: string): void => {
      send(conn, { t: 'refused', why });
      conn.end();
    };
    if (stopping) return refuse('the server is stopping');
    if (req.identity !== identity || engineIdentity(distDir) !== identity) {
      refuse('the engine differs from the server’s');
      return shutdown('a client of another engine (or a changed engine) asked');
    }
    if (busy) return refuse('the server is running another command');
    const knob = pinnedDifference(req.env, baseEnv);
    if (knob) {
      log(`refused a request: ${knob} differs from the server's (read once at start)`);
      return refuse(`${knob} differs from the server's`);
    }
    let reqRoot: string;
    try {
      reqRoot = rootOf(req.argv, req.cwd);
      process.chdir(req.cwd);
    } catch {
      return refuse('its directory cannot be entered');
    }
    if (reqRoot !== root) {
      process.chdir(root);
      return refuse('another workspace');
    }
    busy = true;
    if (idle) clearTimeout(idle);
    // One command at a time: during it the process's environment is the request's.
    for (const k of Object.keys(process.env)) delete process.env[k];
    Object.assign(process.env, req.env);
    let columns = req.columns ?? undefined;
    setServedTerminal({ stdoutTTY: req.stdoutTTY, stderrTTY: req.stderrTTY, columns: () => columns });
    const ownMask = process.umask(typeof req.umask === 'number' ? req.umask : process.umask());
    forgetMadeDirs();
    setMainThreadImportGuard((what) => {
      throw new NotServed(`${what} would be loaded on the server's main thread`);
    });

    let open = true; // the client still takes output
    let pending: Sig | null = null;
    const handlers = new Set<(sig: Sig) => void>();
    const finishEarly = (code: number): void => {
      // A signal no build handles (the command is not a build, or its build has not begun):
      // in-process the signal would end the process now; the request ends now, the command's output is dropped.
      if (!open) return;
      send(conn, { t: 'exit', code });
      open = false;
      conn.end();
    };
    const signal = (sig: Sig): void => {
      pending ??= sig;
      if (handlers.size) for (const h of handlers) h(sig);
      else finishEarly(sig === 'SIGINT' ? 130 : 143);
    };
    current = { signal };
    onMessage((m) => {
      if (m.t === 'signal' && (m.sig === 'SIGINT' || m.sig === 'SIGTERM')) signal(m.sig);
      else if (m.t === 'columns' && typeof m.columns === 'number') columns = m.columns;
    });
    conn.on('close', () => {
      // The client went away (killed, its terminal closed): as a SIGTERM to an in-process build.
      if (open) {
        open = false;
        signal('SIGTERM');
      }
    });
    const out = (type: number) => (s: string) => {
      if (open) conn.write(frame(type, s));
    };
    const served_: Served = {
      onSignal(h) {
        handlers.add(h);
        if (pending) {
          const sig = pending;
          queueMicrotask(() => h(sig));
        }
        return () => handlers.delete(h);
      },
      takeWorker: () => spares.shift(),
    };
    send(conn, { t: 'accepted' });
    let code = 1;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    try {
      code = await main(req.argv, { out: out(FRAME_STDOUT), err: out(FRAME_STDERR), tty: req.stderrTTY }, served_);
      served++;
      const c = process.cpuUsage(c0);
      last = { wallMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
    } catch (e) {
      if (e instanceof NotServed) {
        if (open) {
          send(conn, { t: 'refused', why: e.message });
          open = false;
          conn.end();
        }
      } else {
        log(`internal error: ${(e as Error).stack ?? String(e)}`);
        if (open) out(FRAME_STDERR)(`rc1-build: internal error in the server: ${(e as Error).message}\n`);
      }
    } finally {
      // No child process the server keeps may hold the request's environment: esbuild's service
      // (spawned by a compile during the command, with process.env as it was) is stopped.
      await stopCompilerService().catch(() => {});
      for (const k of Object.keys(process.env)) delete process.env[k];
      Object.assign(process.env, baseEnv);
      setServedTerminal(null);
      setMainThreadImportGuard(null);
      process.umask(ownMask);
      process.chdir(root);
      current = null;
      busy = false;
    }
    if (open) {
      send(conn, { t: 'exit', code });
      open = false;
      conn.end();
    }
    if (stopping) exit();
    armIdle();
    fillSpares();
  }

  process.on('uncaughtException', (e) => {
    log(`uncaught exception: ${e.stack ?? String(e)}`);
    stopping ??= 'an uncaught exception';
    exit();
  });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => shutdown(`${sig}`, true));
  process.stdout.on('error', () => {});

  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(socket, () => resolve());
  });
  fs.chmodSync(socket, 0o600);
  const info: ServerInfo = {
    format: 1,
    pid: process.pid,
    startTicks: procStat(process.pid)?.startTicks ?? null,
    socket,
    root,
    identity,
    idleTimeoutS: idleS,
    startedAt: new Date().toISOString(),
    token,
  };
  writeFileAtomic(serverFile(root), JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  log(`listening on ${socket} (idle timeout ${idleS} s)`);
  armIdle();
  fillSpares();
  // Gone server.json (a removed .rc1/, another server) or a changed engine: exit.
  setInterval(() => {
    if (readServerInfo(root)?.pid !== process.pid) shutdown('its server.json is gone or names another server');
    else if (engineIdentity(distDir) !== identity) shutdown('the engine changed on disk');
  }, POLL_MS).unref();
  process.chdir(root);
  process.stdout.write('ready\n');
}
