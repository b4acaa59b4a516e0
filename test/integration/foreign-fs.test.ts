// Outputs on another filesystem and on a full one, through the real CLI (root: a tmpfs is mounted
// inside the workspace; skipped with the reason where mounting is not permitted).
//   src/v.txt --> pair (out/p1.txt, out/p2.txt, out/dir/) --> chain (out/c.txt)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';
import { TestRig } from '../helpers/rig.ts';
import { cannotMount, fillUp, mountTmpfs, remount, unmount } from '../helpers/tmpfs.ts';

const PIPELINE = `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['chain'],
  targets: [
    defineTarget({ name: 'pair', rule: 'rules/pair.ts', inputs: { v: 'src/v.txt' }, outputs: ['out/p1.txt', 'out/p2.txt', 'out/dir/'] }),
    defineTarget({ name: 'chain', rule: 'rules/chain.ts', inputs: { p: target('pair') }, outputs: ['out/c.txt'] }),
  ],
});
`;

const PAIR = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'pair', version: 1, run(ctx) {
  const v = fs.readFileSync(ctx.inputs('v')[0], 'utf8').trim();
  const big = 'x'.repeat(Number(process.env.PAIR_BYTES ?? 1024));
  fs.writeFileSync(ctx.output('out/p1.txt'), v + '\\n' + big);
  const dir = ctx.output('out/dir');
  fs.writeFileSync(path.join(dir, 'f.txt'), v + '\\n');
  fs.symlinkSync('f.txt', path.join(dir, 'latest'));
  fs.writeFileSync(ctx.output('out/p2.txt'), v + '\\n');
}});
`;

const CHAIN = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'chain', version: 1, run(ctx) {
  const vs = ctx.inputs('p').filter((p) => p.endsWith('.txt')).map((p) => fs.readFileSync(p, 'utf8').split('\\n')[0]);
  fs.writeFileSync(ctx.output('out/c.txt'), vs.join(',') + '\\n');
}});
`;

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/pair.ts': PAIR,
    'rules/chain.ts': CHAIN,
    'src/v.txt': 'one\n',
  });
}

const skip = cannotMount();

/** The one-message shape of an engine write error: headline naming path and filesystem, no stack. */
function assertWriteError(stderr: string, what: RegExp, mount: string, code: string): void {
  assert.match(stderr, what);
  assert.ok(stderr.includes(`(${code}) on the filesystem mounted at ${mount} (tmpfs`), stderr);
  assert.doesNotMatch(stderr, /internal error|\n\s+at /, 'no stack');
  assert.equal(stderr.split('\n').filter((l) => l.startsWith('rc1-build: error:')).length, 1, stderr);
}

test('outputs on a mounted tmpfs: builds, restores and recovers across filesystems; a commit recovery cannot finish is reported and rebuilt', {
  skip,
}, async () => {
  const r = rig();
  const out = path.join(r.dir, 'out');
  mountTmpfs(out, '4m');
  try {
    let b = r.run([]);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.equal(r.read('out/c.txt'), 'one,one\n');
    assert.equal(fs.readlinkSync(path.join(out, 'dir/latest')), 'f.txt');
    assert.equal(r.run(['audit']).code, 0);
    r.write('src/v.txt', 'two\n');
    assert.equal(r.run([]).code, 0);
    r.write('src/v.txt', 'one\n');
    b = r.run([]);
    assert.match(b.stdout, /restored pair/);
    assert.equal(r.read('out/p2.txt'), 'one\n');
    assert.equal(r.run(['audit']).code, 0);

    // A build killed inside pair's commit leaves a journal; make the tmpfs read-only so the
    // next build cannot roll it forward.
    r.write('src/v.txt', 'three\n');
    const child = r.spawn(['pair'], { RC1_FAULT_COMMIT_PAUSE_MS: '1000' });
    const exited = new Promise((res) => child.on('exit', res));
    const journal = path.join(r.dir, '.rc1/journal/pair.json');
    const t0 = Date.now();
    while (!fs.existsSync(journal) && Date.now() - t0 < 20_000) await sleep(5);
    assert.ok(fs.existsSync(journal), 'the build reached the commit');
    await sleep(1500); // one move done, the others not (a move each second: ±0.5 s of slack on a loaded machine)
    child.kill('SIGKILL');
    await exited;
    remount(out, 'ro');
    b = r.run([]);
    assert.equal(b.code, 1, b.stdout + b.stderr);
    assert.match(
      b.stdout + b.stderr,
      /pair: its interrupted commit could not be completed: cannot write output .*read-only filesystem \(EROFS\).*; it will run again/,
    );
    assertWriteError(b.stderr, /cannot write output (directory )?out\/\S+: read-only filesystem/, out, 'EROFS');
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');
    const st = JSON.parse(r.run(['status', '--json']).stdout) as { targets: { name: string; state: string }[] };
    assert.notEqual(st.targets.find((t) => t.name === 'pair')!.state, 'up-to-date');
    remount(out, 'rw');
    b = r.run(['--json']);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.ok(!fs.existsSync(journal), 'the journal of the refused commit was rolled forward');
    assert.equal(r.read('out/c.txt'), 'three,three\n');
    assert.equal(r.run(['audit']).code, 0);
  } finally {
    unmount(out);
    r.cleanup();
  }
});

test('a full filesystem under the outputs or the manifest: one message naming path and mount point, exit 1, lock released, nothing taken as done', {
  skip,
}, () => {
  const r = rig();
  const out = path.join(r.dir, 'out');
  const rc1 = path.join(r.dir, 'reports/build');
  mountTmpfs(out, '256k');
  try {
    const filler = fillUp(out, 64 * 1024);
    let b = r.run([], { PAIR_BYTES: String(200 * 1024) });
    assert.equal(b.code, 1, b.stdout + b.stderr);
    assertWriteError(b.stderr, /cannot write output out\/p1\.txt: no space left on device/, out, 'ENOSPC');
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');
    assert.deepEqual(
      fs.readdirSync(out).filter((f) => f !== '.filler'),
      [],
      'nothing half-written left in out/',
    );
    const st = JSON.parse(r.run(['status', '--json']).stdout) as { targets: { name: string; state: string }[] };
    assert.ok(st.targets.every((t) => t.state !== 'up-to-date'));
    fs.rmSync(filler);
    b = r.run([], { PAIR_BYTES: String(200 * 1024) });
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.equal(r.run(['audit']).code, 0);

    // The manifest's filesystem full: the build's targets are committed, the manifest is not.
    mountTmpfs(rc1, '64k');
    fillUp(rc1, 0);
    r.write('src/v.txt', 'two\n');
    b = r.run(['--json']);
    assert.equal(b.code, 1, b.stdout + b.stderr);
    assertWriteError(
      b.stderr,
      /cannot write the (manifest|sidecar) reports\/build\/\S+: no space left on device/,
      rc1,
      'ENOSPC',
    );
    assert.equal(b.events.at(-1)!.event, 'error');
    assert.equal(b.events.at(-1)!.exitCode, 1);
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');
    unmount(rc1);
    b = r.run([]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /0 ran/);
    assert.equal(r.run(['audit']).code, 0, 'the no-op build wrote the manifest and sidecars');
  } finally {
    unmount(rc1);
    unmount(out);
    r.cleanup();
  }
});
