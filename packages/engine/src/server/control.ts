// `rc1-build server start|stop|status` (docs/engine.md, "The resident server"). Always run
// in-process: start spawns the server detached (its own session, stdin closed, stdout a pipe that
// carries one "ready" line, stderr appended to .rc1/server.log) with only the environment
// variables it must share with its clients (PINNED_ENV): never the starting shell's secrets.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../config/usage-error.ts';
import { procStat } from '../state/process-identity.ts';
import { STATE_DIR } from '../workspace/workspace.ts';
import {
  DEFAULT_IDLE_S,
  Deframer,
  FRAME_JSON,
  SERVER_LOG,
  type ServerInfo,
  engineIdentity,
  ensurePrivateDir,
  frame,
  pinnedEnv,
  readServerInfo,
  serverFile,
  socketPathFor,
} from './server-files.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const READY_TIMEOUT_MS = 30_000;
/** The longest idle timeout: a node timer holds at most 2^31-1 ms (a longer one fires at once). */
export const MAX_IDLE_S = Math.floor((2 ** 31 - 1) / 1000);
const STOP_TIMEOUT_MS = 30_000;

/** Whether the process a server.json names still runs (same pid and start time). */
export function serverAlive(info: ServerInfo): boolean {
  const st = procStat(info.pid);
  if (!st || st.state === 'Z' || st.state === 'X') return false;
  return info.startTicks === null || st.startTicks === info.startTicks;
}

/** Removes the files of a server that no longer runs. */
function removeStale(root: string, info: ServerInfo): void {
  if (readServerInfo(root)?.pid === info.pid) fs.rmSync(serverFile(root), { force: true });
  fs.rmSync(info.socket, { force: true });
}

/** The live server of a workspace, or null (a stale server.json is removed). */
export function liveServer(root: string): ServerInfo | null {
  const info = readServerInfo(root);
  if (!info) return null;
  if (serverAlive(info)) return info;
  removeStale(root, info);
  return null;
}

export function parseIdleTimeout(v: string | undefined): number {
  if (v === undefined) return DEFAULT_IDLE_S;
  const n = Number(v);
  if (v === '' || !Number.isFinite(n) || n <= 0)
    throw new UsageError({
      headline: `--idle-timeout expects a positive number of seconds, got ${JSON.stringify(v)}`,
      hint: `e.g. --idle-timeout=3600 (default ${DEFAULT_IDLE_S}: 3 hours)`,
    });
  if (n > MAX_IDLE_S)
    throw new UsageError({
      headline: `--idle-timeout is at most ${MAX_IDLE_S} seconds (about 24.8 days), got ${v}`,
      hint: `a longer timer cannot be set (node's timers hold at most 2^31-1 ms); e.g. --idle-timeout=${MAX_IDLE_S}`,
    });
  return n;
}

export async function serverStart(root: string, idleS: number, io: Io): Promise<number> {
  const live = liveServer(root);
  if (live) {
    io.out(`rc1-build server: already running for ${root} (pid ${live.pid}, socket ${live.socket})\n`);
    return 0;
  }
  const stateDir = path.join(root, STATE_DIR);
  fs.mkdirSync(stateDir, { recursive: true });
  // Chosen here, where the starting shell's XDG_RUNTIME_DIR is seen (the server gets only PINNED_ENV).
  const socket = socketPathFor(root);
  if (path.dirname(socket) !== stateDir) {
    try {
      ensurePrivateDir(path.dirname(socket));
    } catch (e) {
      io.err(
        `rc1-build server: not started: the socket's directory is not private: ${(e as Error).message}\n` +
          `  (the workspace path is too long for ${path.join(stateDir, 'server.sock')}; commands run in-process)\n`,
      );
      return 1;
    }
  }
  const log = fs.openSync(path.join(stateDir, SERVER_LOG), 'a');
  const bin = fileURLToPath(new URL('../bin/rc1-build.js', import.meta.url));
  const child = spawn(process.execPath, [bin, '__server', root, String(idleS), socket], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', log],
    env: pinnedEnv(process.env),
  });
  fs.closeSync(log);
  const ok = await new Promise<boolean>((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('ready\n')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  child.stdout!.destroy();
  child.unref();
  if (!ok) {
    if (child.exitCode === null) child.kill('SIGTERM');
    io.err(`rc1-build server: the server did not start; see ${path.join(stateDir, SERVER_LOG)}\n`);
    return 1;
  }
  const info = readServerInfo(root)!;
  io.out(
    `rc1-build server: started for ${root} (pid ${info.pid}, socket ${info.socket}, idle timeout ${idleS} s); ` +
      `commands in this workspace now run in it (RC1_NO_SERVER=1 runs one in-process); rc1-build server stop ends it\n`,
  );
  return 0;
}

export async function serverStop(root: string, io: Io): Promise<number> {
  const info = readServerInfo(root);
  const live = liveServer(root);
  if (!live) {
    io.out(`rc1-build server: no server running for ${root}${info ? ' (removed the files of a dead one)' : ''}\n`);
    return 0;
  }
  process.kill(live.pid, 'SIGTERM');
  const t0 = Date.now();
  while (serverAlive(live)) {
    if (Date.now() - t0 > STOP_TIMEOUT_MS) {
      io.err(`rc1-build server: pid ${live.pid} did not stop within ${STOP_TIMEOUT_MS / 1000} s\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  removeStale(root, live);
  io.out(`rc1-build server: stopped (pid ${live.pid})\n`);
  return 0;
}

/** Asks a server how it is (commands served, busy); null when it does not answer within 2 s. */
interface Pong {
  served: number;
  busy: boolean;
  last: { wallMs: number; cpuMs: number } | null;
}

function ping(socket: string): Promise<Pong | null> {
  return new Promise((resolve) => {
    const conn = net.connect(socket);
    const timer = setTimeout(() => {
      conn.destroy();
      resolve(null);
    }, 2000);
    const de = new Deframer((type, payload) => {
      if (type !== FRAME_JSON) return;
      const m = JSON.parse(payload.toString('utf8')) as Pong & { t: string };
      if (m.t !== 'pong') return; // the hello every connection begins with
      clearTimeout(timer);
      conn.destroy();
      resolve(m);
    });
    conn.on('connect', () => conn.write(frame(FRAME_JSON, JSON.stringify({ t: 'ping' }))));
    conn.on('data', (c: Buffer) => de.push(c));
    conn.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
}

export async function serverStatus(root: string, io: Io): Promise<number> {
  const live = liveServer(root);
  if (!live) {
    io.out(`rc1-build server: no server running for ${root}\n`);
    return 0;
  }
  const dist = path.dirname(fileURLToPath(import.meta.url));
  const same = engineIdentity(dist) === live.identity;
  const p = await ping(live.socket);
  io.out(
    `rc1-build server: running for ${root}\n  pid ${live.pid}, started ${live.startedAt}\n  socket ${live.socket}\n` +
      `  idle timeout ${live.idleTimeoutS} s\n` +
      `  ${p ? `commands served: ${p.served}${p.busy ? ' (running one now)' : ''}` : 'does not answer on its socket'}\n` +
      (p?.last
        ? `  last command: ${p.last.wallMs.toFixed(1)} ms wall, ${p.last.cpuMs.toFixed(1)} ms CPU in the server (its rule workers included)\n`
        : '') +
      `  engine: ${same ? 'the same as this rc1-build' : 'another than this rc1-build (the server exits when asked by this one)'}\n`,
  );
  return 0;
}
