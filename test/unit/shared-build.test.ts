// test/helpers/shared-build.ts: a shared test build is built once under a lock, however many
// callers ask at once; a lock left by a process that is gone is taken over; a failed build leaves
// no entry; the digest follows every byte and name of the keyed files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sharedEntry, treeDigest } from '../helpers/shared-build.ts';

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-shared-build-'));
}

test('three callers at once: one build, the same complete entry for all', async () => {
  const root = tmp();
  try {
    let builds = 0;
    const build = async (dir: string): Promise<void> => {
      builds++;
      fs.mkdirSync(dir);
      await new Promise((r) => setTimeout(r, 50));
      fs.writeFileSync(path.join(dir, 'out.txt'), 'built');
    };
    const got = await Promise.all([1, 2, 3].map(() => sharedEntry('kind-abc', build, root)));
    assert.equal(builds, 1);
    assert.deepEqual(new Set(got), new Set([path.join(root, 'kind-abc')]));
    assert.equal(fs.readFileSync(path.join(root, 'kind-abc', 'out.txt'), 'utf8'), 'built');
    assert.deepEqual(fs.readdirSync(root), ['kind-abc']);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a lock whose process is gone is taken over; a failed build leaves no entry and no lock', async () => {
  const root = tmp();
  try {
    fs.mkdirSync(path.join(root, 'kind-x.lock'));
    fs.writeFileSync(path.join(root, 'kind-x.lock', 'pid'), '2147483646'); // no such process
    await assert.rejects(
      sharedEntry(
        'kind-x',
        async (dir) => {
          fs.mkdirSync(dir);
          throw new Error('build broke');
        },
        root,
      ),
      /build broke/,
    );
    assert.deepEqual(fs.readdirSync(root), []);
    const entry = await sharedEntry('kind-x', async (dir) => fs.mkdirSync(dir), root);
    assert.equal(entry, path.join(root, 'kind-x'));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the digest changes with a byte, a file name or the extra text, and not with the order paths are walked', () => {
  const dir = tmp();
  try {
    fs.mkdirSync(path.join(dir, 'a/b'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'a/b/x.txt'), 'one');
    fs.writeFileSync(path.join(dir, 'c.txt'), 'two');
    const d0 = treeDigest(dir, ['a', 'c.txt'], 'size 1');
    assert.equal(treeDigest(dir, ['c.txt', 'a'], 'size 1'), d0);
    assert.notEqual(treeDigest(dir, ['a', 'c.txt'], 'size 2'), d0);
    fs.writeFileSync(path.join(dir, 'c.txt'), 'twO');
    assert.notEqual(treeDigest(dir, ['a', 'c.txt'], 'size 1'), d0);
    fs.writeFileSync(path.join(dir, 'c.txt'), 'two');
    fs.renameSync(path.join(dir, 'a/b/x.txt'), path.join(dir, 'a/b/y.txt'));
    assert.notEqual(treeDigest(dir, ['a', 'c.txt'], 'size 1'), d0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
