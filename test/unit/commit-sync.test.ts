// The end of a build makes what it committed durable (packages/engine/src/state/commit-outputs.ts,
// syncTouched): up to SYNCFS_ABOVE paths into directories that already existed, by an fsync of each
// committed file, each directory that received one or was created on the way, and their parents,
// with no process spawned; above it by one `sync -f` per filesystem (faked here: recorded, not run);
// a file it may not open (EACCES, faked) by one `sync -f` of its folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import childProcess from 'node:child_process';
import * as fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { type OutputCommitter, SYNCFS_ABOVE } from '../../packages/engine/src/state/commit-outputs.ts';
import { commitRig } from '../fixtures/commit/commit-rig.ts';

/** A workspace with `n` outputs committed (out/t<i>.txt, not synced when hashed), and what syncTouched fsynced and spawned. */
async function syncAfterCommits(
  root: string,
  n: number,
  sub = 'out',
  syncfsFails = false,
  /** Committed files (relative) whose open fails with EACCES, as after a rule's chmod 000. */
  denied: string[] = [],
  /** Given to syncTouched; `order` records it beside the fsyncs, the spawns and their answers. */
  meanwhile?: (order: string[]) => void,
  /** Each commit's rule run time and whether it was fsynced when hashed. */
  each: { redoMs?: number; synced?: boolean } = {},
  /** The end of the build (default: syncTouched); what it returns is `result`. */
  end: (c: OutputCommitter, meanwhile: (() => void) | undefined) => Promise<unknown> = (c, m) => c.syncTouched(m),
): Promise<{ synced: string[]; spawned: string[][]; order: string[]; result: unknown }> {
  const { committer, trace, commit } = commitRig(root, true);
  for (let i = 0; i < n; i++) commit(`t${i}`, `${sub}/t${i}.txt`, `output ${i}\n`, each);
  const synced: string[] = [];
  const spawned: string[][] = [];
  const order: string[] = [];
  const open = fsp.open;
  const execFile = childProcess.execFile;
  const deniedAbs = new Set(denied.map((d) => path.join(root, d)));
  fsp.open = (async (p: fs.PathLike, ...rest: unknown[]) => {
    if (deniedAbs.has(String(p)))
      throw Object.assign(new Error(`EACCES: permission denied, open '${String(p)}'`), { code: 'EACCES' });
    const fh = await (open as (...a: unknown[]) => Promise<fsp.FileHandle>)(p, ...rest);
    const sync = fh.sync.bind(fh);
    fh.sync = async () => {
      await sync();
      synced.push(String(p));
      order.push('fsync');
    };
    return fh;
  }) as typeof fsp.open;
  childProcess.execFile = ((file: string, args: string[], _opts: unknown, cb: (err: Error | null) => void) => {
    spawned.push([file, ...args]);
    order.push('spawned');
    // a syncfs that succeeded (or failed, as where `sync -f` is missing), without running one over /tmp
    setImmediate(() => {
      order.push('answered');
      cb(syncfsFails ? new Error('sync: unrecognized option -f') : null);
    });
  }) as unknown as typeof childProcess.execFile;
  syncBuiltinESMExports();
  let result: unknown;
  try {
    result = await end(committer, meanwhile && (() => meanwhile(order)));
  } finally {
    fsp.open = open;
    childProcess.execFile = execFile;
    syncBuiltinESMExports();
    trace.close();
  }
  return { synced, spawned, order, result };
}

/** A temp workspace root (real path) for `body`, removed afterwards whatever happens. */
async function inRoot(body: (root: string) => Promise<void>): Promise<void> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-commit-sync-')));
  try {
    await body(root);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

test('a build that committed a few outputs into an existing directory fsyncs each of them and that directory, and spawns nothing', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const n = 34;
    const { synced, spawned } = await syncAfterCommits(root, n);
    assert.deepEqual(spawned, [], 'no sync process for a few files');
    const expected = [
      ...Array.from({ length: n }, (_, i) => path.join(root, 'out', `t${i}.txt`)),
      path.join(root, 'out'),
      root, // the folder's parent: a folder made by someone else this build is an entry there
    ];
    assert.deepEqual(
      [...synced].sort(),
      expected.sort(),
      'every committed file, the directory that received them and its parent',
    );
  });
});

test('a build that created the folders of its outputs fsyncs each new folder and the parent of the first, and spawns nothing', async () => {
  await inRoot(async (root) => {
    // out/a/b is new: its entry in out/a, out/a's in out and out's in the root must all be durable
    const { synced, spawned } = await syncAfterCommits(root, 3, 'out/a/b');
    assert.deepEqual(spawned, []);
    const expected = [
      ...Array.from({ length: 3 }, (_, i) => path.join(root, 'out', 'a', 'b', `t${i}.txt`)),
      path.join(root, 'out', 'a', 'b'),
      path.join(root, 'out', 'a'),
      path.join(root, 'out'),
      root,
    ];
    assert.deepEqual([...synced].sort(), expected.sort());
  });
});

test('a build that committed more than SYNCFS_ABOVE outputs makes them durable with one sync -f of their filesystem', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { synced, spawned } = await syncAfterCommits(root, SYNCFS_ABOVE + 1);
    assert.deepEqual(spawned, [['sync', '-f', path.join(root, 'out')]]);
    assert.deepEqual(synced, [], 'the syncfs covered every file: none fsynced one by one');
  });
});

test('where sync -f fails, every committed file, the folders on the way and their parents are fsynced one by one', async () => {
  await inRoot(async (root) => {
    const n = SYNCFS_ABOVE + 1;
    const { synced, spawned } = await syncAfterCommits(root, n, 'out/new', true);
    assert.equal(spawned.length, 1, 'sync -f was tried once');
    const expected = [
      ...Array.from({ length: n }, (_, i) => path.join(root, 'out', 'new', `t${i}.txt`)),
      path.join(root, 'out', 'new'),
      path.join(root, 'out'),
      root,
    ];
    assert.deepEqual([...synced].sort(), expected.sort());
  });
});

test('a committed file the engine may not open is made durable by one sync -f of its folder, the others fsynced one by one; if that fails too, the build reports a write error naming the file', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const denied = ['out/t1.txt', 'out/t2.txt'];
    const { synced, spawned } = await syncAfterCommits(root, 4, 'out', false, denied);
    assert.deepEqual(
      spawned,
      [['sync', '-f', path.join(root, 'out')]],
      'one syncfs for the folder, however many such files',
    );
    assert.deepEqual(
      [...synced].sort(),
      [path.join(root, 'out', 't0.txt'), path.join(root, 'out', 't3.txt'), path.join(root, 'out'), root].sort(),
    );
  });
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    await assert.rejects(syncAfterCommits(root, 4, 'out', true, ['out/t1.txt']), (e: Error) => {
      assert.match(e.message, /out\/t1\.txt/);
      assert.match(e.message, /EACCES/);
      return true;
    });
  });
});

test('the work a build gives syncTouched (its sidecars) runs once, while sync -f flushes: after the spawn, before its answer', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { order } = await syncAfterCommits(root, SYNCFS_ABOVE + 1, 'out', false, [], (o) => o.push('meanwhile'));
    assert.deepEqual(order, ['spawned', 'meanwhile', 'answered']);
  });
});

test('with few outputs (no sync -f), that work runs once, after every file and folder is fsynced', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { order } = await syncAfterCommits(root, 3, 'out', false, [], (o) => o.push('meanwhile'));
    assert.equal(order.filter((x) => x === 'meanwhile').length, 1);
    assert.equal(order.at(-1), 'meanwhile');
    assert.ok(order.includes('fsync'));
  });
});

test('where sync -f fails, that work still runs once, and the files are fsynced one by one as before', async () => {
  await inRoot(async (root) => {
    const { order, synced } = await syncAfterCommits(root, SYNCFS_ABOVE + 1, 'out/new', true, [], (o) =>
      o.push('meanwhile'),
    );
    assert.deepEqual(order.slice(0, 3), ['spawned', 'meanwhile', 'answered']);
    assert.equal(order.filter((x) => x === 'meanwhile').length, 1);
    assert.equal(synced.length, SYNCFS_ABOVE + 1 + 3, 'every file, out/new, out and the root');
  });
});

test('what that work throws (a sidecar the disk refused) is thrown by syncTouched once the sync has answered', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    let seen: string[] = [];
    await assert.rejects(
      syncAfterCommits(root, SYNCFS_ABOVE + 1, 'out', false, [], (o) => {
        seen = o;
        o.push('meanwhile');
        throw new Error('ENOSPC: no space left on device, open reports/build/sha256/out/t0.txt.sha256');
      }),
      /ENOSPC/,
    );
    assert.deepEqual(seen, ['spawned', 'meanwhile', 'answered'], 'the sync was awaited before the error');
  });
});

// The end of a build decides first whether to sync at all (finishBuild, state/durability.ts).
const finish =
  (durableBefore: boolean, moreDirs: string[] = []) =>
  (c: OutputCommitter, meanwhile: (() => void) | undefined): Promise<boolean> =>
    c.finishBuild(meanwhile ?? (() => {}), durableBefore, () => moreDirs);

test('a build whose rules ran for less than a second in all syncs nothing at its end, runs its other work, and reports its outputs not durable', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { synced, spawned, order, result } = await syncAfterCommits(
      root,
      SYNCFS_ABOVE + 1,
      'out',
      false,
      [],
      (o) => o.push('meanwhile'),
      { redoMs: 5 },
      finish(true),
    );
    assert.equal(result, false, 'not durable: the stat-keyed records are marked so');
    assert.deepEqual(spawned, [], 'no syncfs');
    assert.deepEqual(synced, [], 'no fsync');
    assert.deepEqual(order, ['meanwhile']);
  });
});

test('a build whose rules ran for a second or more in all makes its outputs durable, as before', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { synced, spawned, result } = await syncAfterCommits(
      root,
      4,
      'out',
      false,
      [],
      undefined,
      { redoMs: 260 },
      finish(true),
    );
    assert.equal(result, true);
    assert.deepEqual(spawned, []);
    assert.equal(synced.filter((p) => p.endsWith('.txt')).length, 4, 'each output fsynced (4 × 260 ms ≥ 1 s)');
  });
});

test('a build that committed an output fsynced when hashed (a rule of a second or more) makes the rest durable too', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { synced, result } = await syncAfterCommits(
      root,
      1,
      'out',
      false,
      [],
      undefined,
      { redoMs: 1, synced: true },
      finish(true),
    );
    assert.equal(result, true);
    assert.ok(synced.includes(path.join(root, 'out')), 'the folder that received it (its rename) is fsynced');
  });
});

test('after builds that left their outputs to write-back, a build that syncs does it with one syncfs per filesystem, which covers theirs', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    fs.mkdirSync(path.join(root, 'elsewhere'));
    const { spawned, synced, result } = await syncAfterCommits(
      root,
      2,
      'out',
      false,
      [],
      undefined,
      { redoMs: 900 },
      finish(false, [path.join(root, 'elsewhere')]),
    );
    assert.equal(result, true);
    assert.equal(
      spawned.length,
      1,
      'one filesystem: one sync -f, not per-file fsyncs that would miss the earlier files',
    );
    assert.equal(spawned[0]![1], '-f');
    assert.deepEqual(synced, []);
  });
});

test('a build that committed nothing keeps what was known of durability, and syncs nothing', async () => {
  for (const before of [true, false])
    await inRoot(async (root) => {
      const { synced, spawned, result } = await syncAfterCommits(
        root,
        0,
        'out',
        false,
        [],
        undefined,
        {},
        finish(before),
      );
      assert.equal(result, before);
      assert.deepEqual([synced, spawned], [[], []]);
    });
});

test('where that syncfs fails, the build fsyncs its own files one by one and reports the earlier ones still not durable', async () => {
  await inRoot(async (root) => {
    fs.mkdirSync(path.join(root, 'out'));
    const { synced, result } = await syncAfterCommits(
      root,
      2,
      'out',
      true,
      [],
      undefined,
      { redoMs: 900 },
      finish(false),
    );
    assert.equal(result, false);
    assert.equal(synced.filter((p) => p.endsWith('.txt')).length, 2);
  });
});
