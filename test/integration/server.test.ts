// The resident server (rc1-build server start) through the real CLI and a real server process:
// a served command gives the same stdout, exit code and outputs as in-process; signals and a
// killed client interrupt the build as in-process; a request's environment does not outlive it;
// a different module-load setting, a changed engine and a dead server's files send the command
// in-process; the server ends after its idle timeout and when its .rc1/ goes. Every test stops
// its server in a finally. server-native-client.test.ts runs every test here again with the
// commands sent by the native client (RC1_TEST_CLIENT=native: the launcher bin/rc1-build).
// The workspace and helpers: test/helpers/server-rig.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI, clientCommand } from '../helpers/rig.ts';
import {
  COPY,
  PIPELINE,
  alive,
  engineCopy,
  fakeServer,
  info,
  ledgerPids,
  mask,
  runAsync,
  servedCount,
  serverRig,
  waitFor,
  withServer,
} from '../helpers/server-rig.ts';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';

test('a served build, no-op and one-leaf change, prints, exits and builds as in-process; it runs in the server', async () => {
  const served = serverRig();
  const inproc = serverRig();
  const ledger = path.join(served.dir, '..', `${path.basename(served.dir)}.ledger`);
  await withServer(served, async (pid) => {
    try {
      for (const step of ['build', 'noop', 'change']) {
        if (step === 'change') {
          fs.appendFileSync(path.join(served.dir, 'src/s.txt'), 'x');
          fs.appendFileSync(path.join(inproc.dir, 'src/s.txt'), 'x');
        }
        const a = served.run(['-j', '2'], { LEDGER: ledger });
        const b = inproc.run(['-j', '2'], { RC1_NO_SERVER: '1' });
        assert.equal(a.code, 0, a.stderr);
        assert.equal(a.code, b.code);
        assert.equal(mask(a.stdout), mask(b.stdout), step);
        assert.equal(mask(a.stderr), mask(b.stderr), step);
        for (const o of ['out/a.txt', 'out/b.txt']) assert.equal(served.read(o), inproc.read(o), `${step}: ${o}`);
        const pids = ledgerPids(ledger);
        if (step === 'noop') assert.equal(pids.size, 0, 'a no-op runs no rule');
        else assert.deepEqual([...pids.values()], [pid, pid], `${step}: the rules ran in the server (pid ${pid})`);
      }
      assert.equal(servedCount(served), 3);
      // --json too: the same events apart from times and the hashing counts (a file changed
      // within the stat cache's racy window is hashed again, in-process or not).
      const a = served.run(['--json']);
      const b = inproc.run(['--json'], { RC1_NO_SERVER: '1' });
      assert.equal(a.code, 0);
      const plain = (r: { events: Record<string, unknown>[] }): unknown[] =>
        r.events.map(({ ms: _ms, stats: _stats, ...e }) => e);
      assert.deepEqual(plain(a), plain(b));
      assert.equal(a.events.length, b.events.length);
    } finally {
      inproc.cleanup();
      fs.rmSync(ledger, { force: true });
    }
  });
});

test('a failing rule (1), a gate (2) and a usage error (64) come back from the server with their codes', async () => {
  const r = serverRig();
  await withServer(r, async () => {
    const fail = r.run(['fail']);
    assert.equal(fail.code, 1, fail.stderr);
    assert.match(fail.stderr + fail.stdout, /this rule fails on purpose/);
    const gate = r.run(['g']);
    assert.equal(gate.code, 2, gate.stderr);
    const usage = r.run(['--no-such-flag']);
    assert.equal(usage.code, 64);
    const inproc = r.run(['--no-such-flag'], { RC1_NO_SERVER: '1' });
    assert.equal(usage.stderr, inproc.stderr);
    const unknown = r.run(['no_such_target']);
    assert.equal(unknown.code, 64);
    assert.match(unknown.stderr, /unknown target no_such_target/);
    assert.equal(servedCount(r), 4);
  });
});

test('SIGINT to the client interrupts the served build: exit 130, the rule aborted, the lock free, the server alive', async () => {
  const r = serverRig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  await withServer(r, async (pid) => {
    try {
      for (const [sig, want] of [
        ['SIGINT', 130],
        ['SIGTERM', 143],
      ] as const) {
        fs.rmSync(`${entered}.aborted`, { force: true });
        fs.rmSync(entered, { force: true });
        const child = r.spawn(['hold'], { HOLD_ENTERED: entered, HOLD_GO: path.join(r.dir, 'never') });
        const code = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
        await waitFor('the hold rule to start', () => fs.existsSync(entered));
        assert.equal(Number(fs.readFileSync(entered, 'utf8')), pid, 'the rule runs in the server');
        child.kill(sig);
        assert.equal(await code, want);
        assert.ok(fs.existsSync(`${entered}.aborted`), 'the rule saw its abort signal');
        assert.equal(currentHolder(r.dir), null, 'the workspace lock is free');
        assert.ok(alive(pid), 'the server goes on');
      }
      const after = r.run(['hold'], { HOLD_ENTERED: entered, HOLD_GO: r.dir });
      assert.equal(after.code, 0, after.stderr);
      assert.equal(r.read('out/hold.txt'), 'held');
    } finally {
      for (const f of [entered, `${entered}.aborted`]) fs.rmSync(f, { force: true });
    }
  });
});

test('a client killed with SIGKILL mid-build stops its build; the next build completes', async () => {
  const r = serverRig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  await withServer(r, async (pid) => {
    try {
      const child = r.spawn(['hold'], { HOLD_ENTERED: entered, HOLD_GO: path.join(r.dir, 'never') });
      await waitFor('the hold rule to start', () => fs.existsSync(entered));
      child.kill('SIGKILL');
      await waitFor('the rule to be aborted', () => fs.existsSync(`${entered}.aborted`));
      await waitFor('the lock to be released', () => currentHolder(r.dir) === null);
      assert.ok(alive(pid));
      const next = r.run(['hold', 'b'], { HOLD_ENTERED: entered, HOLD_GO: r.dir });
      assert.equal(next.code, 0, next.stderr);
      assert.equal(r.read('out/hold.txt'), 'held');
      assert.equal(r.read('out/b.txt'), 'source\n+a+b');
      assert.equal(r.run(['hold', 'b', '--json']).events.filter((e) => e.event === 'start').length, 0);
    } finally {
      for (const f of [entered, `${entered}.aborted`]) fs.rmSync(f, { force: true });
    }
  });
});

test("a request's environment does not outlive it: a secret given to one build is not seen by a later build's rule", async () => {
  const r = serverRig();
  await withServer(
    r,
    async () => {
      const one = r.run(['env'], { SECRET_X: 'sk-one-request-only' });
      assert.equal(one.code, 0, one.stderr);
      assert.equal(r.read('out/env.txt'), 'SECRET_X=sk-one-request-only at load sk-one-request-only');
      const two = r.run(['env', '--force'], { SECRET_X: '' });
      assert.equal(two.code, 0, two.stderr);
      assert.equal(r.read('out/env.txt'), 'SECRET_X= at load ');
      const env: Record<string, string | undefined> = { ...process.env };
      delete env.SECRET_X;
      const [cmd, ...pre] = clientCommand();
      const three = spawnSync(cmd, [...pre, 'env', '--force'], { cwd: r.dir, env, encoding: 'utf8' });
      assert.equal(three.status, 0, three.stderr);
      assert.equal(r.read('out/env.txt'), 'SECRET_X=(unset) at load (unset)');
      assert.equal(servedCount(r), 3);
      assert.doesNotMatch(r.read('.rc1/server.log'), /sk-one-request-only/);
    },
    { env: { SECRET_X: 'sk-of-the-starting-shell' } },
  );
});

test('a module-load setting that differs from the server’s (RC1_FSYNC) runs the command in-process', async () => {
  const r = serverRig();
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  await withServer(r, async (pid) => {
    try {
      const a = r.run(['a'], { LEDGER: ledger, RC1_FSYNC: 'off' });
      assert.equal(a.code, 0, a.stderr);
      const ran = ledgerPids(ledger).get('a');
      assert.ok(ran !== undefined && ran !== pid, 'in-process: not the server');
      assert.equal(servedCount(r), 0);
      fs.appendFileSync(path.join(r.dir, 'src/s.txt'), 'y');
      const b = r.run(['a'], { LEDGER: ledger });
      assert.equal(b.code, 0, b.stderr);
      assert.equal(ledgerPids(ledger).get('a'), pid, 'the same setting as the server: served');
    } finally {
      fs.rmSync(ledger, { force: true });
    }
  });
});

test('a changed engine (dist) sends the command in-process and ends the server', async () => {
  const { eng, cli } = engineCopy();
  const r = serverRig();
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  const [cmd, ...pre] = clientCommand(cli);
  const run = (args: string[]) =>
    spawnSync(cmd, [...pre, ...args], {
      cwd: r.dir,
      encoding: 'utf8',
      env: { ...process.env, LEDGER: ledger },
    });
  try {
    await withServer(
      r,
      async (pid) => {
        assert.equal(run(['a']).status, 0);
        assert.equal(ledgerPids(ledger).get('a'), pid);
        const later = new Date(Date.now() + 5000);
        fs.utimesSync(path.join(eng, 'dist', 'cli.js'), later, later);
        fs.appendFileSync(path.join(r.dir, 'src/s.txt'), 'z');
        const b = run(['a']);
        assert.equal(b.status, 0, b.stderr);
        const ran = ledgerPids(ledger).get('a');
        assert.ok(ran !== undefined && ran !== pid, 'in-process after the engine changed');
        await waitFor('the server to exit', () => !alive(pid));
        await waitFor('its server.json to go', () => !r.exists('.rc1/server.json'));
      },
      { cli },
    );
  } finally {
    fs.rmSync(eng, { recursive: true, force: true });
    fs.rmSync(ledger, { force: true });
  }
});

test("a dead server's server.json: the command runs in-process and the stale file is removed", () => {
  const r = serverRig();
  try {
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const pid = Number(dead.stdout.trim());
    r.write(
      '.rc1/server.json',
      JSON.stringify({
        format: 1,
        pid,
        startTicks: '1',
        socket: path.join(r.dir, '.rc1', 'server.sock'),
        identity: 'x',
      }),
    );
    const t0 = performance.now();
    const b = r.run(['b']);
    assert.equal(b.code, 0, b.stderr);
    assert.ok(performance.now() - t0 < 60_000);
    assert.equal(r.read('out/b.txt'), 'source\n+a+b');
    assert.ok(!r.exists('.rc1/server.json'), 'the stale server.json is removed');
  } finally {
    r.cleanup();
  }
});

test('the server ends after its idle timeout, and when its .rc1/ is removed', async () => {
  const r = serverRig();
  await withServer(
    r,
    async (pid) => {
      assert.ok(alive(pid), 'alive after start');
      assert.equal(r.run(['b']).code, 0);
      assert.ok(alive(pid), 'alive before its idle timeout');
      await waitFor('the idle server to exit', () => !alive(pid), 10_000);
      assert.ok(!r.exists('.rc1/server.json'));
    },
    { args: ['--idle-timeout=2'] },
  );
  const r2 = serverRig();
  await withServer(r2, async (pid) => {
    assert.equal(r2.run(['b']).code, 0);
    fs.rmSync(path.join(r2.dir, '.rc1'), { recursive: true, force: true });
    await waitFor('the server to exit', () => !alive(pid), 10_000);
  });
});

test('server status, start again and stop; clean keeps the server files and the server', async () => {
  const r = serverRig();
  await withServer(r, async (pid) => {
    assert.match(r.run(['server', 'status']).stdout, new RegExp(`running for .*\\n  pid ${pid}`));
    const again = r.run(['server', 'start']);
    assert.match(again.stdout, /already running/);
    const clean = r.run(['clean']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.doesNotMatch(clean.stdout, /server/);
    assert.ok(r.exists('.rc1/server.json'));
    assert.ok(alive(pid));
    const stop = r.run(['server', 'stop']);
    assert.match(stop.stdout, /stopped/);
    assert.ok(!alive(pid));
    assert.match(r.run(['server', 'status']).stdout, /no server running/);
  });
});

test('a command that comes while the server is busy runs in-process and meets the workspace lock as without a server', async () => {
  const r = serverRig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  const go = path.join(r.dir, '..', `${path.basename(r.dir)}.go`);
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  await withServer(r, async (pid) => {
    try {
      const a = r.spawn(['hold'], { HOLD_ENTERED: entered, HOLD_GO: go });
      const aCode = new Promise<number | null>((res) => a.on('exit', (c) => res(c)));
      await waitFor('the hold rule to start', () => fs.existsSync(entered));
      const b = r.run(['b'], { LEDGER: ledger });
      assert.notEqual(b.code, 0);
      assert.match(b.stderr, new RegExp(`pid ${pid}`), 'refused by the lock the server holds');
      const c = r.spawn(['b', '--wait=60'], { LEDGER: ledger });
      const cCode = new Promise<number | null>((res) => c.on('exit', (x) => res(x)));
      let cErr = '';
      c.stderr!.on('data', (d) => {
        cErr += d;
      });
      // Released only once c waits on the lock: a c that connects after the hold ends is served.
      await waitFor('the second build to wait on the lock', () =>
        cErr.includes('waiting for the build holding this workspace'),
      );
      fs.writeFileSync(go, 'go');
      assert.equal(await aCode, 0);
      assert.equal(await cCode, 0);
      const ran = ledgerPids(ledger).get('b');
      assert.ok(ran !== undefined && ran !== pid, 'the waiting build ran in-process');
    } finally {
      for (const f of [entered, go, ledger]) fs.rmSync(f, { force: true });
    }
  });
});

test("the files a served build creates get the client's umask, as in-process", async () => {
  const served = serverRig();
  const inproc = serverRig();
  const build = (dir: string, env: Record<string, string>) =>
    spawnSync(
      'sh',
      [
        '-c',
        `umask 077 && exec ${clientCommand()
          .map((a) => `"${a}"`)
          .join(' ')} a`,
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, ...env },
      },
    );
  await withServer(served, async () => {
    try {
      assert.equal(build(served.dir, {}).status, 0);
      assert.equal(build(inproc.dir, { RC1_NO_SERVER: '1' }).status, 0);
      const mode = (d: string): number => fs.statSync(path.join(d, 'out/a.txt')).mode & 0o777;
      assert.equal(mode(inproc.dir) & 0o077, 0, 'umask 077 in-process: no group or other bits');
      assert.equal(mode(served.dir), mode(inproc.dir));
      assert.equal(servedCount(served), 1);
    } finally {
      inproc.cleanup();
    }
  });
});

test("a pipeline's own command and report run in-process (their modules' state and signals are their own)", async () => {
  const r = serverRig();
  await withServer(r, async (pid) => {
    assert.equal(r.run(['report']).code, 0);
    const who = r.run(['whoami']);
    assert.equal(who.code, 0, who.stderr);
    const ran = Number(who.stdout.trim());
    assert.ok(ran > 0 && ran !== pid, `in-process, not in the server (pid ${ran})`);
    assert.equal(servedCount(r), 0);
    assert.equal(r.run(['b']).code, 0);
    assert.equal(servedCount(r), 1, 'a build next to it is served');
  });
});

test("the server never loads the pipeline's modules on its main thread: the first build after a rule or rc1.build.ts changed runs in-process, the next is served", async () => {
  const r = serverRig();
  const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
  await withServer(r, async (pid) => {
    try {
      assert.equal(r.run(['b'], { LEDGER: ledger }).code, 0);
      assert.equal(ledgerPids(ledger).get('a'), pid, 'served');
      // A changed rule: its params schema is read on the main thread before the build.
      r.write('rules/copy.ts', COPY.replace("'copied'", "'copied again'"));
      const first = r.run(['b'], { LEDGER: ledger });
      assert.equal(first.code, 0, first.stderr);
      const ran = ledgerPids(ledger).get('a');
      assert.ok(ran !== undefined && ran !== pid, 'in-process after the rule changed');
      fs.appendFileSync(path.join(r.dir, 'src/s.txt'), 'w');
      assert.equal(r.run(['b'], { LEDGER: ledger }).code, 0);
      assert.equal(ledgerPids(ledger).get('a'), pid, 'served again once the caches hold the new rule');
      // A changed rc1.build.ts: the pipeline module is imported again.
      r.write('rc1.build.ts', PIPELINE.replace("freeFormConfig: ['x']", "freeFormConfig: ['x', 'y']"));
      const status = r.run(['status']);
      assert.equal(status.code, 0, status.stderr);
      assert.equal(servedCount(r), 2, 'status after the pipeline changed ran in-process');
      assert.equal(r.run(['status']).code, 0);
      assert.equal(servedCount(r), 3, 'and the next one is served');
    } finally {
      fs.rmSync(ledger, { force: true });
    }
  });
});

test('two servers started at once: one is left, serving, with its socket', async () => {
  const r = serverRig();
  const pids: number[] = [];
  try {
    const prime = r.run(['-n', 'a', 'b'], { RC1_NO_SERVER: '1' });
    assert.equal(prime.code, 0, prime.stderr);
    const start = (): Promise<string> =>
      new Promise((resolve) => {
        const c = spawn(process.execPath, [CLI, '__server', r.dir, '600'], {
          cwd: r.dir,
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { ...process.env },
        });
        pids.push(c.pid!);
        let out = '';
        c.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('ready')) resolve(out);
        });
        c.on('exit', () => resolve(out));
      });
    await Promise.all([start(), start()]);
    await waitFor('one of the two to exit', () => pids.filter(alive).length === 1);
    const left = pids.find(alive)!;
    assert.equal(info(r)?.pid, left);
    assert.ok(fs.existsSync(info(r)!.socket), 'the socket of the server left is there');
    assert.equal(r.run(['b']).code, 0);
    assert.equal(servedCount(r), 1);
  } finally {
    spawnSync(process.execPath, [CLI, 'server', 'stop'], { cwd: r.dir, env: process.env });
    for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
    r.cleanup();
  }
});

test('two servers started at once, the first overtaken between its listen and its chmod: one is left, answering on its socket', async () => {
  const r = serverRig();
  const pids: number[] = [];
  try {
    const prime = r.run(['-n', 'a', 'b'], { RC1_NO_SERVER: '1' });
    assert.equal(prime.code, 0, prime.stderr);
    const start = (env: Record<string, string>): Promise<string> =>
      new Promise((resolve) => {
        const c = spawn(process.execPath, [CLI, '__server', r.dir, '600'], {
          cwd: r.dir,
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { ...process.env, ...env },
        });
        pids.push(c.pid!);
        let out = '';
        c.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('ready')) resolve(out);
        });
        c.on('exit', () => resolve(out));
      });
    const socket = path.join(r.dir, '.rc1', 'server.sock');
    // The first listens, then sleeps 3 s before its chmod; the second starts while it sleeps.
    const first = start({ RC1_FAULT_SERVER_START_PAUSE_MS: '3000' });
    await waitFor('the first server to listen', () => fs.existsSync(socket));
    await Promise.all([first, start({})]);
    await waitFor('one of the two to exit', () => pids.filter(alive).length === 1);
    const left = pids.find(alive)!;
    assert.equal(info(r)?.pid, left, 'server.json names the server left');
    const status = r.run(['server', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /commands served: 0/, status.stdout);
    assert.equal(r.run(['b']).code, 0);
    assert.equal(servedCount(r), 1, 'the build is served');
  } finally {
    spawnSync(process.execPath, [CLI, 'server', 'stop'], { cwd: r.dir, env: process.env });
    for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
    r.cleanup();
  }
});

test("the client sends nothing to a listener that is not the workspace's server: a dead server's socket path, or a live server's socket replaced", async () => {
  const r = serverRig();
  await withServer(r, async (pid) => {
    const i = info(r)!;
    assert.equal(fs.statSync(path.join(r.dir, '.rc1', 'server.json')).mode & 0o777, 0o600, 'server.json is 0600');
    // The live server's socket replaced by another listener (one that does not know server.json's token).
    fs.rmSync(i.socket);
    let fake = await fakeServer(i.socket, { t: 'hello', token: 'not-the-token' });
    try {
      const b = await runAsync(r, ['b'], { OPENAI_API_KEY: 'sk-x-live-server' });
      assert.equal(b.code, 0, b.stderr);
      assert.doesNotMatch(b.stdout, /^ok$/m, 'not the listener’s answer');
      assert.equal(r.read('out/b.txt'), 'source\n+a+b', 'built in-process');
      assert.doesNotMatch(fake.got(), /sk-x-live-server/, 'the listener got no environment');
      assert.equal(fake.got(), '', 'the listener got nothing');
    } finally {
      await fake.close();
    }
    // The server killed: a listener on its socket path is never connected to.
    process.kill(pid, 'SIGKILL');
    await waitFor('the server to die', () => !alive(pid));
    fs.rmSync(i.socket, { force: true });
    fake = await fakeServer(i.socket, null);
    try {
      fs.appendFileSync(path.join(r.dir, 'src/s.txt'), 'k');
      const b = await runAsync(r, ['b'], { OPENAI_API_KEY: 'sk-x-dead-server' });
      assert.equal(b.code, 0, b.stderr);
      assert.equal(r.read('out/b.txt'), 'source\nk+a+b', 'built in-process');
      assert.equal(fake.got(), '', 'the listener got nothing');
      assert.ok(!r.exists('.rc1/server.json'), "the dead server's server.json is removed");
    } finally {
      await fake.close();
    }
  });
});

/** The pids of a process's children (every thread's), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    const c = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
    if (c) out.push(...c.split(/\s+/).map(Number));
  }
  return out;
}

test("no child process the server keeps holds a request's environment (esbuild's service after a served compile)", {
  skip: process.platform !== 'linux' ? 'reads /proc/<pid>/environ (Linux only)' : false,
}, async () => {
  const r = serverRig();
  await withServer(r, async (pid) => {
    // A changed rule: the server compiles it (esbuild's service starts, in the request's environment),
    // then runs the command in-process (its params schema would load on the main thread).
    r.write('rules/copy.ts', COPY.replace("'copied'", "'copied, changed'"));
    const a = r.run(['a'], { MY_API_KEY: 'sk-live-123' });
    assert.equal(a.code, 0, a.stderr);
    assert.equal(r.run(['status'], { MY_API_KEY: 'sk-live-456' }).code, 0);
    const holding = (): string[] =>
      childrenOf(pid)
        .filter((c) => {
          try {
            return /sk-live-/.test(fs.readFileSync(`/proc/${c}/environ`, 'latin1'));
          } catch {
            return false; // exited meanwhile
          }
        })
        .map(String);
    const t0 = Date.now();
    while (holding().length && Date.now() - t0 < 5000) await sleep(50);
    assert.deepEqual(holding(), [], `children of the server ${pid} with a request's variable`);
  });
});

test('a served build goes on to its end when the engine changes on disk; the server exits after it', async () => {
  const { eng, cli } = engineCopy();
  const r = serverRig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  const go = path.join(r.dir, '..', `${path.basename(r.dir)}.go`);
  try {
    await withServer(
      r,
      async (pid) => {
        const [cmd, ...pre] = clientCommand(cli);
        const child = spawn(cmd, [...pre, 'hold'], {
          cwd: r.dir,
          stdio: 'ignore',
          env: { ...process.env, HOLD_ENTERED: entered, HOLD_GO: go },
        });
        const code = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
        await waitFor('the hold rule to start', () => fs.existsSync(entered));
        assert.equal(Number(fs.readFileSync(entered, 'utf8')), pid, 'served');
        const later = new Date(Date.now() + 5000);
        fs.utimesSync(path.join(eng, 'dist', 'api.js'), later, later);
        await sleep(2500); // the server checks dist/ once a second
        assert.equal(child.exitCode, null, 'the build is not interrupted');
        assert.ok(alive(pid), 'the server waits for its command');
        fs.writeFileSync(go, 'go');
        assert.equal(await code, 0);
        assert.equal(r.read('out/hold.txt'), 'held');
        await waitFor('the server to exit after the command', () => !alive(pid));
      },
      { cli },
    );
  } finally {
    for (const f of [entered, go]) fs.rmSync(f, { force: true });
    fs.rmSync(eng, { recursive: true, force: true });
  }
});

test('--idle-timeout above the longest timer (2147483 s) is a usage error (64)', async () => {
  const r = serverRig();
  try {
    const big = r.run(['server', 'start', '--idle-timeout=2147484']);
    assert.equal(big.code, 64, big.stdout + big.stderr);
    assert.match(big.stderr, /at most 2147483 seconds/);
    assert.ok(!r.exists('.rc1/server.json'), 'no server started');
  } finally {
    spawnSync(process.execPath, [CLI, 'server', 'stop'], { cwd: r.dir, env: process.env });
    r.cleanup();
  }
});

test('a server that accepts the connection but does not answer (stopped): the client runs in-process after ~2 s; a signal before the answer ends it (143)', async () => {
  const r = serverRig();
  await withServer(r, async (pid) => {
    process.kill(pid, 'SIGSTOP');
    try {
      const t0 = Date.now();
      const st = await runAsync(r, ['status', 'a'], {}, 30_000);
      assert.equal(st.code, 0, st.stderr);
      assert.ok(Date.now() - t0 < 20_000);
      assert.match(st.stderr, new RegExp(`the server \\(pid ${pid}\\) did not answer within 2 s; running in-process`));
      assert.equal(st.stderr.match(/did not answer/g)?.length, 1, 'said once');
      const c = r.spawn(['status', 'a']);
      const code = new Promise<number | null>((res) => c.on('exit', (x) => res(x)));
      await sleep(700);
      c.kill('SIGTERM');
      const killer = setTimeout(() => c.kill('SIGKILL'), 5000);
      assert.equal(await code, 143, 'the first SIGTERM ends the waiting client');
      clearTimeout(killer);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    assert.equal(r.run(['status', 'a']).code, 0);
  });
});
