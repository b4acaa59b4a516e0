// The native thin client (packages/engine/client/rc1-client.c, run by the launcher bin/rc1-build):
// every test of server.test.ts and client-signals.test.ts again with their commands sent by the
// native client, then what is the native client's own: it is the process that talks to the server
// (no node); it and the JavaScript client are one engine to the server; on a terminal it prints
// what the JavaScript one does; the environment and the command line reach the build byte for
// byte; a refused command is asked of the server once; the launcher finds the package through
// npm's links, and without the native client runs the JavaScript one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, REPO } from '../helpers/rig.ts';
import { engineCopy, ledgerPids, mask, servedCount, serverRig, waitFor, withServer } from '../helpers/server-rig.ts';

const ENGINE = path.join(REPO, 'packages', 'engine');
const NATIVE = path.join(ENGINE, 'dist', 'rc1-client');
const LAUNCHER = path.join(ENGINE, 'bin', 'rc1-build');
const compiler = process.env.CC || 'cc';
const haveCompiler = spawnSync('sh', ['-c', 'command -v "$0"', compiler]).status === 0;
/** script(1) (util-linux) runs a command on a pseudo-terminal. */
const haveScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;

if (!fs.existsSync(NATIVE)) {
  // Built by `npm run build` wherever a C compiler is: missing then is a defect, not n/a.
  test('the native client is built beside the engine', {
    skip: haveCompiler ? false : `n/a: no C compiler (${compiler}) on this machine, so no native client to test`,
  }, () => {
    assert.fail(`${NATIVE} is missing although ${compiler} is here: npm run build (packages/engine) builds it`);
  });
} else {
  process.env.RC1_TEST_CLIENT = 'native';
  await import('./server.test.ts');
  await import('./client-signals.test.ts');

  /** Runs the launcher (or another command line) in a workspace; its exit code and output. */
  const launch = (cmd: string[], cwd: string, env: Record<string, string> = {}) => {
    const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  test('the native client is the process that talks to the server: no node runs for a served command', async () => {
    const r = serverRig();
    const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
    await withServer(r, async (pid) => {
      try {
        const child = spawn(LAUNCHER, ['hold'], {
          cwd: r.dir,
          stdio: 'ignore',
          env: { ...process.env, HOLD_ENTERED: entered, HOLD_GO: r.dir },
        });
        const code = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
        await waitFor('the hold rule to start', () => fs.existsSync(entered));
        assert.equal(Number(fs.readFileSync(entered, 'utf8')), pid, 'served');
        // The launcher execs the client in its own process: the pid the test started is the client's.
        assert.equal(fs.readlinkSync(`/proc/${child.pid}/exe`), fs.realpathSync(NATIVE));
        assert.equal(await code, 0);
      } finally {
        fs.rmSync(entered, { force: true });
      }
    });
  });

  test('the JavaScript and the native client are one engine to the server: both served, the server never restarted', async () => {
    const r = serverRig();
    const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
    await withServer(r, async (pid) => {
      try {
        const clients = [[process.execPath, CLI], [LAUNCHER], [process.execPath, CLI], [LAUNCHER]];
        for (const [i, cmd] of clients.entries()) {
          fs.appendFileSync(path.join(r.dir, 'src/s.txt'), String(i));
          const b = launch([...cmd, 'a'], r.dir, { LEDGER: ledger });
          assert.equal(b.code, 0, b.stderr);
          assert.equal(ledgerPids(ledger).get('a'), pid, `${cmd.join(' ')}: served`);
        }
        assert.equal(servedCount(r), 4);
        assert.doesNotMatch(fs.readFileSync(path.join(r.dir, '.rc1/server.log'), 'utf8'), /refused|exiting/);
      } finally {
        fs.rmSync(ledger, { force: true });
      }
    });
  });

  test('the environment and the command line reach a served build byte for byte, from a subdirectory and with -C', async () => {
    const r = serverRig();
    const inproc = serverRig();
    // Quotes, backslashes, control characters, non-ASCII and a character outside the BMP.
    const value = 'a"b\\c\nd\te\u0001f ü 漢字 🚀 =x';
    await withServer(r, async () => {
      try {
        const sub = path.join(r.dir, 'src');
        const a = launch([LAUNCHER, 'env', '--force'], sub, { SECRET_X: value });
        assert.equal(a.code, 0, a.stderr);
        const b = launch([process.execPath, CLI, 'env', '--force'], inproc.dir, {
          SECRET_X: value,
          RC1_NO_SERVER: '1',
        });
        assert.equal(b.code, 0, b.stderr);
        assert.equal(r.read('out/env.txt'), `SECRET_X=${value} at load ${value}`);
        assert.equal(r.read('out/env.txt'), inproc.read('out/env.txt'));
        // -C with a path that needs resolving, from outside the workspace.
        const c = launch([LAUNCHER, '-C', `${r.dir}/src/../`, 'env', '--force'], os.tmpdir(), { SECRET_X: 'two' });
        assert.equal(c.code, 0, c.stderr);
        assert.equal(r.read('out/env.txt'), 'SECRET_X=two at load two');
        const d = launch([LAUNCHER, `--directory=${r.dir}`, 'no such target'], os.tmpdir());
        assert.equal(d.code, 64);
        assert.match(d.stderr, /unknown target no such target/);
        assert.equal(servedCount(r), 3);
      } finally {
        inproc.cleanup();
      }
    });
  });

  test('on a terminal a served build prints what the JavaScript client prints there (colour); in a pipe, no colour', {
    skip: haveScript ? false : 'n/a: no script(1) here to give the client a terminal',
  }, async () => {
    const r = serverRig();
    await withServer(r, async () => {
      const onTerminal = (cmd: string[]): string => {
        const line = `stty cols 91; ${cmd.map((a) => `'${a}'`).join(' ')} a --force`;
        const t = spawnSync('script', ['-qec', line, '/dev/null'], { cwd: r.dir, encoding: 'utf8', env: process.env });
        assert.equal(t.status, 0, t.stdout + t.stderr);
        return mask(t.stdout.replace(/\r/g, ''));
      };
      const native = onTerminal([LAUNCHER]);
      const js = onTerminal([process.execPath, CLI]);
      assert.match(native, /\x1b\[/, `colour on a terminal:\n${native}`);
      assert.equal(native, js);
      const piped = launch([LAUNCHER, 'a', '--force'], r.dir);
      assert.equal(piped.code, 0, piped.stderr);
      assert.doesNotMatch(piped.stdout + piped.stderr, /\x1b\[/);
      assert.equal(servedCount(r), 3);
    });
  });

  test('a server.json that is not JSON, or names no socket, pid or token: the command runs in-process', () => {
    const r = serverRig();
    try {
      const bad = ['{"socket": "/nowhere", "pid": ', '[1, 2]', '{"socket": 7, "pid": "x", "token": null}', ''];
      for (const [i, text] of bad.entries()) {
        r.write('.rc1/server.json', text);
        fs.appendFileSync(path.join(r.dir, 'src/s.txt'), String(i));
        const b = launch([LAUNCHER, 'b'], r.dir);
        assert.equal(b.code, 0, `${JSON.stringify(text)}: ${b.stderr}`);
        assert.equal(r.read('out/b.txt'), `source\n${'0123'.slice(0, i + 1)}+a+b`);
      }
    } finally {
      r.cleanup();
    }
  });

  test('a command the server refuses is asked of it once, then runs in-process', async () => {
    const r = serverRig();
    const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
    await withServer(r, async (pid) => {
      try {
        const a = launch([LAUNCHER, 'a'], r.dir, { LEDGER: ledger, RC1_FSYNC: 'off' });
        assert.equal(a.code, 0, a.stderr);
        const ran = ledgerPids(ledger).get('a');
        assert.ok(ran !== undefined && ran !== pid, 'in-process');
        const log = fs.readFileSync(path.join(r.dir, '.rc1/server.log'), 'utf8');
        assert.equal(log.match(/refused a request/g)?.length, 1, log);
      } finally {
        fs.rmSync(ledger, { force: true });
      }
    });
  });

  test("the launcher works through npm's links (node_modules/.bin/rc1-build), and without a native client runs the JavaScript one", async () => {
    const { eng, cli } = engineCopy();
    const r = serverRig();
    const ledger = path.join(r.dir, '..', `${path.basename(r.dir)}.ledger`);
    const nm = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-nm-'));
    try {
      // As npm installs it: node_modules/rc1-build -> the package, .bin/rc1-build -> ../rc1-build/bin/rc1-build.
      fs.mkdirSync(path.join(nm, 'node_modules', '.bin'), { recursive: true });
      fs.symlinkSync(eng, path.join(nm, 'node_modules', 'rc1-build'));
      fs.symlinkSync('../rc1-build/bin/rc1-build', path.join(nm, 'node_modules', '.bin', 'rc1-build'));
      const bin = path.join(nm, 'node_modules', '.bin', 'rc1-build');
      await withServer(
        r,
        async (pid) => {
          const a = launch([bin, 'a'], r.dir, { LEDGER: ledger });
          assert.equal(a.code, 0, a.stderr);
          assert.equal(ledgerPids(ledger).get('a'), pid, 'served through the links');
          fs.rmSync(path.join(eng, 'dist', 'rc1-client'));
          fs.appendFileSync(path.join(r.dir, 'src/s.txt'), 'n');
          const b = launch([bin, 'a'], r.dir, { LEDGER: ledger });
          assert.equal(b.code, 0, b.stderr);
          assert.equal(ledgerPids(ledger).get('a'), pid, 'served by the JavaScript client');
          const c = launch([bin, 'a'], r.dir, { RC1_NO_SERVER: '1' });
          assert.equal(c.code, 0, c.stderr);
        },
        { cli },
      );
    } finally {
      fs.rmSync(eng, { recursive: true, force: true });
      fs.rmSync(nm, { recursive: true, force: true });
      fs.rmSync(ledger, { force: true });
    }
  });
}
