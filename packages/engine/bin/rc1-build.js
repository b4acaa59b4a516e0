#!/usr/bin/env node
// The rc1-build command. When the workspace has a resident server (`rc1-build server start`,
// docs/engine.md "The resident server"), this thin client forwards the command line to it over
// its Unix socket and streams its stdout/stderr back byte for byte; otherwise it runs the
// compiled CLI (dist/cli.js) in this process. It loads only node:fs, node:path and (when a
// server.json is there) node:net on the served path. In-process whenever: RC1_NO_SERVER=1, no
// .rc1/server.json, the server it names is dead (its files are removed), its socket is not a socket
// of this user's, the server does not first show server.json's token (nothing is sent before), the server refuses
// (another engine, a module-load setting that differs, a command that owns its process, busy
// with another command), or npm exec launched this process (its end must stop the build:
// launcher-exit.ts, in-process only). src/server/server-files.ts holds the other half of the
// rules below (identity, frames). A CommonJS file (bin/package.json): a CommonJS entry starts
// ~3 ms sooner than an ES module, and node's ESM loader is set up only on the in-process path.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const argv = process.argv.slice(2);
// The native client (client/rc1-client.c) asked the server and was refused: not again.
const serverTried = process.env.RC1_CLIENT_SERVER_TRIED === '1';
delete process.env.RC1_CLIENT_SERVER_TRIED;

/** `-C DIR` / `--directory DIR` / `--directory=DIR` / `-CDIR`, as main.ts's directoryBefore reads it. */
function directoryOf(args) {
  let dir;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    if ((a === '-C' || a === '--directory') && i + 1 < args.length) dir = args[++i];
    else if (a.startsWith('--directory=')) dir = a.slice('--directory='.length);
    else if (a.startsWith('-C') && a.length > 2) dir = a.slice(2);
  }
  return dir;
}

/** The workspace root as workspace.ts's findRoot finds it. */
function rootOf(args, cwd) {
  const dir = directoryOf(args);
  if (dir !== undefined) return path.resolve(cwd, dir);
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'rc1.build.ts'))) return d;
    if (path.dirname(d) === d) return path.resolve(cwd);
  }
}

/** engineIdentity() of server-files.ts, for this client's engine (client/rc1-client.c computes it too). */
function identity() {
  const dist = path.join(__dirname, '..', 'dist');
  const key = (f) => {
    const st = fs.statSync(f, { bigint: true, throwIfNoEntry: false });
    return st ? `${st.ino} ${st.size} ${st.mtimeNs}` : 'missing';
  };
  const lines = [
    `node ${process.execPath} ${key(process.execPath)}`,
    `bin ${key(path.join(dist, '..', 'bin', 'rc1-build.js'))}`,
  ];
  for (const n of fs
    .readdirSync(dist)
    .filter((n) => n.endsWith('.js'))
    .sort())
    lines.push(`${n} ${key(path.join(dist, n))}`);
  return lines.join('\n');
}

/** Whether the process server.json names still runs (pid and start time, as process-identity.ts). */
function alive(info) {
  let s;
  try {
    s = fs.readFileSync(`/proc/${info.pid}/stat`, 'utf8');
  } catch {
    if (fs.existsSync('/proc/self/stat')) return false;
    try {
      process.kill(info.pid, 0); // no /proc: the pid is all there is
      return true;
    } catch (e) {
      return e.code === 'EPERM';
    }
  }
  const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return rest[0] !== 'Z' && rest[0] !== 'X' && (info.startTicks == null || rest[19] === info.startTicks);
}

/** No server answered: when the process server.json names is gone, remove its files. */
function removeIfDead(file, info) {
  if (alive(info)) return;
  try {
    if (JSON.parse(fs.readFileSync(file, 'utf8')).pid === info.pid) fs.rmSync(file, { force: true });
    fs.rmSync(info.socket, { force: true });
  } catch {
    /* already gone */
  }
}

/** How long the client waits for the server's hello and its 'accepted' before it runs the command in-process. */
const ACCEPT_TIMEOUT_MS = 2000;

function frame(obj) {
  const body = Buffer.from(JSON.stringify(obj), 'utf8');
  const head = Buffer.allocUnsafe(5);
  head[0] = 3;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Whether a path is a socket of this user's: a listener of another user's, a file or a link is not the server. */
function ownSocket(p) {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  return st?.isSocket() === true && (typeof process.getuid !== 'function' || st.uid === process.getuid());
}

/** Runs the command in the server; resolves false when it must run in-process instead. */
async function served(info) {
  const net = require('node:net'); // not loaded when there is no server
  return await new Promise((resolve) => {
    const sock = net.connect(info.socket);
    let hello = false; // the server has shown server.json's token: only then is the request (the environment) sent
    let accepted = false;
    let done = false;
    let buf = Buffer.alloc(0);
    const signals = new Map();
    const finish = (v) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const [sig, h] of signals) process.off(sig, h);
      resolve(v);
    };
    // One handler per signal for the whole request. Until the server has accepted the request
    // nothing has run: a signal ends the client now. After it, the first signal is the build's to
    // handle (forwarded); a second one ends this client at once, as it would end an in-process
    // build. The handler is never swapped: a signal that arrives in the loop turn that reads
    // 'accepted' would be dispatched to a handler already removed, and be lost (libuv drops it).
    let forwarded = 0;
    for (const sig of ['SIGINT', 'SIGTERM']) {
      const h = () => {
        if (!accepted || ++forwarded > 1) process.exit(sig === 'SIGINT' ? 130 : 143);
        sock.write(frame({ t: 'signal', sig }));
      };
      signals.set(sig, h);
      process.on(sig, h);
    }
    // A server that accepts the connection but does not answer (stopped, frozen): in-process.
    const timer = setTimeout(() => {
      process.stderr.write(
        `rc1-build: the server (pid ${info.pid}) did not answer within ${ACCEPT_TIMEOUT_MS / 1000} s; running in-process\n`,
      );
      refuse();
    }, ACCEPT_TIMEOUT_MS);
    const refuse = () => {
      sock.destroy();
      finish(false);
    };
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {}); // a closed reader: output dropped, as in-process
    const request = () => {
      sock.write(
        frame({
          t: 'run',
          argv,
          cwd: process.cwd(),
          env: process.env,
          stdoutTTY: process.stdout.isTTY === true,
          stderrTTY: process.stderr.isTTY === true,
          columns: process.stderr.columns ?? null,
          umask: process.umask(),
          identity: identity(),
        }),
      );
      if (process.stderr.isTTY)
        process.stderr.on('resize', () => sock.write(frame({ t: 'columns', columns: process.stderr.columns })));
    };
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 5 && !done) {
        const n = buf.readUInt32BE(1);
        if (buf.length < 5 + n) break;
        const type = buf[0];
        const payload = buf.subarray(5, 5 + n);
        buf = buf.subarray(5 + n);
        if (!hello) {
          // The first frame must be the hello with server.json's token; anything else is not our server.
          let m;
          try {
            m = type === 3 ? JSON.parse(payload.toString('utf8')) : null;
          } catch {}
          if (m?.t !== 'hello' || m.token !== info.token) return refuse();
          hello = true;
          request();
        } else if (type === 1) process.stdout.write(payload);
        else if (type === 2) process.stderr.write(payload);
        else if (type === 3) {
          const m = JSON.parse(payload.toString('utf8'));
          if (m.t === 'accepted') {
            accepted = true;
            clearTimeout(timer);
          } else if (m.t === 'refused') finish(false);
          else if (m.t === 'exit') {
            process.exitCode = m.code;
            finish(true);
          }
        }
      }
    });
    sock.on('error', () => {});
    sock.on('close', () => {
      if (done) return;
      if (!accepted) return finish(false);
      process.stderr.write('rc1-build: the server ended during the command (see .rc1/server.log)\n');
      process.exitCode = 1;
      finish(true);
    });
  });
}

async function tryServer() {
  const env = process.env;
  if (serverTried || env.RC1_NO_SERVER === '1' || argv[0]?.startsWith('__')) return false;
  if (env.npm_command === 'exec' || env.npm_lifecycle_event === 'npx') return false;
  const file = path.join(rootOf(argv, process.cwd()), '.rc1', 'server.json');
  let info;
  try {
    info = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
  if (!info || typeof info.socket !== 'string' || typeof info.pid !== 'number') return false;
  // Nothing is sent unless server.json's process (pid and start time) runs and the socket is a
  // socket of this user's; then the server must show the token (served()).
  if (!alive(info)) {
    removeIfDead(file, info);
    return false;
  }
  return typeof info.token === 'string' && ownSocket(info.socket) ? await served(info) : false;
}

/**
 * The no-op fast path (dist/noop.cjs, src/cli/fast-noop.ts): only where the workspace holds an
 * up-to-date stamp. Its exit code, or null: the full build runs. RC1_NO_FAST_NOOP=1 turns it off;
 * RC1_DEBUG=timing skips it (the phases are the full build's); RC1_DEBUG=fastpath says why it
 * did not answer.
 */
async function tryFast() {
  const env = process.env;
  const debug = (env.RC1_DEBUG ?? '').split(',');
  if (env.RC1_NO_FAST_NOOP === '1' || debug.includes('timing') || argv[0]?.startsWith('__')) return null;
  const cwd = process.cwd();
  const root = rootOf(argv, cwd);
  if (!fs.existsSync(path.join(root, '.rc1', 'uptodate.json'))) return null;
  const why = debug.includes('fastpath') ? (r) => process.stderr.write(`rc1 fastpath: ${r}\n`) : undefined;
  try {
    const engineFile = require.resolve('../dist/noop.cjs');
    return await require(engineFile).fastNoop(root, argv, cwd, env, {
      engineFile,
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
      stdout: process.stdout,
      why,
    });
  } catch (e) {
    why?.(`error: ${e instanceof Error ? e.message : String(e)}`);
    return null; // the full build decides
  }
}

// A command whose promise never settles (something awaited that never comes: a pipeline file whose
// top-level await never resolves, a wedged engine path) must not pass for a success: node exits 0
// once nothing is left to wait for. 'beforeExit' comes only then, never after process.exit().
let finished = false;
process.on('beforeExit', () => {
  if (finished || process.exitCode === 70) return;
  process.stderr.write(
    'rc1-build: internal error: the command stopped before it finished: it waited on something that will never come (a promise that never settled); nothing it started was reported done. If rc1.build.ts or a rule awaits at the top level, check what it waits for; otherwise please report this\n',
  );
  process.exitCode = 70;
});

// The stamp first: where it answers, it is quicker than a round trip to the server.
void tryFast().then(async (fast) => {
  if (fast !== null) process.exitCode = fast;
  else if (!(await tryServer())) {
    const { main } = await import('../dist/cli.js');
    process.exitCode = await main(argv);
  }
  finished = true;
});
