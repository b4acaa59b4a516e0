// Lock liveness from faked holder records: PID namespaces and this process's own pid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { holderState, selfIdentity } from '../../packages/engine/src/state/process-identity.ts';
import { LockedError, WorkspaceLock } from '../../packages/engine/src/state/workspace-lock.ts';

test('a holder in another PID namespace on this host and boot is unknown (never broken), with the reason', () => {
  const me = { ...selfIdentity(), pidNs: 'pid:[4026531836]' };
  // A pid that does not exist here: in our namespace it would be dead.
  const holder = { pid: 999_999, host: me.host, bootId: me.bootId, startTicks: '12345', pidNs: 'pid:[4026532999]' };
  const st = holderState(holder, false, me);
  assert.equal(st.kind, 'unknown');
  assert.match(
    (st as { why: string }).why,
    /another PID namespace \(pid:\[4026532999\]; this build is in pid:\[4026531836\]/,
  );
  assert.equal(
    holderState({ ...holder, pidNs: me.pidNs }, false, me).kind,
    'dead',
    'same namespace: looked up, and absent',
  );
  assert.equal(
    holderState({ ...holder, pidNs: undefined }, false, me).kind,
    'dead',
    'a record without a namespace: checked as before',
  );
});

test("a record with this process's pid is alive when its start time is ours, dead when it is not", () => {
  const me = selfIdentity();
  assert.ok(me.startTicks, 'this test needs /proc');
  const rec = { pid: me.pid, host: me.host, bootId: me.bootId, pidNs: me.pidNs, startTicks: me.startTicks };
  assert.equal(holderState(rec, false).kind, 'alive', 'another lock object of this very process');
  const old = holderState({ ...rec, startTicks: String(Number(me.startTicks) + 1) }, false);
  assert.equal(old.kind, 'dead');
  assert.match((old as { why: string }).why, /this process's own \(a restart reused it\)/);
});

test("a second lock object in the same process does not break the first one's live lock; the lock records the PID namespace", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-lock-'));
  try {
    const a = new WorkspaceLock(path.join(dir, 'lock'));
    a.acquire('first');
    const top = fs
      .readdirSync(path.join(dir, 'lock'))
      .filter((n) => /^\d{16}$/.test(n))
      .sort()
      .at(-1)!;
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'lock', top), 'utf8')) as { pidNs?: string };
    if (fs.existsSync('/proc/self/ns/pid')) assert.equal(rec.pidNs, fs.readlinkSync('/proc/self/ns/pid'));
    const b = new WorkspaceLock(path.join(dir, 'lock'));
    assert.throws(() => b.acquire('second'), LockedError);
    assert.equal(b.brokeStale, null);
    a.release();
    b.acquire('second');
    b.release();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('--wait=S gives up at its deadline: a wait of 20 ms ends without a 100–200 ms retry sleep past it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-lock-'));
  try {
    const a = new WorkspaceLock(path.join(dir, 'lock'));
    a.acquire('first');
    const b = new WorkspaceLock(path.join(dir, 'lock'));
    let told = 0;
    const t0 = performance.now();
    await assert.rejects(
      b.acquireWaiting('second', 0.02, () => told++),
      (e) => e instanceof LockedError && e.diagnostics[0]!.context?.waited === '0 s',
    );
    // Every retry sleep is 100–200 ms, so a wait that slept past its deadline takes ≥ 100 ms.
    assert.ok(performance.now() - t0 < 95, `gave up after ${Math.round(performance.now() - t0)} ms`);
    assert.equal(told, 1, 'told once that it waits');
    a.release();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
