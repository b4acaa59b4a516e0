// State files parsed once per content in a long-lived process (packages/engine/src/state/
// parsed-state.ts): kept from the second read on, given back only while the file keeps its
// identity (dev, ino, size, mtime ns, ctime ns), never when it was written within its timestamp
// tick, and deeply frozen so that no command can change what a later one reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import fsModule from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { deepFreeze, forgetParsedState, readParsed } from '../../packages/engine/src/state/parsed-state.ts';
import { type TargetRecord, TraceLog } from '../../packages/engine/src/state/trace-log.ts';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';

const parse = (text: string): { v: unknown } => JSON.parse(text) as { v: unknown };

/**
 * Sets the file's mtime ~10 s back, so that it is settled (no same-tick rewrite can hide). Never on
 * a whole second: parsed-state.ts takes a whole-second mtime for a coarse filesystem and waits 2 s
 * of ctime for it, which waitPastTick() does not (the test failed when Date.now() - 10 000 fell
 * on a whole second, one run in a thousand).
 */
function age(file: string): void {
  const t = new Date(Math.floor((Date.now() - 10_000) / 1000) * 1000 + 500);
  fs.utimesSync(file, t, t);
}

function waitPastTick(): void {
  // ctime cannot be set back: the file must be ≥ 100 ms old (RACY_NS) to be kept.
  const until = Date.now() + 150;
  while (Date.now() < until) {
    /* spin: 150 ms */
  }
}

test('a state file is kept from its second read on, while its identity holds, frozen; a one-read process keeps nothing', () => {
  forgetParsedState();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-parsed-state-'));
  const file = path.join(dir, 's.json');
  fs.writeFileSync(file, JSON.stringify({ v: [1, { a: 2 }] }));
  age(file);
  waitPastTick();
  const first = readParsed(file, parse, deepFreeze)!;
  assert.equal(Object.isFrozen(first), false, 'the first read is the one-command path: nothing kept, nothing frozen');
  const second = readParsed(file, parse, deepFreeze)!;
  assert.notEqual(second, first);
  assert.ok(Object.isFrozen(second) && Object.isFrozen((second.v as unknown[])[1]));
  assert.equal(readParsed(file, parse, deepFreeze), second, 'the same content: the kept value');
  assert.throws(() => {
    (second as { v: unknown }).v = 1;
  }, TypeError);
  // An append (new size), a replacement by rename (new inode): parsed again.
  fs.writeFileSync(file, JSON.stringify({ v: [1, { a: 3 }] }));
  const third = readParsed(file, parse, deepFreeze)!;
  assert.deepEqual(third, { v: [1, { a: 3 }] });
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ v: [1, { a: 4 }] }));
  fs.renameSync(tmp, file);
  assert.deepEqual(readParsed(file, parse, deepFreeze), { v: [1, { a: 4 }] });
  // Removed: null, and nothing kept.
  fs.rmSync(file);
  assert.equal(readParsed(file, parse, deepFreeze), null);
});

test('a file written within its timestamp tick is not kept: a same-size rewrite in place in that tick is still seen', () => {
  forgetParsedState();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-parsed-state-racy-'));
  const file = path.join(dir, 's.json');
  fs.writeFileSync(file, '{"v":"aaaa"}');
  const ino = fs.statSync(file).ino;
  // A filesystem whose clock does not tick between the writes below: every fstat of the file
  // reports the first one's mtime and ctime, so a same-size rewrite in place keeps its identity.
  const real = fsModule.fstatSync;
  let first: { mtimeNs: bigint; ctimeNs: bigint } | null = null;
  fsModule.fstatSync = ((fd: number, opts?: { bigint?: boolean }) => {
    const st = real(fd, opts as { bigint: true });
    if (!opts?.bigint || Number(st.ino) !== ino) return st;
    first ??= { mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
    return Object.assign(Object.create(Object.getPrototypeOf(st) as object), st, first);
  }) as typeof fsModule.fstatSync;
  syncBuiltinESMExports();
  try {
    readParsed(file, parse, deepFreeze); // first read
    assert.equal(readParsed(file, parse, deepFreeze)!.v, 'aaaa'); // written just now: not kept
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, '{"v":"bbbb"}', 0);
    fs.closeSync(fd);
    assert.equal(readParsed(file, parse, deepFreeze)!.v, 'bbbb');
  } finally {
    fsModule.fstatSync = real;
    syncBuiltinESMExports();
  }
});

test('a trace log opened again in one process sees the records written since, and shares none it could change', () => {
  forgetParsedState();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-parsed-state-trace-'));
  const file = path.join(dir, 'trace.log');
  const rec = (name: string, key: string): TargetRecord =>
    ({
      name,
      key,
      fingerprint: { inputs: { src: { [`src/${name}`]: key } } },
      outputs: [{ path: `out/${name}`, sha256: key, size: 1, dir: false }],
      result: 'ok',
      how: 'ran',
      ms: 1,
      at: '2026-01-01T00:00:00.000Z',
    }) as unknown as TargetRecord;
  const w = new TraceLog(file);
  w.repair();
  w.put(rec('a', 'k1'));
  w.put(rec('b', 'k2'));
  w.close();
  age(file);
  waitPastTick();
  new TraceLog(file); // the first read in the process
  const t1 = new TraceLog(file); // kept from here on
  const t2 = new TraceLog(file);
  assert.equal(t2.records.get('a'), t1.records.get('a'), 'one parse for both');
  assert.ok(Object.isFrozen(t1.records.get('a')!.fingerprint.inputs.src));
  // Each log has its own map: a put in one is not seen by the other, nor by the next open.
  t1.put(rec('c', 'k3'));
  t1.close();
  assert.equal(t2.records.has('c'), false);
  const t3 = new TraceLog(file); // the file grew: parsed again
  assert.deepEqual([...t3.records.keys()], ['a', 'b', 'c']);
  assert.equal(t3.records.get('c')!.key, 'k3');
  // A stat cache read twice gives the same hashes; its map is its own.
  const root = dir;
  fs.writeFileSync(path.join(root, 'x.txt'), 'x');
  age(path.join(root, 'x.txt')); // an old file: its stat cache entry is trusted, not racy
  const sc1 = new StatCache(root, path.join(dir, 'statcache.json'));
  sc1.hash('x.txt');
  sc1.save();
  age(path.join(dir, 'statcache.json'));
  waitPastTick();
  new StatCache(root, path.join(dir, 'statcache.json'));
  const sc2 = new StatCache(root, path.join(dir, 'statcache.json'));
  const sc3 = new StatCache(root, path.join(dir, 'statcache.json'));
  sc2.forget('x.txt');
  assert.equal(sc3.hash('x.txt')!.sha256, sc1.hash('x.txt')!.sha256);
  assert.equal(sc3.counters.statHits, 1, 'the entry came from the kept parse, untouched by sc2.forget');
});
