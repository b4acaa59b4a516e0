// The commit replaces an output file by one rename (packages/engine/src/state/commit-outputs.ts),
// with the old file linked aside under .rc1/tmp across the rename, so that its blocks are freed by
// an unlink off the commit (awaited at the end of the build, syncTouched) instead of inside the
// rename. The replacement stays atomic; nothing is left in .rc1/tmp; without a place to link
// (no .rc1/tmp) the rename alone replaces the file, as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import fsModule from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { commitRig } from '../fixtures/commit/commit-rig.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

function rig(withTmp: boolean) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-commit-aside-'));
  return { root, ...commitRig(root, withTmp) };
}

test('an output replaced by a commit is the new file at once, the old one freed by the end of the build, nothing left in .rc1/tmp', async () => {
  const r = rig(true);
  fs.mkdirSync(path.join(r.root, 'out'));
  const out = path.join(r.root, 'out', 'a.txt');
  r.commit('a', 'out/a.txt', 'old\n');
  const oldIno = fs.statSync(out).ino;
  // The old output, held open: its link count says which names it still has.
  const fd = fs.openSync(out, 'r');
  // The unlinks that free replaced files, held back: the old file must then still have its aside name.
  const held: (() => void)[] = [];
  const realUnlink = fsModule.unlink;
  fsModule.unlink = ((p: fs.PathLike, cb: fs.NoParamCallback) => {
    held.push(() => realUnlink(p, cb));
  }) as typeof fsModule.unlink;
  syncBuiltinESMExports();
  try {
    r.commit('a', 'out/a.txt', 'new!\n');
  } finally {
    fsModule.unlink = realUnlink;
    syncBuiltinESMExports();
  }
  assert.equal(fs.readFileSync(out, 'utf8'), 'new!\n');
  assert.notEqual(fs.statSync(out).ino, oldIno);
  // Its out/a.txt name is gone, its aside name keeps it (a plain rename would leave it none: 0).
  assert.equal(fs.fstatSync(fd).nlink, 1, 'the old file keeps one name, the aside one, until its unlink');
  const aside = fs.readdirSync(r.tmp).filter((f) => f.startsWith('replaced-'));
  assert.equal(aside.length, 1, 'the old file keeps a second name until its unlink');
  assert.equal(fs.statSync(path.join(r.tmp, aside[0]!)).ino, oldIno);
  assert.equal(held.length, 1);
  const done = r.committer.syncTouched();
  for (const h of held) h();
  await done;
  assert.equal(fs.fstatSync(fd).nlink, 0, 'the old file has no name left once the unlink is awaited');
  fs.closeSync(fd);
  assert.deepEqual(fs.readdirSync(r.tmp), [], 'nothing left in .rc1/tmp after the build');
  assert.equal(r.trace.records.get('a')!.outputs[0]!.sha256, sha256Hex('new!\n'));
  r.trace.close();
});

test('an output with other hard links, a first output, and a commit without .rc1/tmp replace by the rename alone', async () => {
  const r = rig(true);
  fs.mkdirSync(path.join(r.root, 'out'));
  const out = path.join(r.root, 'out', 'b.txt');
  fs.writeFileSync(out, 'linked\n');
  fs.linkSync(out, path.join(r.root, 'elsewhere.txt'));
  r.commit('b', 'out/b.txt', 'b2\n');
  assert.equal(fs.readFileSync(out, 'utf8'), 'b2\n');
  assert.equal(
    fs.readFileSync(path.join(r.root, 'elsewhere.txt'), 'utf8'),
    'linked\n',
    'the other name keeps the old file',
  );
  r.commit('c', 'out/c.txt', 'c1\n'); // nothing to replace
  assert.deepEqual(
    fs.readdirSync(r.tmp).filter((f) => f.startsWith('replaced-')),
    [],
    'no aside name for either',
  );
  await r.committer.syncTouched();
  r.trace.close();

  const q = rig(false);
  q.commit('a', 'out/a.txt', 'one\n');
  q.commit('a', 'out/a.txt', 'two\n');
  assert.equal(fs.readFileSync(path.join(q.root, 'out', 'a.txt'), 'utf8'), 'two\n');
  assert.equal(fs.existsSync(q.tmp), false);
  await q.committer.syncTouched();
  q.trace.close();
});
