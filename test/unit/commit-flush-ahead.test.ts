// While targets still run, the committer starts writing back what quick targets committed
// (packages/engine/src/state/commit-outputs.ts, flushAhead): each time FLUSH_AHEAD_BYTES of
// unsynced output bytes were committed, one background syncfs of the filesystems that received
// them, one at a time. The end of the build (syncTouched) waits for the flush in flight, then
// makes everything durable as before: a flush adds no guarantee and a failed one removes none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';
import type { HashedOutput } from '../../packages/engine/src/runner/protocol.ts';
import {
  type CommitterOptions,
  FLUSH_AHEAD_BYTES,
  OutputCommitter,
  outputRecords,
} from '../../packages/engine/src/state/commit-outputs.ts';
import { type TargetRecord, TraceLog } from '../../packages/engine/src/state/trace-log.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

function rig(opts: CommitterOptions) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-flush-ahead-'));
  const state = path.join(root, '.rc1');
  const tmp = path.join(state, 'tmp');
  fs.mkdirSync(path.join(state, 'journal'), { recursive: true });
  fs.mkdirSync(tmp);
  fs.mkdirSync(path.join(root, 'out'));
  const trace = new TraceLog(path.join(state, 'trace.log'));
  trace.repair();
  const committer = new OutputCommitter(
    root,
    path.join(state, 'journal'),
    trace,
    new StatCache(root, path.join(state, 'statcache.json')),
    tmp,
    opts,
  );
  let n = 0;
  /** A rule's finished output out/<name>.txt of `bytes` bytes, committed; `synced`: fsynced when hashed (a rule ≥ 1 s). */
  const commit = (name: string, bytes: number, synced = false): void => {
    const body = 'x'.repeat(bytes);
    const from = path.join(tmp, `${process.pid}-${++n}-0-${name}.txt`);
    fs.writeFileSync(from, body);
    const st = fs.statSync(from, { bigint: true });
    const sha = sha256Hex(body);
    const h: HashedOutput = {
      path: `out/${name}.txt`,
      tmp: from,
      dir: false,
      sha256: sha,
      size: bytes,
      files: { '': [sha, bytes, st.mtimeNs, st.ino, st.ctimeNs] },
      statTimeNs: st.mtimeNs,
      synced,
    };
    const record = {
      name,
      key: `k${n}`,
      fingerprint: { inputs: {} },
      outputs: outputRecords([h]),
      result: 'ok',
      how: 'ran',
      ms: 1,
      at: '2026-01-01T00:00:00.000Z',
    } as unknown as TargetRecord;
    committer.commit(record, [h]);
  };
  return { root, trace, committer, commit };
}

/** A flush the test ends when it chooses; records the directories each was asked to write back. */
function heldFlush() {
  const calls: string[][] = [];
  const pending: (() => void)[] = [];
  const flushAhead = (dirs: string[]): Promise<void> => {
    calls.push(dirs);
    return new Promise((resolve) => pending.push(resolve));
  };
  return { calls, pending, flushAhead };
}

const settledSoon = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  return done;
};

test('the default: a background flush after 8 MiB of committed, unsynced output bytes', () => {
  assert.equal(FLUSH_AHEAD_BYTES, 8 * 1024 * 1024);
});

test('past the threshold a flush of the directories that received outputs starts while commits go on, one at a time; the build-end sync waits for it', async () => {
  const f = heldFlush();
  const r = rig({ flushAheadBytes: 100, flushAhead: f.flushAhead });
  r.commit('a', 60);
  assert.equal(r.committer.flushesAhead, 0, '60 bytes: under the threshold');
  r.commit('b', 60);
  assert.equal(r.committer.flushesAhead, 1, '120 bytes: a flush started');
  assert.deepEqual(f.calls, [[path.join(r.root, 'out')]], 'it writes back the directory that received the outputs');
  r.commit('c', 200);
  assert.equal(r.committer.flushesAhead, 1, 'not a second one while the first is in flight');
  const end = r.committer.syncTouched();
  assert.equal(await settledSoon(end), false, 'the build-end sync waits for the flush in flight');
  f.pending.shift()!();
  await end;
  assert.equal(fs.readFileSync(path.join(r.root, 'out', 'c.txt'), 'utf8').length, 200);
  // The next build's count starts from nothing: what the build-end sync made durable is not counted again.
  r.commit('d', 60);
  assert.equal(r.committer.flushesAhead, 1);
  r.commit('e', 60);
  assert.equal(r.committer.flushesAhead, 2);
  f.pending.shift()!();
  await r.committer.syncTouched();
  r.trace.close();
});

test('outputs fsynced when they were hashed (a rule that ran 1 s or more) count for nothing', async () => {
  const f = heldFlush();
  const r = rig({ flushAheadBytes: 100, flushAhead: f.flushAhead });
  r.commit('slow', 10_000, true);
  assert.equal(r.committer.flushesAhead, 0);
  await r.committer.syncTouched();
  r.trace.close();
});

test('a flush that fails or throws changes nothing: the commits and the build-end sync go on', async () => {
  const r = rig({ flushAheadBytes: 10, flushAhead: () => Promise.reject(new Error('sync: not found')) });
  r.commit('a', 20);
  r.commit('b', 20);
  await r.committer.syncTouched();
  assert.equal(r.trace.records.get('b')!.result, 'ok');
  const t = rig({
    flushAheadBytes: 10,
    flushAhead: () => {
      throw new Error('spawn failed');
    },
  });
  t.commit('a', 20);
  t.commit('b', 20);
  await t.committer.syncTouched();
  assert.equal(fs.readFileSync(path.join(t.root, 'out', 'b.txt'), 'utf8'), 'x'.repeat(20));
  r.trace.close();
  t.trace.close();
});

test('the real flush (sync -f) runs in the background and the build-end sync ends after it', async () => {
  const r = rig({ flushAheadBytes: 1000 });
  r.commit('a', 4000);
  assert.equal(r.committer.flushesAhead, 1);
  r.commit('b', 4000); // while it runs
  await r.committer.syncTouched();
  assert.equal(fs.readFileSync(path.join(r.root, 'out', 'b.txt'), 'utf8').length, 4000);
  r.trace.close();
});
