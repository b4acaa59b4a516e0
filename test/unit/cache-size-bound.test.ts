// The output cache's size cap without a walk (packages/engine/src/cache/cache-gc.ts): the last
// walk's total (size.json) plus every object and entry written since (added.log, appended by
// OutputCache.storeObject before the object and putEntry before the entry) bounds the cache from
// above; gc walks only when the bound is over the cap or cannot be read. The cache's size is its
// objects' and its entries' bytes: small outputs are carried inline in their entries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADDED_LOG_MAX, gcCache, sizeBound, startSize } from '../../packages/engine/src/cache/cache-gc.ts';
import { INLINE_MAX, OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

/** An output too big to be inlined: stored as an object. */
const BIG = INLINE_MAX + 1000;

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
  /** Bytes of every file under objects/ and entries/ (what the cap is about), or of one of them. */
  const onDisk = (only?: 'objects' | 'entries'): number => {
    let n = 0;
    for (const top of only ? [only] : ['objects', 'entries']) {
      const root = path.join(cache.dir, top);
      if (!fs.existsSync(root)) continue;
      for (const d of fs.readdirSync(root))
        for (const f of fs.readdirSync(path.join(root, d))) n += fs.statSync(path.join(root, d, f)).size;
    }
    return n;
  };
  return { root, cache, store, onDisk, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

test('each object and entry stored after a walk adds its size to the bound; an object already stored adds nothing', () => {
  const r = rig();
  try {
    r.store('a', BIG);
    assert.equal(sizeBound(r.cache.dir), null, 'no walk yet: no bound');
    const walked = gcCache(r.cache, { maxBytes: 1e9, bounded: true });
    assert.equal(walked.before, r.onDisk());
    assert.ok(walked.before > BIG, 'the object and its entry');
    assert.equal(sizeBound(r.cache.dir), walked.before, 'the walk recorded the exact total');
    r.store('b', BIG);
    const objects = r.onDisk('objects');
    r.store('c', BIG, 'b'); // the same bytes as b: the same object, already stored; only c's entry is new
    assert.equal(r.onDisk('objects'), objects);
    assert.equal(sizeBound(r.cache.dir), r.onDisk());
  } finally {
    r.cleanup();
  }
});

test("a small output's bytes are counted in its entry: by the bound before the entry is written, by the walk after, and freed with it", () => {
  const r = rig();
  try {
    gcCache(r.cache, { maxBytes: 1e9 }); // an empty cache: nothing recorded yet
    r.store('s', 1000);
    r.store('t', 1000, 'u');
    assert.ok(!fs.existsSync(path.join(r.cache.dir, 'objects')), 'no object for a small output');
    const entries = r.onDisk('entries');
    assert.ok(entries > 2 * 1000, 'the entries carry the bytes (base64)');
    assert.equal(
      fs.readFileSync(path.join(r.cache.dir, 'added.log'), 'utf8'),
      ['s', 't'].map((k) => `${fs.statSync(r.cache.entryPath(k)).size}\n`).join(''),
      "one line per entry, its file's size",
    );
    const walked = gcCache(r.cache, { maxBytes: 1e9 });
    assert.equal(walked.before, entries, 'the walk counts the entries');
    assert.equal(sizeBound(r.cache.dir), entries);
    const sSize = fs.statSync(r.cache.entryPath('s')).size;
    fs.utimesSync(r.cache.entryPath('s'), new Date(1000), new Date(1000)); // s is the least recently used
    const evicted = gcCache(r.cache, { maxBytes: entries - 1, bounded: true });
    assert.deepEqual(
      evicted.removed.map((x) => [x.key, x.bytes]),
      [['s', sSize]],
    );
    assert.equal(evicted.after, r.onDisk());
    assert.equal(evicted.freedBytes, sSize);
    assert.equal(sizeBound(r.cache.dir), r.onDisk());
  } finally {
    r.cleanup();
  }
});

test('under the cap the bound spares the walk; over it gc walks, evicts and records the exact total', () => {
  const r = rig();
  try {
    r.store('a', BIG);
    const first = gcCache(r.cache, { maxBytes: 1e9 }).before;
    // An object that did not come through storeObject: only a walk can see it.
    const foreign = path.join(r.cache.dir, 'objects', 'ff', 'f'.repeat(64));
    fs.mkdirSync(path.dirname(foreign), { recursive: true });
    fs.writeFileSync(foreign, Buffer.alloc(5000));
    const cap = first + BIG;
    const spared = gcCache(r.cache, { maxBytes: cap, bounded: true });
    assert.equal(spared.before, first, 'the bound, not a walk');
    assert.ok(fs.existsSync(foreign));
    r.store('b', BIG + 100);
    const all = r.onDisk(); // the foreign object included
    const walked = gcCache(r.cache, { maxBytes: cap, bounded: true }); // bound over the cap: walk
    assert.equal(walked.before, all, 'the walk found every object and entry');
    assert.ok(!fs.existsSync(foreign), 'the object no entry lists is gone');
    assert.equal(walked.after, r.onDisk());
    assert.ok(walked.after <= cap);
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
    const total = gcCache(r.cache, { maxBytes: 1e9 }).before;
    assert.equal(total, r.onDisk());
    const log = path.join(r.cache.dir, 'added.log');
    fs.appendFileSync(log, '12x\n');
    assert.equal(sizeBound(r.cache.dir), null);
    fs.writeFileSync(log, '');
    fs.appendFileSync(log, '1\n'.repeat(ADDED_LOG_MAX / 2 + 1));
    assert.equal(sizeBound(r.cache.dir), null, 'past ADDED_LOG_MAX');
    fs.writeFileSync(log, '7\n');
    assert.equal(sizeBound(r.cache.dir), total + 7);
    fs.rmSync(path.join(r.cache.dir, 'size.json'));
    assert.equal(sizeBound(r.cache.dir), null);
    const walked = gcCache(r.cache, { maxBytes: 1e9, bounded: true });
    assert.equal(walked.before, total);
    assert.equal(sizeBound(r.cache.dir), total);
  } finally {
    r.cleanup();
  }
});

test('a cache created by startSize has a bound from its first file (no walk needed); an existing one is left as it is', () => {
  const r = rig();
  try {
    const fresh = new OutputCache(path.join(r.root, 'fresh'));
    startSize(fresh.dir);
    assert.equal(sizeBound(fresh.dir), 0);
    const file = path.join(r.root, 'f.out');
    for (const [key, n] of [
      ['small', 10],
      ['big', BIG],
    ] as const) {
      const body = Buffer.alloc(n, key);
      fs.writeFileSync(file, body);
      fresh.put(
        { target: key, key, outputs: [{ path: key, sha256: sha256Hex(body), size: n, dir: false }], result: 'ok' },
        () => file,
      );
    }
    const walked = new OutputCache(fresh.dir);
    const bound = sizeBound(fresh.dir);
    assert.equal(bound, gcCache(walked, { maxBytes: 1e9 }).before, 'the bound is the exact total');
    r.store('a', 100);
    gcCache(r.cache, { maxBytes: 1e9 });
    const recorded = sizeBound(r.cache.dir);
    startSize(r.cache.dir);
    assert.equal(sizeBound(r.cache.dir), recorded);
  } finally {
    r.cleanup();
  }
});

test("a walk removes what killed stores left (an object's, an entry's and an early copy's temporary files), and no walk counts them", () => {
  const r = rig();
  try {
    const sha = r.store('a', BIG);
    const before = gcCache(r.cache, { maxBytes: 1e9, full: true });
    const objDir = path.dirname(r.cache.objectPath(sha));
    const entryDir = path.dirname(r.cache.entryPath('a'));
    const temps = [
      path.join(objDir, `${sha}.tmp-4242-abc-1`),
      path.join(r.cache.dir, 'objects', 'tmp', 'copy.tmp-4242-abc-2'),
      path.join(entryDir, 'a.json.tmp-4242-abc-3'),
    ];
    for (const t of temps) {
      fs.mkdirSync(path.dirname(t), { recursive: true });
      fs.writeFileSync(t, Buffer.alloc(3000));
    }
    const walked = gcCache(r.cache, { maxBytes: 1e9, full: true });
    for (const t of temps) assert.ok(!fs.existsSync(t), `${path.basename(t)} removed`);
    assert.ok(fs.existsSync(r.cache.objectPath(sha)) && r.cache.has('a'), 'the object and its entry stay');
    assert.equal(walked.before, before.after, 'the temporary files were never part of the total');
    assert.equal(walked.after, r.onDisk());
  } finally {
    r.cleanup();
  }
});
