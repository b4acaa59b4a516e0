// Commit recovery that meets something in its way never wedges the workspace, through the real
// CLI: a build killed inside a journaled multi-output commit, then a plain file put where an
// output's directory should be. Also: an input the engine cannot read fails its target only.
//   src/v.txt --> pair (out/a/p1.txt, out/b/p2.txt, out/d/) ; src/w.txt --> solo (out/solo.txt)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import fsModule from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { runClean } from '../../packages/engine/src/cli/clean.ts';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';
import { openWorkspace } from '../../packages/engine/src/workspace/workspace.ts';
import { TestRig } from '../helpers/rig.ts';
import { cannotMount, mountTmpfs, unmount } from '../helpers/tmpfs.ts';

const PIPELINE = `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['pair', 'solo'],
  targets: [
    defineTarget({ name: 'pair', rule: 'rules/pair.ts', inputs: { v: 'src/v.txt' }, outputs: ['out/a/p1.txt', 'out/b/p2.txt', 'out/d/'] }),
    defineTarget({ name: 'solo', rule: 'rules/solo.ts', inputs: { w: 'src/w.txt' }, outputs: ['out/solo.txt'] }),
  ],
});
`;

const PAIR = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'pair', version: 1, run(ctx) {
  const v = fs.readFileSync(ctx.inputs('v')[0], 'utf8');
  fs.writeFileSync(ctx.output('out/a/p1.txt'), v);
  fs.writeFileSync(ctx.output('out/b/p2.txt'), v);
  fs.writeFileSync(path.join(ctx.output('out/d'), 'f.txt'), v);
}});
`;

const SOLO = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'solo', version: 1, run(ctx) {
  fs.writeFileSync(ctx.output('out/solo.txt'), fs.readFileSync(ctx.inputs('w')[0], 'utf8'));
}});
`;

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/pair.ts': PAIR,
    'rules/solo.ts': SOLO,
    'src/v.txt': 'one\n',
    'src/w.txt': 'w\n',
  });
}

/** Start a build of pair, SIGKILL it once its commit journal exists (before any move). */
async function killInCommit(r: TestRig): Promise<void> {
  const child = r.spawn(['pair'], { RC1_FAULT_COMMIT_PAUSE_MS: '2000' });
  const exited = new Promise((res) => child.on('exit', res));
  const journal = path.join(r.dir, '.rc1/journal/pair.json');
  const t0 = Date.now();
  while (!fs.existsSync(journal) && Date.now() - t0 < 20_000) await sleep(5);
  assert.ok(fs.existsSync(journal), 'the build reached the commit');
  child.kill('SIGKILL');
  await exited;
}

test('a killed commit whose output directory became a plain file is reported and rebuilt, never wedging builds or clean', async () => {
  const r = rig();
  const journal = path.join(r.dir, '.rc1/journal/pair.json');
  try {
    assert.equal(r.run([]).code, 0);
    r.write('src/v.txt', 'two\n');
    await killInCommit(r);
    fs.rmSync(path.join(r.dir, 'out/b'), { recursive: true });
    r.write('out/b', 'a plain file where a directory should be\n');

    let b = r.run([]);
    const all = b.stdout + b.stderr;
    assert.equal(b.code, 1, all);
    assert.match(
      all,
      /pair: its interrupted commit could not be completed: cannot write output out\/b\/p2\.txt: a file is in the way .*\(EEXIST\).*; it will run again/,
    );
    assert.match(b.stderr, /rc1-build: error: cannot write output out\/b\/p2\.txt: .*\(EEXIST\)/);
    assert.doesNotMatch(all, /internal error|\n\s+at /);
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');

    // The failed commit of that build left its journal again: clean recovers past it.
    const c = r.run(['clean']);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.doesNotMatch(c.stdout + c.stderr, /internal error/);
    assert.ok(!fs.existsSync(journal), 'clean removed the journal it could not roll forward');

    fs.rmSync(path.join(r.dir, 'out/b'), { recursive: true, force: true });
    b = r.run([]);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.equal(r.read('out/b/p2.txt'), 'two\n');
    assert.equal(r.run(['audit']).code, 0);

    // A dangling symlink where the output directory's parent should be: same, then heals.
    r.write('src/v.txt', 'three\n');
    await killInCommit(r);
    fs.rmSync(path.join(r.dir, 'out/b'), { recursive: true });
    fs.symlinkSync('b', path.join(r.dir, 'out/b')); // a symlink loop
    b = r.run([]);
    assert.notEqual(b.code, 0);
    assert.match(
      b.stdout + b.stderr,
      /pair: its interrupted commit could not be completed: cannot write output out\/b\/p2\.txt: .*\((ELOOP|EEXIST)\)/,
    );
    assert.doesNotMatch(b.stdout + b.stderr, /internal error/);
    fs.rmSync(path.join(r.dir, 'out/b'));
    b = r.run([]);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.ok(!fs.existsSync(journal));
    assert.equal(r.read('out/b/p2.txt'), 'three\n');
    assert.equal(r.run(['audit']).code, 0);
  } finally {
    r.cleanup();
  }
});

test('clean after a killed commit: the outputs its roll-forward replaced are freed (their aside names unlinked) before clean ends', async () => {
  const r = rig();
  try {
    assert.equal(r.run([]).code, 0);
    r.write('src/v.txt', 'two\n');
    await killInCommit(r);
    const ws = await openWorkspace(r.dir);
    // The unlinks of the replaced outputs' aside names (.rc1/tmp/replaced-*), held back.
    const held: (() => void)[] = [];
    const realUnlink = fsModule.unlink;
    fsModule.unlink = ((p: fs.PathLike, cb: fs.NoParamCallback) => {
      if (String(p).includes(`${path.sep}replaced-`)) held.push(() => realUnlink(p, cb));
      else realUnlink(p, cb);
    }) as typeof fsModule.unlink;
    syncBuiltinESMExports();
    let ended = false;
    let cleaned: Promise<number>;
    try {
      cleaned = Promise.resolve(runClean(ws, ['pair'], false, { out: () => {} })).finally(() => {
        ended = true;
      });
    } finally {
      fsModule.unlink = realUnlink;
      syncBuiltinESMExports();
    }
    await sleep(200);
    assert.equal(held.length, 2, 'the two replaced files of pair were linked aside');
    assert.equal(ended, false, 'clean has not ended while an unlink is pending');
    for (const h of held) h();
    assert.equal(await cleaned, 0);
    assert.deepEqual(
      fs.readdirSync(path.join(r.dir, '.rc1/tmp')).filter((f) => f.startsWith('replaced-')),
      [],
      'no aside name left',
    );
    assert.ok(!r.exists('out/a/p1.txt') && !r.exists('.rc1/journal/pair.json'));
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');
  } finally {
    r.cleanup();
  }
});

test("clean whose recovery fails (the journal cannot be removed) answers its error only after the replaced outputs' unlinks are done", async () => {
  const r = rig();
  try {
    assert.equal(r.run([]).code, 0);
    r.write('src/v.txt', 'two\n');
    await killInCommit(r);
    const ws = await openWorkspace(r.dir);
    const journal = path.join(r.dir, '.rc1/journal/pair.json');
    const held: (() => void)[] = [];
    const realUnlink = fsModule.unlink;
    const realRmSync = fsModule.rmSync;
    fsModule.unlink = ((p: fs.PathLike, cb: fs.NoParamCallback) => {
      if (String(p).includes(`${path.sep}replaced-`)) held.push(() => realUnlink(p, cb));
      else realUnlink(p, cb);
    }) as typeof fsModule.unlink;
    // The disk fails the journal's removal, after the roll-forward has started the unlinks.
    fsModule.rmSync = ((p: fs.PathLike, o?: fs.RmOptions) => {
      if (String(p) === journal)
        throw Object.assign(new Error(`EIO: i/o error, rm '${journal}'`), { code: 'EIO', path: journal });
      realRmSync(p, o);
    }) as typeof fsModule.rmSync;
    syncBuiltinESMExports();
    let ended = false;
    let cleaned: Promise<number>;
    try {
      cleaned = Promise.resolve(runClean(ws, ['pair'], false, { out: () => {} })).finally(() => {
        ended = true;
      });
      cleaned.catch(() => {}); // awaited below
    } finally {
      fsModule.unlink = realUnlink;
      fsModule.rmSync = realRmSync;
      syncBuiltinESMExports();
    }
    await sleep(200);
    assert.equal(held.length, 2, 'the two replaced files of pair were linked aside');
    assert.equal(ended, false, 'clean has not answered while an unlink is pending');
    for (const h of held) h();
    await assert.rejects(cleaned, /EIO|journal/);
    assert.deepEqual(
      fs.readdirSync(path.join(r.dir, '.rc1/tmp')).filter((f) => f.startsWith('replaced-')),
      [],
      'no aside name left',
    );
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');
  } finally {
    r.cleanup();
  }
});

test('recovery of a directory commit killed after its rename removes the old copy left aside', async () => {
  const r = rig();
  try {
    assert.equal(r.run([]).code, 0);
    r.write('src/v.txt', 'two\n');
    await killInCommit(r);
    // As if killed between the directory's rename and the removal of its old copy.
    fs.renameSync(path.join(r.dir, 'out/d'), path.join(r.dir, 'out/d.rc1-old'));
    const tmpD = JSON.parse(r.read('.rc1/journal/pair.json')).moves.find((m: { dir: boolean }) => m.dir).from as string;
    fs.renameSync(tmpD, path.join(r.dir, 'out/d'));
    const b = r.run([]);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.ok(!fs.existsSync(path.join(r.dir, 'out/d.rc1-old')), 'no .rc1-old left');
    assert.equal(r.read('out/d/f.txt'), 'two\n');
    assert.equal(r.run(['audit']).code, 0);
  } finally {
    r.cleanup();
  }
});

const canChattr = spawnSync('chattr', ['--help']).error === undefined && process.getuid?.() === 0;

test('a trace log the build cannot repair (immutable file, torn tail) stops the build with one message and releases the lock', {
  skip: !canChattr && 'needs root and chattr',
}, () => {
  const r = rig();
  const trace = path.join(r.dir, '.rc1/trace.log');
  try {
    assert.equal(r.run(['solo']).code, 0);
    fs.appendFileSync(trace, '{"torn'); // a build killed mid-line
    assert.equal(spawnSync('chattr', ['+i', trace]).status, 0);
    let b: ReturnType<TestRig['run']>;
    try {
      b = r.run(['solo']);
    } finally {
      spawnSync('chattr', ['-i', trace]);
    }
    assert.equal(b.code, 1, b.stdout + b.stderr);
    assert.match(b.stderr, /cannot write the trace log \S*\.rc1\/trace\.log: operation not permitted \(EPERM\)/);
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'lock released');
    b = r.run(['solo']);
    assert.equal(b.code, 0, b.stdout + b.stderr);
  } finally {
    spawnSync('chattr', ['-i', trace]);
    r.cleanup();
  }
});

test('an input the engine cannot read (a symlink loop) fails its target with "cannot read", and -k builds the others', () => {
  const pipeline = PIPELINE.replace("defaultTargets: ['pair', 'solo'],", "defaultTargets: ['loopy', 'solo'],").replace(
    '  ],\n});',
    "    defineTarget({ name: 'loopy', rule: 'rules/solo.ts', inputs: { w: 'src/loop.txt' }, outputs: ['out/loopy.txt'] }),\n  ],\n});",
  );
  const r = new TestRig({
    'rc1.build.ts': pipeline,
    'rules/pair.ts': PAIR,
    'rules/solo.ts': SOLO.replace("ctx.output('out/solo.txt')", 'ctx.output(ctx.outputs[0])'),
    'src/v.txt': 'one\n',
    'src/w.txt': 'w\n',
  });
  try {
    fs.symlinkSync('loop.txt', path.join(r.dir, 'src/loop.txt'));
    const b = r.run(['-k']);
    assert.equal(b.code, 1, b.stdout + b.stderr);
    assert.match(
      b.stdout + b.stderr,
      /loopy: cannot read src\/loop\.txt: too many symbolic links encountered \(ELOOP\)/,
    );
    assert.doesNotMatch(b.stdout + b.stderr, /cannot write|internal error|\n\s+at /);
    assert.equal(r.read('out/solo.txt'), 'w\n', 'the other target was built');
  } finally {
    r.cleanup();
  }
});

test("a build killed during a single output's copy to another filesystem leaves nothing partial: the next build rolls it forward", {
  skip: cannotMount(),
}, async () => {
  const r = rig();
  const out = path.join(r.dir, 'out');
  fs.mkdirSync(out);
  mountTmpfs(out, '1m');
  try {
    assert.equal(r.run(['solo']).code, 0);
    r.write('src/w.txt', 'w2\n');
    const child = r.spawn(['solo'], { RC1_FAULT_COMMIT_PAUSE_MS: '2000' });
    const exited = new Promise((res) => child.on('exit', res));
    const journal = path.join(r.dir, '.rc1/journal/solo.json');
    const t0 = Date.now();
    while (!fs.existsSync(journal) && Date.now() - t0 < 20_000) await sleep(5);
    assert.ok(fs.existsSync(journal), 'a cross-filesystem copy of one file is journaled');
    child.kill('SIGKILL');
    await exited;
    r.write('out/solo.txt.rc1-new', 'w'); // what a kill mid-copy leaves
    const b = r.run(['solo']);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.ok(!fs.existsSync(path.join(out, 'solo.txt.rc1-new')), 'the partial copy is gone');
    assert.ok(!fs.existsSync(journal));
    assert.equal(r.read('out/solo.txt'), 'w2\n');
    assert.equal(r.run(['audit']).code, 0);
  } finally {
    unmount(out);
    r.cleanup();
  }
});
