// Small outputs carried inline in their cache entries, through the real CLI: a build stores a
// small output in its entry only (no object file), an edit-build-revert restores it from there,
// and a corrupted entry is a miss: the rule runs again and the build's outputs are right.
//   src/a.txt --> a --> b --> g (gate) --> after_gate      src/c.txt --> c
//   src/w.txt --> sq --> after_sq                          (the standard rig)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sizeBound } from '../../packages/engine/src/cache/cache-gc.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';
import { type TestRig, standardRig } from '../helpers/rig.ts';

const keyOf = (rig: TestRig, target: string): string =>
  (JSON.parse(rig.read('reports/build/manifest.json')) as { targets: Record<string, { key: string }> }).targets[target]!
    .key;
const entryFile = (rig: TestRig, key: string): string =>
  path.join(rig.dir, '.rc1/cache/entries', key.slice(0, 2), `${key}.json`);

test('a small output lives in its cache entry only, and an edit-build-revert restores it from there', () => {
  const rig = standardRig();
  try {
    assert.equal(rig.run([]).code, 0);
    const key = keyOf(rig, 'c');
    const before = rig.read('out/c.txt');
    const sha = sha256Hex(before);
    const entry = JSON.parse(fs.readFileSync(entryFile(rig, key), 'utf8')) as {
      format: number;
      inline?: Record<string, string>;
    };
    assert.equal(entry.format, 2);
    assert.equal(Buffer.from(entry.inline![sha]!, 'base64').toString(), before);
    assert.ok(!fs.existsSync(path.join(rig.dir, '.rc1/cache/objects', sha.slice(0, 2), sha)), 'no object file');
    // The size cap's bound (no walk after a build from clean) is the cache's exact size, entries included.
    let onDisk = 0;
    for (const sub of ['objects', 'entries']) {
      const d = path.join(rig.dir, '.rc1/cache', sub);
      if (!fs.existsSync(d)) continue;
      for (const f of fs.readdirSync(d, { recursive: true, withFileTypes: true }))
        if (f.isFile()) onDisk += fs.statSync(path.join(f.parentPath, f.name)).size;
    }
    assert.equal(sizeBound(path.join(rig.dir, '.rc1/cache')), onDisk);
    rig.write('src/c.txt', 'cee two\n');
    assert.equal(rig.run(['c']).code, 0);
    rig.runs();
    rig.write('src/c.txt', 'cee\n');
    const back = rig.run(['c']);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(rig.runs(), [], 'restored, not rerun');
    assert.match(back.stdout, /restored c/);
    assert.equal(rig.read('out/c.txt'), before);
    assert.equal(fs.statSync(path.join(rig.dir, 'out/c.txt')).mode & 0o777, 0o644);
    assert.equal(rig.run(['audit']).code, 0);
  } finally {
    rig.cleanup();
  }
});

test('a large output is stored as an object copied while it was hashed: its bytes, read-only, counted once, no temp left; an edit-build-revert restores it', () => {
  const rig = standardRig();
  try {
    // 3 MiB of text: above the size whose cache copy starts before the hash (1 MiB).
    const big = Array.from({ length: 3 * 16384 }, (_, i) => `line ${i} ${'x'.repeat(50)}\n`).join('');
    rig.write('src/c.txt', big);
    rig.write('src/a.txt', big); // a, b and after_gate carry the same bytes plus suffixes
    assert.equal(rig.run([]).code, 0);
    const objects = path.join(rig.dir, '.rc1/cache/objects');
    for (const out of ['out/c.txt', 'out/a.txt', 'out/b.txt']) {
      const bytes = fs.readFileSync(path.join(rig.dir, out));
      assert.ok(bytes.length > 1 << 20);
      const obj = path.join(objects, sha256Hex(bytes).slice(0, 2), sha256Hex(bytes));
      assert.ok(fs.readFileSync(obj).equals(bytes), `${out}: the object holds its bytes`);
      assert.equal(fs.statSync(obj).mode & 0o777, 0o444, `${out}: the object is read-only`);
    }
    assert.deepEqual(fs.existsSync(path.join(objects, 'tmp')) ? fs.readdirSync(path.join(objects, 'tmp')) : [], []);
    let onDisk = 0;
    for (const sub of ['objects', 'entries']) {
      const d = path.join(rig.dir, '.rc1/cache', sub);
      for (const f of fs.readdirSync(d, { recursive: true, withFileTypes: true }))
        if (f.isFile()) onDisk += fs.statSync(path.join(f.parentPath, f.name)).size;
    }
    assert.equal(sizeBound(path.join(rig.dir, '.rc1/cache')), onDisk, 'each object counted once');
    // The same bytes again (c rebuilt from a changed and reverted source): the object is already
    // there, so the new copy is dropped, and the cache does not grow.
    rig.write('src/c.txt', 'small\n');
    assert.equal(rig.run(['c']).code, 0);
    rig.runs();
    rig.write('src/c.txt', big);
    const back = rig.run(['c']);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(rig.runs(), [], 'restored, not rerun');
    assert.equal(rig.read('out/c.txt'), `${big}!`);
    rig.write('src/c.txt', `${big}more\n`);
    assert.equal(rig.run(['c']).code, 0);
    rig.runs();
    rig.write('src/c.txt', big);
    fs.rmSync(path.join(rig.dir, '.rc1/cache/entries'), { recursive: true });
    assert.equal(rig.run(['c']).code, 0, 'rerun: its entry is gone, its object is not');
    assert.deepEqual(rig.runs(), ['c']);
    assert.deepEqual(fs.existsSync(path.join(objects, 'tmp')) ? fs.readdirSync(path.join(objects, 'tmp')) : [], []);
    assert.equal(rig.read('out/c.txt'), `${big}!`);
    assert.equal(rig.run(['audit']).code, 0);
  } finally {
    rig.cleanup();
  }
});

test('a flipped byte in an inline entry is a miss: the entry is dropped, the rule runs again, the output is right', () => {
  const rig = standardRig();
  try {
    assert.equal(rig.run([]).code, 0);
    const key = keyOf(rig, 'c');
    const before = rig.read('out/c.txt');
    rig.write('src/c.txt', 'cee two\n');
    assert.equal(rig.run(['c']).code, 0);
    rig.runs();
    // Corrupt the old entry's inline bytes (its first character: the first byte's high bits).
    const file = entryFile(rig, key);
    const e = JSON.parse(fs.readFileSync(file, 'utf8')) as { inline: Record<string, string> };
    const [sha, b64] = Object.entries(e.inline)[0]!;
    e.inline[sha] = (b64[0] === 'A' ? 'B' : 'A') + b64.slice(1);
    fs.writeFileSync(file, JSON.stringify(e));
    rig.write('src/c.txt', 'cee\n');
    const back = rig.run(['c']);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(rig.runs(), ['c'], 'the rule ran again');
    assert.match(back.stdout + back.stderr, /corrupt/);
    assert.equal(rig.read('out/c.txt'), before);
    assert.equal(rig.run(['audit']).code, 0);
    // The run stored a good entry again: the next edit-build-revert restores.
    rig.write('src/c.txt', 'cee three\n');
    assert.equal(rig.run(['c']).code, 0);
    rig.runs();
    rig.write('src/c.txt', 'cee\n');
    assert.equal(rig.run(['c']).code, 0);
    assert.deepEqual(rig.runs(), []);
    assert.equal(rig.read('out/c.txt'), before);
  } finally {
    rig.cleanup();
  }
});
