// Where a workspace's resident server is found and who it is (docs/engine.md, "The resident
// server"). <root>/.rc1/server.json names the server's socket, pid, process start time and the
// engine identity it was started from; the thin client (bin/rc1-build.js) reads the same file
// and computes the same identity with the same rules (keep the two in step).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ProcessIdentity, holderState, selfIdentity } from '../state/process-identity.ts';
import { STATE_DIR } from '../workspace/workspace.ts';

export const SERVER_FILE = 'server.json';
export const SERVER_LOG = 'server.log';
export const SERVER_SOCKET = 'server.sock';
/** Held by a server from before it removes the socket path until its server.json is written. */
export const SERVER_START_LOCK = 'server.start.lock';
/** Default idle timeout: 3 hours, like Bazel's --max_idle_secs. */
export const DEFAULT_IDLE_S = 3 * 3600;
/** The longest Unix socket path (sun_path is 108 bytes with the terminating NUL). */
const SUN_PATH_MAX = 107;

export interface ServerInfo {
  format: 1;
  pid: number;
  /** Field 22 of /proc/<pid>/stat: tells this server from a later process with its pid. */
  startTicks: string | null;
  socket: string;
  root: string;
  /** engineIdentity() of the engine the server runs. */
  identity: string;
  idleTimeoutS: number;
  startedAt: string;
  /** Random, per server: the server sends it first on every connection, and the client sends nothing before it has seen it. */
  token: string;
}

export const serverFile = (root: string): string => path.join(root, STATE_DIR, SERVER_FILE);

/**
 * <root>/.rc1/server.sock, or, when that path is too long for a Unix socket, a socket named by a
 * hash of the root in the user's private directory (privateSocketDir): never a predictable name
 * in a directory other users can write.
 */
export function socketPathFor(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const local = path.join(root, STATE_DIR, SERVER_SOCKET);
  if (Buffer.byteLength(local) <= SUN_PATH_MAX) return local;
  const h = crypto.createHash('sha256').update(root).digest('hex').slice(0, 16);
  return path.join(privateSocketDir(env), `server-${h}.sock`);
}

/** $XDG_RUNTIME_DIR/rc1-build when XDG_RUNTIME_DIR is set, else rc1-build-<uid> in the temp directory. */
export function privateSocketDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'rc1-build');
  return path.join(os.tmpdir(), `rc1-build-${process.getuid?.() ?? 'user'}`);
}

/**
 * Creates a socket's directory when it is missing (mode 0700) and checks it with lstat: a real
 * directory (not a link), owned by this user, with no group or other permission. Throws an
 * Error saying what is wrong otherwise: the server then does not start (commands run in-process).
 */
export function ensurePrivateDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const st = fs.lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a link or a file is there)`);
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`${dir} is owned by uid ${st.uid}, not by this user (${uid})`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(`${dir} has mode ${(st.mode & 0o777).toString(8)}; it must be 0700 (no group or other permission)`);
}

/**
 * The engine's identity: the node executable, then bin/rc1-build.js and every compiled module in
 * dist/, each as "inode size mtime-in-ns" (stat, links followed). A rebuilt engine, another node
 * binary (an upgrade replaces the file) or another checkout gives another identity. Both thin
 * clients compute the same string: bin/rc1-build.js for the node it runs in, client/rc1-client.c
 * for the node on PATH that it would exec.
 */
export function engineIdentity(distDir: string): string {
  const bin = path.join(distDir, '..', 'bin', 'rc1-build.js');
  const key = (f: string): string => {
    const st = fs.statSync(f, { bigint: true, throwIfNoEntry: false });
    return st ? `${st.ino} ${st.size} ${st.mtimeNs}` : 'missing';
  };
  const lines = [`node ${process.execPath} ${key(process.execPath)}`, `bin ${key(bin)}`];
  for (const n of fs
    .readdirSync(distDir)
    .filter((n) => n.endsWith('.js'))
    .sort())
    lines.push(`${n} ${key(path.join(distDir, n))}`);
  return lines.join('\n');
}

/** Names of the start lock's temp files (`.tmp-<random>`) and of locks being broken (`.stale-<random>`). */
export const SERVER_START_LOCK_AUX = `${SERVER_START_LOCK}.`;
/** A temp or aside file of the start lock older than this is left by a killed process: swept. */
const STALE_AUX_MS = 60_000;

interface StartLockRecord extends ProcessIdentity {
  /** Random, per take: tells this take's record from any other with the same content. */
  token: string;
}

/**
 * Takes <root>/.rc1/server.start.lock for this process, which a starting server holds from before
 * it removes the socket path until its server.json is written: two servers started at once for one
 * workspace never interleave those steps. The file names its holder as the workspace lock does
 * (selfIdentity(): pid, start time, host, boot id, PID namespace) and appears whole: written to a
 * new temp name (random, created with O_EXCL) and linked to its name (link fails when the name
 * exists). A lock whose holder is dead by holderState() (a server killed while starting, a lock from
 * before a reboot, this process's own pid from before a restart) is broken: renamed aside, and
 * removed only if the file moved is the one found dead (else it is linked back). A holder whose
 * liveness cannot be checked (another host, another PID namespace) is never broken. The holder
 * sweeps temp and aside files left by killed processes. Returns a release function, or the reason
 * it is held (another server of this workspace is starting).
 */
export function takeStartLock(root: string): { release: () => void } | { held: string } {
  const dir = path.join(root, STATE_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, SERVER_START_LOCK);
  const token = crypto.randomBytes(12).toString('hex');
  const me: StartLockRecord = { ...selfIdentity(), token };
  const mine = JSON.stringify(me);
  const tmp = `${lock}.tmp-${token}`;
  fs.writeFileSync(tmp, mine, { mode: 0o600, flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        fs.linkSync(tmp, lock);
        sweepStartLockAux(dir, tmp);
        return {
          release: () => {
            try {
              if (fs.readFileSync(lock, 'utf8') === mine) fs.unlinkSync(lock);
            } catch {
              // gone already
            }
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      let found: string;
      try {
        found = fs.readFileSync(lock, 'utf8');
      } catch {
        continue; // released meanwhile
      }
      const holder = parseHolder(found);
      if (holder) {
        const state = holderState(holder, holder.token === token);
        if (state.kind === 'alive')
          return { held: `another server of this workspace is starting (pid ${holder.pid} holds ${lock})` };
        if (state.kind === 'unknown')
          return {
            held: `${lock} is held by pid ${holder.pid}, whose liveness cannot be checked from here (${state.why}); remove it by hand once that process no longer runs`,
          };
      }
      // Dead, or not a lock this engine wrote: broken, as a dead holder's.
      const aside = `${lock}.stale-${token}`;
      try {
        fs.renameSync(lock, aside);
      } catch {
        continue; // another process broke it first
      }
      let moved: string;
      try {
        moved = fs.readFileSync(aside, 'utf8');
      } catch {
        continue; // a dead holder's, swept meanwhile by a server that took the lock since
      }
      if (moved !== found) {
        // A live holder's lock, taken between the read and the rename: put it back.
        try {
          fs.linkSync(aside, lock);
        } catch {
          // a third process holds the name now
        }
        fs.rmSync(aside, { force: true });
        return { held: `another server of this workspace is starting (it holds ${lock})` };
      }
      fs.rmSync(aside, { force: true });
    }
    return { held: `${lock} could not be taken (held and released by others in turn)` };
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** A start lock's record, or null when it is not one (torn, or not written by this engine). */
function parseHolder(text: string): (Partial<StartLockRecord> & { pid: number }) | null {
  try {
    const v = JSON.parse(text) as Partial<StartLockRecord> | null;
    return v && typeof v.pid === 'number' ? (v as Partial<StartLockRecord> & { pid: number }) : null;
  } catch {
    return null;
  }
}

/**
 * Removes the start lock's temp and aside files (server.start.lock.*, those of earlier engines
 * too: .<pid>, .stale.<pid>) that a killed process left: those whose writer is dead, and any
 * older than a minute (a live take holds its own for milliseconds).
 */
function sweepStartLockAux(dir: string, own: string): void {
  for (const f of fs.readdirSync(dir)) {
    if (!f.startsWith(SERVER_START_LOCK_AUX)) continue;
    const file = path.join(dir, f);
    if (file === own) continue;
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (!st) continue;
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const writer = parseHolder(text);
    const dead = writer !== null && holderState(writer, false).kind === 'dead';
    if (dead || Date.now() - st.mtimeMs > STALE_AUX_MS) fs.rmSync(file, { force: true });
  }
}

export function readServerInfo(root: string): ServerInfo | null {
  try {
    const v = JSON.parse(fs.readFileSync(serverFile(root), 'utf8')) as ServerInfo;
    return v && v.format === 1 && typeof v.pid === 'number' && typeof v.socket === 'string' ? v : null;
  } catch {
    return null;
  }
}

/**
 * Environment variables read once when a module loads or when the process starts (not per
 * command): the server serves only requests whose values equal its own (docs/engine.md, the
 * environment table); any other request runs in-process.
 */
export const PINNED_ENV: readonly string[] = [
  'RC1_FSYNC', // util/fs.ts: FSYNC
  'RC1_DEBUG', // util/timing.ts
  'RC1_FAULT_COMMIT_PAUSE_MS', // state/commit-outputs.ts (fault injection)
  'RC1_FAULT_BOOT_ID', // state/durability.ts (fault injection: read from the process's own environment)
  'NODE_OPTIONS', // node, at start
  'UV_THREADPOOL_SIZE', // libuv, at the first use of its thread pool
  'NODE_EXTRA_CA_CERTS', // node, at start (remote cache over HTTPS)
  'SSL_CERT_FILE', // OpenSSL's default store, loaded once
  'SSL_CERT_DIR',
  'LANG', // ICU's default locale (Intl in rules), fixed at start
  'LC_ALL',
];

/** The first pinned variable whose value differs between two environments, or null. */
export function pinnedDifference(a: NodeJS.ProcessEnv, b: NodeJS.ProcessEnv): string | null {
  for (const k of PINNED_ENV) if ((a[k] ?? null) !== (b[k] ?? null)) return k;
  return null;
}

/** Only the pinned variables of an environment: all a server process starts with. */
export function pinnedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of PINNED_ENV) if (env[k] !== undefined) out[k] = env[k]!;
  return out;
}

// Frames on the socket, both ways: 1 byte type, 4 bytes big-endian length, the payload.
export const FRAME_STDOUT = 1;
export const FRAME_STDERR = 2;
export const FRAME_JSON = 3;

export function frame(type: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const head = Buffer.allocUnsafe(5);
  head[0] = type;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Splits a byte stream into frames. */
export class Deframer {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly on: (type: number, payload: Buffer) => void) {}
  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= 5) {
      const n = this.buf.readUInt32BE(1);
      if (this.buf.length < 5 + n) break;
      const type = this.buf[0]!;
      const payload = this.buf.subarray(5, 5 + n);
      this.buf = this.buf.subarray(5 + n);
      this.on(type, payload);
    }
  }
}
