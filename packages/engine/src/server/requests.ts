// The resident server's connections and the commands they carry (server.ts runs the server's
// lifecycle: its socket, server.json, idle timer and exit). Every connection is first shown the
// server's token; it then asks for the server's status (ping) or runs one command (run), exactly
// as the CLI would run it in-process: the request's argv, working directory and environment
// (process.env is replaced by a copy of the request's for the length of the command and restored
// after), its terminal, its signals (SIGINT/SIGTERM interrupt the build; a client that goes away
// is a SIGTERM). Nothing keyed on a request outlives it.
import type * as net from 'node:net';
import type { Worker } from 'node:worker_threads';
import { stopCompilerService } from '../config/compile-module.ts';
import { forgetMadeDirs } from '../util/fs.ts';
import { setServedTerminal } from '../util/terminal.ts';
import { setMainThreadImportGuard } from '../util/main-thread-import.ts';
import { NotServed, type Served, type Sig } from './served.ts';
import {
  Deframer,
  FRAME_JSON,
  FRAME_STDERR,
  FRAME_STDOUT,
  engineIdentity,
  frame,
  pinnedDifference,
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
export type Main = (
  argv: string[],
  io: { out: (s: string) => void; err: (s: string) => void; tty: boolean },
  served: Served,
) => Promise<number>;
export type RootOf = (argv: string[], cwd: string) => string;

/** What a request needs of the server around it (server.ts). */
export interface ServerSide {
  readonly root: string;
  /** engineIdentity() of the engine the server runs, and the directory it is taken of. */
  readonly identity: string;
  readonly distDir: string;
  /** The server's own environment (the pinned variables), restored after every command. */
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly main: Main;
  readonly rootOf: RootOf;
  /** Why the server is ending, or null. */
  stopping(): string | null;
  /** A command is running. */
  busy(): boolean;
  /** Ends the server (at once when idle, else when the command is done). */
  shutdown(why: string): void;
  /** The ping's answer. */
  status(): object;
  /** A command is accepted: the server is busy and its idle timer stops; `signal` interrupts the command. */
  started(signal: (sig: Sig) => void): void;
  /** The command's main() returned: its wall and CPU time. */
  ran(last: { wallMs: number; cpuMs: number }): void;
  /** The process is the server's own again (environment, terminal, umask, directory): not busy. */
  ended(): void;
  /** After the reply: exit when stopping, else the idle timer again and the spare workers. */
  after(): void;
  /** A rule worker started ahead, if one is ready. */
  takeWorker(): Worker | undefined;
}

/** Serves one connection: the token first, then a ping or one run request and its messages. */
export function serveConnection(conn: net.Socket, token: string, s: ServerSide): void {
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
      void handleRun(conn, m as RunRequest, s, (f) => {
        during = f;
      });
    else if (m.t === 'ping') send(conn, { t: 'pong', ...s.status() });
  });
  conn.on('data', (c: Buffer) => de.push(c));
  conn.on('error', () => {});
}

function send(conn: net.Socket, msg: object): void {
  if (!conn.destroyed) conn.write(frame(FRAME_JSON, JSON.stringify(msg)));
}

/** Checks a run request, runs its command as the CLI would in-process, and answers its exit code. */
async function handleRun(
  conn: net.Socket,
  req: RunRequest,
  s: ServerSide,
  onMessage: (f: (m: Msg) => void) => void,
): Promise<void> {
  const refuse = (why: string): void => {
    send(conn, { t: 'refused', why });
    conn.end();
  };
  if (s.stopping()) return refuse('the server is stopping');
  if (req.identity !== s.identity || engineIdentity(s.distDir) !== s.identity) {
    refuse('the engine differs from the server’s');
    return s.shutdown('a client of another engine (or a changed engine) asked');
  }
  if (s.busy()) return refuse('the server is running another command');
  const knob = pinnedDifference(req.env, s.baseEnv);
  if (knob) {
    log(`refused a request: ${knob} differs from the server's (read once at start)`);
    return refuse(`${knob} differs from the server's`);
  }
  let reqRoot: string;
  try {
    reqRoot = s.rootOf(req.argv, req.cwd);
    process.chdir(req.cwd);
  } catch {
    return refuse('its directory cannot be entered');
  }
  if (reqRoot !== s.root) {
    process.chdir(s.root);
    return refuse('another workspace');
  }

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
  s.started(signal);
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
  // The command's output goes out once per turn of the event loop: the lines written in one turn
  // (a build's decisions and commits print dozens) leave in one write, and the client wakes once
  // for them, not once a line. Every write to the connection goes through the same cork, so the
  // order is kept; end() sends what is corked.
  let corked = false;
  const out = (type: number) => (text: string) => {
    if (!open) return;
    if (!corked) {
      corked = true;
      conn.cork();
      setImmediate(() => {
        corked = false;
        conn.uncork();
      });
    }
    conn.write(frame(type, text));
  };
  const served: Served = {
    onSignal(h) {
      handlers.add(h);
      if (pending) {
        const sig = pending;
        queueMicrotask(() => h(sig));
      }
      return () => handlers.delete(h);
    },
    takeWorker: () => s.takeWorker(),
  };
  send(conn, { t: 'accepted' });
  let code = 1;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  try {
    code = await s.main(req.argv, { out: out(FRAME_STDOUT), err: out(FRAME_STDERR), tty: req.stderrTTY }, served);
    const c = process.cpuUsage(c0);
    s.ran({ wallMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 });
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
    Object.assign(process.env, s.baseEnv);
    setServedTerminal(null);
    setMainThreadImportGuard(null);
    process.umask(ownMask);
    process.chdir(s.root);
    s.ended();
  }
  if (open) {
    send(conn, { t: 'exit', code });
    open = false;
    conn.end();
  }
  s.after();
}

export function log(msg: string): void {
  // stderr is .rc1/server.log. Never a request's environment, argv values or output.
  process.stderr.write(`${new Date().toISOString()} rc1-build server ${process.pid}: ${msg}\n`);
}
