// The resident server (docs/engine.md, "The resident server"): one process per workspace root
// that keeps the engine's code loaded and its JIT warm, and runs the commands the thin client
// (bin/rc1-build.js) forwards, one at a time, each exactly as the CLI would run it in-process
// (requests.ts: the connections and the commands they carry). Nothing keyed on a request
// outlives it: each command opens the workspace and reads its state from disk again.
// The server exits after its idle timeout, when the engine it runs changes on disk, when a client
// of another engine asks, when its server.json goes (a removed .rc1/), and on SIGTERM/SIGINT/SIGHUP.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { procStat, processRunning } from '../state/process-identity.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { STATE_DIR } from '../workspace/workspace.ts';
import type { ToWorker } from '../runner/protocol.ts';
import { sweepWarmUpDirs } from '../runner/warm-up.ts';
import type { Sig } from './served.ts';
import {
  type ServerInfo,
  engineIdentity,
  ensurePrivateDir,
  readServerInfo,
  serverFile,
  socketPathFor,
  takeStartLock,
} from './server-files.ts';
import { type Main, type RootOf, type ServerSide, log, serveConnection } from './requests.ts';

export type { RunRequest } from './requests.ts';

const POLL_MS = 1000;
/** Rule workers kept started ahead (fresh: no rule loaded, no request's environment), for -j 2 builds. */
const SPARE_WORKERS = 2;
/**
 * Fault injection for tests: RC1_FAULT_SERVER_START_PAUSE_MS=N sleeps N ms between listen() and
 * the chmod of the socket (two servers started at once, one overtaking the other). `server start`
 * never passes it on (the server gets only PINNED_ENV): only a test spawning `__server` sets it.
 */
const FAULT_START_PAUSE_MS = Number(process.env.RC1_FAULT_SERVER_START_PAUSE_MS ?? 0);

/**
 * Rule workers started while idle, each handed to one build (WorkerPool: it gets the build's
 * environment then) and terminated with that build's pool: none outlives the request that used it.
 * Each runs a small rule of its own first (worker.ts: warmUp), so that a build's first jobs find
 * the worker's code compiled.
 */
function spareWorkers(baseEnv: NodeJS.ProcessEnv): { fill(): void; take(): Worker | undefined } {
  const spares: Worker[] = [];
  const workerUrl = new URL('./worker.js', import.meta.url);
  return {
    fill() {
      while (spares.length < SPARE_WORKERS) {
        const w = new Worker(workerUrl, { stdout: true, stderr: true, env: { ...baseEnv } });
        w.postMessage({ type: 'warm-up' } satisfies ToWorker); // worker.ts: warmUp
        const drop = (): void => {
          const i = spares.indexOf(w);
          if (i >= 0) spares.splice(i, 1);
        };
        w.on('error', drop);
        w.on('exit', drop);
        spares.push(w);
      }
    },
    take: () => spares.shift(),
  };
}

/**
 * Runs the server of `root` until it exits: its socket and server.json, the spare rule workers,
 * the idle timer and the watchers that end it. `main` is the CLI's main(); `rootOf` finds a
 * request's workspace root as the CLI does. Each connection is served by requests.ts.
 */
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
  // From here until server.json is written, under the start lock: a second server started at
  // once cannot remove this one's socket path after its listen() nor write its server.json
  // between this one's steps (it would be left unreachable, or leave a dead socket behind).
  const lock = takeStartLock(root);
  if ('held' in lock) {
    log(`not started: ${lock.held}`);
    process.exit(1);
  }
  let unlock: (() => void) | null = lock.release;
  const release = (): void => {
    unlock?.();
    unlock = null;
  };
  const running = readServerInfo(root);
  if (running && running.pid !== process.pid && processRunning(running.pid, running.startTicks)) {
    release();
    log(`not started: a server of this workspace runs already (pid ${running.pid})`);
    process.exit(1);
  }
  fs.rmSync(socket, { force: true }); // no live server: a dead one's socket
  let busy = false;
  let served = 0;
  /** Wall and CPU time (process.cpuUsage: every thread, the rule workers' too) of the last command served. */
  let last: { wallMs: number; cpuMs: number } | null = null;
  let stopping: string | null = null;
  let current: { signal: (sig: Sig) => void } | null = null;
  let idle: NodeJS.Timeout | null = null;
  const spares = spareWorkers(baseEnv);

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
      return; // the request's after() exits when the command is done
    }
    exit();
  }

  function exit(): void {
    log(`exiting: ${stopping}`);
    release();
    // No srv.close(): node would unlink the socket path, which may be another server's by now.
    const info = readServerInfo(root);
    if (info?.pid === process.pid) fs.rmSync(serverFile(root), { force: true });
    // Not when server.json names another server: it listens on the same path (two starts at once).
    if (info === null || info.pid === process.pid) fs.rmSync(socket, { force: true });
    process.exit(0);
  }

  const side: ServerSide = {
    root,
    identity,
    distDir,
    baseEnv,
    main,
    rootOf,
    stopping: () => stopping,
    busy: () => busy,
    shutdown: (why) => shutdown(why),
    status: () => ({ pid: process.pid, served, busy, last, identity, idleTimeoutS: idleS }),
    started(signal) {
      busy = true;
      if (idle) clearTimeout(idle);
      current = { signal };
    },
    ran(l) {
      served++;
      last = l;
    },
    ended() {
      current = null;
      busy = false;
    },
    after() {
      if (stopping) exit();
      armIdle();
      spares.fill();
    },
    takeWorker: () => spares.take(),
  };
  const srv = net.createServer((conn) => serveConnection(conn, token, side));

  process.on('uncaughtException', (e) => {
    log(`uncaught exception: ${e.stack ?? String(e)}`);
    stopping ??= 'an uncaught exception';
    exit();
  });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => shutdown(`${sig}`, true));
  process.stdout.on('error', () => {});

  try {
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(socket, () => resolve());
    });
  } catch (e) {
    release();
    throw e;
  }
  if (FAULT_START_PAUSE_MS > 0) await new Promise((r) => setTimeout(r, FAULT_START_PAUSE_MS));
  try {
    fs.chmodSync(socket, 0o600);
  } catch (e) {
    // The socket path was removed under this server (by hand: a server of this workspace takes
    // the start lock first): it exits touching nothing; listening on, it would stay up unreachable.
    release();
    log(`not started: ${(e as Error).message}`);
    process.exit(1);
  }
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
  release();
  log(`listening on ${socket} (idle timeout ${idleS} s)`);
  armIdle();
  try {
    sweepWarmUpDirs(); // those of servers killed during a warm-up
  } catch {
    /* a folder that cannot be removed now is removed by a later start */
  }
  spares.fill();
  // Gone server.json (a removed .rc1/, another server) or a changed engine: exit.
  setInterval(() => {
    if (readServerInfo(root)?.pid !== process.pid) shutdown('its server.json is gone or names another server');
    else if (engineIdentity(distDir) !== identity) shutdown('the engine changed on disk');
  }, POLL_MS).unref();
  process.chdir(root);
  process.stdout.write('ready\n');
}
