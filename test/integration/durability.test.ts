// A build of quick rules leaves its outputs to the kernel's write-back instead of waiting for a
// sync, and marks its stat cache as written before they were durable
// (packages/engine/src/state/durability.ts). The power cut it must survive is simulated here: an
// output whose bytes were lost while its metadata was kept (zeros of the same length, with the
// stat the cache recorded), and a new boot (RC1_FAULT_BOOT_ID). Within the boot the stat cache is
// trusted, as always; in the next boot it is not, and the torn output is rebuilt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { standardRig } from '../helpers/rig.ts';

type Entry = [number, string, string, string, 0 | 1, string];
interface StatCacheFile {
  format: number;
  boot?: string;
  durable?: boolean;
  entries: Record<string, Entry>;
}

test('after a power cut, an output a build of quick rules left to write-back is checked by content and rebuilt if torn, never taken as up to date', () => {
  const rig = standardRig();
  try {
    const first = rig.run([]);
    assert.equal(first.code, 0, first.stderr);
    const cacheFile = path.join(rig.dir, '.rc1/statcache.json');
    const saved = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as StatCacheFile;
    assert.equal(saved.durable, false, 'quick rules only: no sync at the end, and the stat cache says so');
    assert.match(String(saved.boot), /\S/, 'with the boot it was written in');

    // The power cut: out/c.txt keeps its length and metadata, its bytes are gone (zeros), and the
    // stat cache that survived describes exactly that stat with the sha256 of the lost bytes.
    const good = rig.read('out/c.txt');
    const abs = path.join(rig.dir, 'out/c.txt');
    fs.writeFileSync(abs, Buffer.alloc(Buffer.byteLength(good)));
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(abs, old, old);
    const st = fs.statSync(abs, { bigint: true });
    const entry = saved.entries['out/c.txt'];
    assert.ok(entry, 'the stat cache lists out/c.txt');
    saved.entries['out/c.txt'] = [
      entry[0],
      String(st.mtimeNs),
      String(st.ino),
      entry[3],
      0,
      String(st.ctimeNs - st.mtimeNs),
    ];
    fs.writeFileSync(cacheFile, JSON.stringify(saved));
    rig.runs();

    // The same boot: the recorded stat stands for the content (what the stat cache is for).
    const sameBoot = rig.run(['c']);
    assert.equal(sameBoot.code, 0, sameBoot.stderr);
    assert.deepEqual(rig.runs(), [], 'in the boot that wrote it, the stat cache is trusted');

    // The next boot: the stat cache of a build that did not sync is dropped, every file is hashed.
    const rebooted = rig.run(['c', '--json'], { RC1_FAULT_BOOT_ID: 'after-the-power-cut' });
    assert.equal(rebooted.code, 0, rebooted.stderr);
    const end = rebooted.events.find((e) => e.event === 'end') as { counts: { ran: number; restored: number } };
    assert.equal(
      end.counts.ran + end.counts.restored,
      1,
      'the torn output reads as stale: c is built again (here restored from the cache)',
    );
    assert.equal(rig.read('out/c.txt'), good);
    const after = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as StatCacheFile;
    assert.equal(after.boot, 'after-the-power-cut', 'the stat cache is written anew in the new boot');
  } finally {
    rig.cleanup();
  }
});

test('a build with a rule of a second or more makes its outputs durable, and its stat cache is trusted after a reboot', () => {
  const rig = standardRig();
  try {
    rig.write(
      'rules/copy.ts',
      rig
        .read('rules/copy.ts')
        .replace(
          'run(ctx) {',
          "run(ctx) {\n    if (process.env.RC1_TEST_SLOW === '1') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1100);",
        ),
    );
    const r = rig.run(['c'], { RC1_TEST_SLOW: '1' });
    assert.equal(r.code, 0, r.stderr);
    const saved = JSON.parse(fs.readFileSync(path.join(rig.dir, '.rc1/statcache.json'), 'utf8')) as StatCacheFile;
    assert.equal(saved.durable, true, 'a long rule: everything is synced at the end, as before');
    rig.runs();
    const rebooted = rig.run(['c', '--json'], { RC1_FAULT_BOOT_ID: 'another-boot', RC1_TEST_SLOW: '1' });
    assert.equal(rebooted.code, 0, rebooted.stderr);
    assert.deepEqual(rig.runs(), []);
    const end = rebooted.events.find((e) => e.event === 'end') as { stats: { hashedPaths: string[] } };
    // (An output hashed within its timestamp tick is re-hashed once whatever the boot: racy.)
    for (const p of ['src/c.txt', 'rc1.build.ts', 'configs/default.yaml'])
      assert.ok(!end.stats.hashedPaths.includes(p), `${p} not re-hashed: a durable stat cache is trusted in any boot`);
  } finally {
    rig.cleanup();
  }
});
