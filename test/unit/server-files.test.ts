// Where the resident server's socket goes when <root>/.rc1/server.sock is too long: the user's
// private directory, checked with lstat (owner, mode 0700, not a link) before it is used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { engineStateEntry, isEngineStatePath } from '../../packages/engine/src/state/engine-state.ts';
import { procStat, selfIdentity } from '../../packages/engine/src/state/process-identity.ts';
import {
  SERVER_START_LOCK,
  ensurePrivateDir,
  socketPathFor,
  takeStartLock,
} from '../../packages/engine/src/server/server-files.ts';

test('a workspace path too long for a socket puts the socket in $XDG_RUNTIME_DIR/rc1-build, else in a per-user temp directory', () => {
  const long = path.join('/w', 'x'.repeat(120));
  assert.equal(path.dirname(socketPathFor(long, { XDG_RUNTIME_DIR: '/run/user/7' })), '/run/user/7/rc1-build');
  assert.equal(path.dirname(socketPathFor(long, {})), path.join(os.tmpdir(), `rc1-build-${process.getuid!()}`));
  assert.equal(socketPathFor('/w/short', {}), '/w/short/.rc1/server.sock');
});

test('the private directory is created 0700, and one with group or other permission, or a link, is refused', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-private-'));
  try {
    const ok = path.join(base, 'ok');
    ensurePrivateDir(ok);
    assert.equal(fs.lstatSync(ok).mode & 0o777, 0o700);
    ensurePrivateDir(ok); // existing and right: accepted
    const open = path.join(base, 'open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o755);
    assert.throws(() => ensurePrivateDir(open), /mode 755; it must be 0700/);
    const link = path.join(base, 'link');
    fs.symlinkSync(ok, link);
    assert.throws(() => ensurePrivateDir(link), /not a directory/);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('the start lock: held while its holder runs, broken when the holder is gone, released only by its holder', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-startlock-'));
  const lock = path.join(root, '.rc1', SERVER_START_LOCK);
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const names = (pid: number): string => JSON.stringify({ pid, startTicks: procStat(pid)?.startTicks ?? null });
    fs.mkdirSync(path.dirname(lock));
    fs.writeFileSync(lock, names(holder.pid!));
    const held = takeStartLock(root);
    assert.ok('held' in held && held.held.includes(`pid ${holder.pid}`), JSON.stringify(held));
    assert.equal(fs.readFileSync(lock, 'utf8'), names(holder.pid!), 'a live holder keeps its lock');
    // A holder that exited (a server killed while starting): its lock is broken and taken.
    const gone = spawnSync('true').pid;
    fs.writeFileSync(lock, JSON.stringify({ pid: gone, startTicks: '1' }));
    const mine = takeStartLock(root);
    assert.ok('release' in mine, JSON.stringify(mine));
    assert.equal(JSON.parse(fs.readFileSync(lock, 'utf8')).pid, process.pid);
    assert.ok('held' in takeStartLock(root), 'held by this process now: a second take is refused');
    mine.release();
    assert.equal(fs.existsSync(lock), false, 'released');
    assert.deepEqual(fs.readdirSync(path.dirname(lock)), [], 'nothing left beside it');
  } finally {
    holder.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("the start lock is the engine's own name under .rc1/: no target may declare it as its state, and clean does not report it as left over", () => {
  assert.equal(isEngineStatePath(`.rc1/${SERVER_START_LOCK}`), true);
  // Its temp files and the locks being broken, under their names of this and of earlier engines.
  for (const aux of ['tmp-0a1b2c', 'stale-0a1b2c', '4242', 'stale.4242']) {
    assert.equal(isEngineStatePath(`.rc1/${SERVER_START_LOCK}.${aux}`), true, aux);
    assert.equal(
      engineStateEntry(`${SERVER_START_LOCK}.${aux}`)?.clean,
      'keep',
      `clean keeps ${aux}: a starting server may be using it`,
    );
  }
  assert.equal(
    isEngineStatePath(`.rc1/${SERVER_START_LOCK}x`),
    false,
    "a name that only begins alike is not the engine's",
  );
});

test('a dead holder whose temp name is still linked to the lock (same pid now) does not block the start', () => {
  // A server SIGKILLed between its link and its finally leaves server.start.lock.<pid> linked to
  // the lock; the next server with that pid must neither write into that inode nor refuse itself.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-startlock-'));
  try {
    const dir = path.join(root, '.rc1');
    fs.mkdirSync(dir);
    const lock = path.join(dir, SERVER_START_LOCK);
    const dead = JSON.stringify({ pid: process.pid, startTicks: '1' }); // a dead server's (other start time)
    fs.writeFileSync(lock, dead);
    fs.linkSync(lock, `${lock}.${process.pid}`); // its temp name, never removed (killed right after the link)
    const got = takeStartLock(root);
    assert.ok('release' in got, `refused: ${'held' in got ? got.held : ''}`);
    assert.equal(JSON.parse(fs.readFileSync(lock, 'utf8')).pid, process.pid);
    assert.equal(fs.existsSync(`${lock}.${process.pid}`), false, "the dead server's temp name is swept");
    got.release();
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing left beside it');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the start lock judges its holder as the workspace lock does: a lock from before a reboot is broken, one from another host or PID namespace is never broken', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-startlock-'));
  const lock = path.join(root, '.rc1', SERVER_START_LOCK);
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    fs.mkdirSync(path.dirname(lock));
    const me = selfIdentity();
    assert.ok(me.bootId && me.pidNs, 'this test needs /proc (boot id and PID namespace)');
    const live = { ...me, pid: holder.pid!, startTicks: procStat(holder.pid!)!.startTicks };
    // Its pid and start time match a running process, but the machine has rebooted since.
    fs.writeFileSync(lock, JSON.stringify({ ...live, bootId: '00000000-0000-0000-0000-000000000000' }));
    const got = takeStartLock(root);
    assert.ok('release' in got, `refused: ${'held' in got ? got.held : ''}`);
    got.release();
    for (const other of [{ host: `not-${me.host}` }, { pidNs: 'pid:[1]' }]) {
      const text: string = JSON.stringify({
        pid: 999_999_999,
        startTicks: '1',
        host: me.host,
        bootId: me.bootId,
        pidNs: me.pidNs,
        ...other,
      });
      fs.writeFileSync(lock, text);
      const held = takeStartLock(root);
      assert.ok('held' in held && held.held.includes('cannot be checked'), JSON.stringify(held));
      assert.equal(fs.readFileSync(lock, 'utf8'), text, 'left alone');
    }
  } finally {
    holder.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("taking the start lock sweeps temp and aside files left by killed servers, never a live one's fresh temp file", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-startlock-'));
  const dir = path.join(root, '.rc1');
  const lock = path.join(dir, SERVER_START_LOCK);
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    fs.mkdirSync(dir);
    const live = JSON.stringify({ ...selfIdentity(), pid: holder.pid!, startTicks: procStat(holder.pid!)!.startTicks });
    const gone = JSON.stringify({ pid: spawnSync('true').pid, startTicks: '1' });
    const old = (Date.now() - 120_000) / 1000;
    const put = (name: string, text: string, mtime?: number): void => {
      fs.writeFileSync(`${lock}.${name}`, text);
      if (mtime !== undefined) fs.utimesSync(`${lock}.${name}`, mtime, mtime);
    };
    put('tmp-fresh', live); // a live server's, being taken right now: kept
    put('tmp-dead', gone); // its writer is dead
    put('stale-old', live, old); // two minutes old: no take holds its files that long
    put('stale.123', 'not json', old); // an earlier engine's aside name
    put('tmp-torn', '', undefined); // fresh and unreadable: kept until it is old
    const got = takeStartLock(root);
    assert.ok('release' in got, JSON.stringify(got));
    got.release();
    assert.deepEqual(fs.readdirSync(dir).sort(), [`${SERVER_START_LOCK}.tmp-fresh`, `${SERVER_START_LOCK}.tmp-torn`]);
  } finally {
    holder.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  }
});
