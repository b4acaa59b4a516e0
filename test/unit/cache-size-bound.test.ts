// The output cache's size cap without a walk (packages/engine/src/cache/cache-gc.ts): the last
// walk's total (size.json) plus every object created since (added.log, appended by
// OutputCache.storeObject before the object) bounds the cache from above; gc walks only when the
// bound is over the cap or cannot be read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADDED_LOG_MAX, gcCache, sizeBound } from '../../packages/engine/src/cache/cache-gc.ts';
import { OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

function rig() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-size-bound-'));
  const cache = new OutputCache(path.join(root, 'cache'));
  fs.mkdirSync(cache.dir);
  /** Stores one output of `bytes` bytes under its own entry; returns the object's sha. */
  const store = (key: string, bytes: number, fill = key): string => {
    const file = path.join(root, `${key}.out`);
    const body = Buffer.alloc(bytes, fill);
    fs.writeFileSync(file, body);
    const sha = sha256Hex(body);
    cache.put(
      { target: key, key, outputs: [{ path: `${key}.out`, sha256: sha, size: bytes, dir: false }], result: 'ok' },
      () => file,
    );
    return sha;
  };
  const objectsTotal = (): number => {
    let n = 0;
    const objs = path.join(cache.dir, 'objects');
    for (const d of fs.readdirSync(objs))
      for (const f of fs.readdirSync(path.join(objs, d))) n += fs.statSync(path.join(objs, d, f)).size;
    return n;
  };
  return { root, cache, store, objectsTotal, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

test('each object stored after a walk adds its size to the bound; one already stored adds nothing', () => {
  const r = rig();
  try {
    r.store('a', 1000);
    assert.equal(sizeBound(r.cache.dir), null, 'no walk yet: no bound');
    const walked = gcCache(r.cache, { maxBytes: 1e9, bounded: true });
    assert.equal(walked.before, 1000);
    assert.equal(sizeBound(r.cache.dir), 1000, 'the walk recorded the exact total');
    r.store('b', 300);
    r.store('c', 300, 'b'); // the same bytes as b: the same object, already stored
    assert.equal(sizeBound(r.cache.dir), 1300);
    assert.equal(r.objectsTotal(), 1300);
  } finally {
    r.cleanup();
  }
});

test('under the cap the bound spares the walk; over it gc walks, evicts and records the exact total', () => {
  const r = rig();
  try {
    r.store('a', 1000);
    gcCache(r.cache, { maxBytes: 1e9 });
    // An object that did not come through storeObject: only a walk can see it.
    const foreign = path.join(r.cache.dir, 'objects', 'ff', 'f'.repeat(64));
    fs.mkdirSync(path.dirname(foreign), { recursive: true });
    fs.writeFileSync(foreign, Buffer.alloc(5000));
    const spared = gcCache(r.cache, { maxBytes: 2000, bounded: true });
    assert.equal(spared.before, 1000, 'the bound, not a walk');
    assert.ok(fs.existsSync(foreign));
    r.store('b', 1500);
    const walked = gcCache(r.cache, { maxBytes: 2000, bounded: true }); // bound 2500 > cap: walk
    assert.equal(walked.before, 7500, 'the walk found every object');
    assert.ok(!fs.existsSync(foreign), 'the object no entry lists is gone');
    assert.equal(walked.after, r.objectsTotal());
    assert.ok(walked.after <= 2000);
    assert.equal(sizeBound(r.cache.dir), walked.after, 'the exact total is recorded and added.log is empty');
    assert.equal(fs.readFileSync(path.join(r.cache.dir, 'added.log'), 'utf8'), '');
  } finally {
    r.cleanup();
  }
});

test('a torn line, a missing total or an overgrown added.log gives no bound (gc walks)', () => {
  const r = rig();
  try {
    r.store('a', 100);
    gcCache(r.cache, { maxBytes: 1e9 });
    const log = path.join(r.cache.dir, 'added.log');
    fs.appendFileSync(log, '12x\n');
    assert.equal(sizeBound(r.cache.dir), null);
    fs.writeFileSync(log, '');
    fs.appendFileSync(log, '1\n'.repeat(ADDED_LOG_MAX / 2 + 1));
    assert.equal(sizeBound(r.cache.dir), null, 'past ADDED_LOG_MAX');
    fs.writeFileSync(log, '7\n');
    assert.equal(sizeBound(r.cache.dir), 107);
    fs.rmSync(path.join(r.cache.dir, 'size.json'));
    assert.equal(sizeBound(r.cache.dir), null);
    const walked = gcCache(r.cache, { maxBytes: 1e9, bounded: true });
    assert.equal(walked.before, 100);
    assert.equal(sizeBound(r.cache.dir), 100);
  } finally {
    r.cleanup();
  }
});
