// LastRead (lib/data/thread-memo.ts): one read of some files kept for the next caller in the same
// thread — loadSources and readMetrics use it — answered only while every file has the stat it
// had before it was read, and read-only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LastRead } from '../../lib/data/thread-memo.ts';

test('a read is kept for the same key and unchanged files: a changed key, a touched file, a missing file or a failed read reads again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rc1-thread-memo-'));
  try {
    const f = join(dir, 'a.txt');
    writeFileSync(f, 'one');
    const memo = new LastRead<{ n: number; list: number[] }>();
    let reads = 0;
    const read = async () => ({ n: ++reads, list: [reads] });
    const first = await memo.get('k', [f], read);
    assert.equal(await memo.get('k', [f], read), first);
    assert.equal(reads, 1);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.list));
    assert.throws(() => first.list.push(2), TypeError);

    assert.equal((await memo.get('other', [f], read)).n, 2);
    const t = statSync(f).mtime;
    utimesSync(f, t, new Date(t.getTime() + 1000)); // same bytes, another mtime
    assert.equal((await memo.get('other', [f], read)).n, 3);
    assert.equal((await memo.get('other', [f], read)).n, 3);

    writeFileSync(f, 'two');
    await assert.rejects(
      memo.get('other', [f], async () => {
        throw new Error('bad file');
      }),
      /bad file/,
    );
    assert.equal((await memo.get('other', [f], read)).n, 4, 'a failed read leaves nothing kept');

    const gone = join(dir, 'gone.txt');
    assert.equal((await memo.get('k', [gone], read)).n, 5);
    assert.equal(
      (await memo.get('k', [gone], read)).n,
      6,
      'a file that cannot be stat’ed is never answered from memory',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
