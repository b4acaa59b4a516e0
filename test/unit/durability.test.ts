// Records that let the engine trust a file's stat instead of its content are marked with the boot
// they were written in and whether the builds' outputs were durable then
// (packages/engine/src/state/durability.ts). One written before they were is not trusted in a
// later boot: after a power cut, every file is hashed again. RC1_FAULT_BOOT_ID stands in for a
// reboot here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GlobCache } from '../../packages/engine/src/hash/glob-cache.ts';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';
import { bootId, markNow, trusted } from '../../packages/engine/src/state/durability.ts';

/** Runs `body` as if the machine had booted with id `id` (restoring the real one after). */
function inBoot<T>(id: string, body: () => T): T {
  const was = process.env.RC1_FAULT_BOOT_ID;
  process.env.RC1_FAULT_BOOT_ID = id;
  try {
    return body();
  } finally {
    if (was === undefined) delete process.env.RC1_FAULT_BOOT_ID;
    else process.env.RC1_FAULT_BOOT_ID = was;
  }
}

function tempRoot(): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-durability-')));
}

test('a record written when outputs were durable is trusted in any boot; one written before they were, only in its own', () => {
  assert.equal(trusted({ boot: 'a', durable: true }, 'b'), true);
  assert.equal(trusted({ boot: 'a', durable: false }, 'a'), true);
  assert.equal(trusted({ boot: 'a', durable: false }, 'b'), false);
  assert.equal(trusted({ boot: 'a', durable: false }, null), false, 'no boot id to compare: not trusted');
  assert.equal(trusted({}, 'b'), true, 'a record from before the mark was written after a sync');
  assert.equal(trusted(null, 'b'), true);
  assert.deepEqual(
    inBoot('x', () => markNow(false)),
    { boot: 'x', durable: false },
  );
});

test('the boot id is the machine’s own where it can be read', () => {
  const real = fs.existsSync('/proc/sys/kernel/random/boot_id')
    ? fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    : null;
  if (process.env.RC1_FAULT_BOOT_ID === undefined) assert.equal(bootId(), real);
});

test('a stat cache saved before the outputs were durable is dropped in a later boot, and every file is hashed again', () => {
  const root = tempRoot();
  try {
    fs.writeFileSync(path.join(root, 'a.txt'), 'alpha\n');
    const file = path.join(root, 'statcache.json');
    // Old enough not to be racy: the entry is trusted by a later lookup in the same boot.
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(path.join(root, 'a.txt'), old, old);
    inBoot('boot-1', () => {
      const c = new StatCache(root, file);
      c.hash('a.txt');
      c.setDurable(false);
      c.save();
    });
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { boot: string; durable: boolean };
    assert.deepEqual([saved.boot, saved.durable], ['boot-1', false]);

    const sameBoot = inBoot('boot-1', () => new StatCache(root, file));
    sameBoot.hash('a.txt');
    assert.deepEqual([sameBoot.counters.statHits, sameBoot.counters.hashed], [1, 0], 'same boot: the stat is trusted');
    assert.equal(sameBoot.durable, false, 'and still not durable');

    const after = inBoot('boot-2', () => new StatCache(root, file));
    assert.equal(after.droppedForReboot, true);
    after.hash('a.txt');
    assert.deepEqual([after.counters.statHits, after.counters.hashed], [0, 1], 'another boot: hashed by content');
    assert.equal(after.durable, true, 'what survived the reboot is on disk');
    inBoot('boot-2', () => after.save());
    assert.equal(
      (JSON.parse(fs.readFileSync(file, 'utf8')) as { boot: string }).boot,
      'boot-2',
      'written again, marked anew',
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a stat cache saved when the outputs were durable is trusted after a reboot', () => {
  const root = tempRoot();
  try {
    fs.writeFileSync(path.join(root, 'a.txt'), 'alpha\n');
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(path.join(root, 'a.txt'), old, old);
    const file = path.join(root, 'statcache.json');
    inBoot('boot-1', () => {
      const c = new StatCache(root, file);
      c.hash('a.txt');
      c.setDurable(true);
      c.save();
    });
    const after = inBoot('boot-2', () => new StatCache(root, file));
    after.hash('a.txt');
    assert.deepEqual([after.droppedForReboot, after.counters.statHits], [false, 1]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a glob cache saved before the outputs were durable walks again in a later boot', async () => {
  const root = tempRoot();
  try {
    fs.mkdirSync(path.join(root, 'src'));
    fs.writeFileSync(path.join(root, 'src', 'a.txt'), 'a');
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(path.join(root, 'src'), old, old);
    const file = path.join(root, 'globcache.json');
    for (const durable of [false, true]) {
      fs.rmSync(file, { force: true });
      const g = inBoot('boot-1', () => new GlobCache(root, file));
      assert.deepEqual(await g.expand('src/*.txt'), ['src/a.txt']);
      inBoot('boot-1', () => g.save(durable));
      const later = inBoot('boot-2', () => new GlobCache(root, file));
      assert.deepEqual(await later.expand('src/*.txt'), ['src/a.txt']);
      assert.equal(
        later.misses,
        durable ? 0 : 1,
        durable ? 'durable: the cached walk is used' : 'not durable: walked again',
      );
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
