// Small outputs inline (packages/engine/src/cache/output-cache.ts): a file output of at most
// INLINE_MAX bytes is carried in its cache entry instead of as an object; a restore verifies its
// bytes like an object's. Entries of format 1 (objects only) are still read; unknown formats are not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CACHE_FORMAT, INLINE_MAX, OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

function rig() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-inline-'));
  const cache = new OutputCache(path.join(root, 'cache'));
  /** Writes `body` as the output of target `key` and stores it (put, as the engine does after a commit). */
  const store = (key: string, body: Buffer): { sha: string; file: string } => {
    const file = path.join(root, `${key}.out`);
    fs.writeFileSync(file, body);
    const sha = sha256Hex(body);
    cache.put(
      { target: key, key, outputs: [{ path: `out/${key}`, sha256: sha, size: body.length, dir: false }], result: 'ok' },
      () => file,
    );
    return { sha, file };
  };
  const raw = (key: string): Record<string, unknown> => JSON.parse(fs.readFileSync(cache.entryPath(key), 'utf8'));
  /** Restores `key`'s entry into root/restored/; the restored file's path, or null on a miss. */
  const restore = (key: string): string | null => {
    const e = cache.get(key);
    if (!e) return null;
    const to = path.join(root, 'restored', key);
    return cache.materialize(e, () => to) ? to : null;
  };
  return { root, cache, store, raw, restore, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

test('a small output is stored inside its entry (no object file) and restored from it byte for byte, mode 0644', () => {
  const r = rig();
  const umask = process.umask(0o077); // a restore's mode does not depend on the umask
  try {
    const body = Buffer.from('small output\n'.repeat(100));
    const { sha } = r.store('k1', body);
    assert.ok(!fs.existsSync(r.cache.objectPath(sha)), 'no object for an inline output');
    const e = r.raw('k1');
    assert.equal(e.format, CACHE_FORMAT);
    assert.deepEqual(e.inline, { [sha]: body.toString('base64') });
    const to = r.restore('k1');
    assert.ok(to);
    assert.deepEqual(fs.readFileSync(to), body);
    assert.equal(fs.statSync(to).mode & 0o777, 0o644);
    assert.equal(fs.statSync(to).nlink, 1);
  } finally {
    process.umask(umask);
    r.cleanup();
  }
});

test('an output of INLINE_MAX bytes is inline, one byte more is an object, as before', () => {
  const r = rig();
  try {
    const at = r.store('at', Buffer.alloc(INLINE_MAX, 'a'));
    const over = r.store('over', Buffer.alloc(INLINE_MAX + 1, 'b'));
    assert.equal(typeof (r.raw('at').inline as Record<string, string>)[at.sha], 'string');
    assert.ok(!fs.existsSync(r.cache.objectPath(at.sha)));
    assert.equal(r.raw('over').inline, undefined);
    const obj = fs.statSync(r.cache.objectPath(over.sha));
    assert.equal(obj.size, INLINE_MAX + 1);
    assert.equal(obj.mode & 0o222, 0, 'a read-only object');
    assert.deepEqual(fs.readFileSync(r.restore('over')!), Buffer.alloc(INLINE_MAX + 1, 'b'));
  } finally {
    r.cleanup();
  }
});

test('a flipped byte in the inline bytes is a miss: nothing is restored and the entry is dropped', () => {
  const r = rig();
  try {
    const { sha } = r.store('k', Buffer.from('the real bytes\n'));
    const e = r.raw('k');
    const b64 = (e.inline as Record<string, string>)[sha]!;
    // The first character carries the first byte's high bits: the decoded bytes differ.
    (e.inline as Record<string, string>)[sha] = (b64[0] === 'A' ? 'B' : 'A') + b64.slice(1);
    fs.writeFileSync(r.cache.entryPath('k'), JSON.stringify(e));
    assert.equal(r.restore('k'), null);
    assert.ok(!fs.existsSync(r.cache.entryPath('k')), 'the corrupt entry is dropped');
    assert.ok(!fs.existsSync(path.join(r.root, 'restored', 'k')), 'nothing was written');
  } finally {
    r.cleanup();
  }
});

test('an output that changed after it was hashed is not stored: put() writes no entry', () => {
  const r = rig();
  try {
    const file = path.join(r.root, 'late.out');
    fs.writeFileSync(file, 'edited after hashing\n');
    r.cache.put(
      {
        target: 'late',
        key: 'late',
        outputs: [{ path: 'out/late', sha256: sha256Hex('as hashed\n'), size: 10, dir: false }],
        result: 'ok',
      },
      () => file,
    );
    assert.equal(r.cache.get('late'), null);
  } finally {
    r.cleanup();
  }
});

test("an entry of format 1 (objects only) is read and restored from its object, whatever 'inline' it holds; an unknown format is ignored", () => {
  const r = rig();
  try {
    const body = Buffer.from('written by an older version\n');
    const sha = sha256Hex(body);
    const obj = r.cache.objectPath(sha);
    fs.mkdirSync(path.dirname(obj), { recursive: true });
    fs.writeFileSync(obj, body, { mode: 0o444 });
    const old = {
      format: 1,
      target: 'old',
      key: 'old',
      outputs: [{ path: 'out/old', sha256: sha, size: body.length, dir: false }],
      result: 'ok',
      inline: { [sha]: Buffer.from('not these bytes').toString('base64') },
    };
    fs.mkdirSync(path.dirname(r.cache.entryPath('old')), { recursive: true });
    fs.writeFileSync(r.cache.entryPath('old'), JSON.stringify(old));
    assert.deepEqual(fs.readFileSync(r.restore('old')!), body, 'restored from the object, not the stray field');
    fs.rmSync(obj, { force: true });
    assert.equal(r.restore('old'), null, 'format 1 without its object: a miss');

    fs.mkdirSync(path.dirname(r.cache.entryPath('future')), { recursive: true });
    fs.writeFileSync(r.cache.entryPath('future'), JSON.stringify({ ...old, key: 'future', format: CACHE_FORMAT + 1 }));
    assert.equal(r.cache.get('future'), null);
  } finally {
    r.cleanup();
  }
});
