// Where the resident server's socket goes when <root>/.rc1/server.sock is too long: the user's
// private directory, checked with lstat (owner, mode 0700, not a link) before it is used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { isEngineStatePath } from '../../packages/engine/src/state/engine-state.ts';
import { procStat } from '../../packages/engine/src/state/process-identity.ts';
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
});
