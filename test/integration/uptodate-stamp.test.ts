// The no-op fast path (packages/engine/src/cli/fast-noop.ts, state/uptodate-stamp.ts) through
// the real CLI: a repeated no-op answers from .rc1/uptodate.json without loading the engine, and
// every kind of change a full build would act on makes the next build decide in full (and run
// what it must), never answer from the stamp.
//   src/*.txt (glob) --> cat --> out/cat.txt --> tree --> out/tree/ (a directory output)
//   rules/cat.ts imports lib/tag.ts; params cat.suffix (configs/default.yaml); env TOKEN
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TestRig } from '../helpers/rig.ts';
import { WorkspaceLock } from '../../packages/engine/src/state/workspace-lock.ts';

const PIPELINE = `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['tree'],
  targets: [
    defineTarget({ name: 'cat', rule: 'rules/cat.ts', inputs: { src: 'src/*.txt' }, outputs: ['out/cat.txt'], params: ['cat'], env: ['TOKEN'] }),
    defineTarget({ name: 'tree', rule: 'rules/tree.ts', inputs: { cat: target('cat') }, outputs: ['out/tree/'] }),
    defineTarget({ name: 'other', rule: 'rules/tree.ts', inputs: { cat: 'src/a.txt' }, outputs: ['out/other/'] }),
  ],
});
`;

const CAT = `import { defineRule } from 'rc1-build';
import { z } from 'zod';
import * as fs from 'node:fs';
import { tag } from '../lib/tag.ts';
export default defineRule({
  name: 'cat', version: 1,
  params: z.object({ cat: z.object({ suffix: z.string() }).strict() }),
  run(ctx) {
    fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const text = ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join('');
    fs.writeFileSync(ctx.output('out/cat.txt'), tag(text) + ctx.params.cat.suffix);
  },
});
`;

const TREE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({
  name: 'tree', version: 1,
  run(ctx) {
    fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const dir = ctx.output(ctx.target === 'tree' ? 'out/tree' : 'out/other');
    const text = fs.readFileSync(ctx.inputs('cat')[0], 'utf8');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'sub', 'copy.txt'), text);
  },
});
`;

const settle = (): void => {
  // Past the timestamp tick (100 ms) of what the last build wrote: a stat of it is trusted then.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
};

const FAST = /rc1 fastpath: answered from \.rc1\/uptodate\.json/;
const ENV = { RC1_DEBUG: 'fastpath', TOKEN: 't0k3n-secret-value' };

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/cat.ts': CAT,
    'rules/tree.ts': TREE,
    'lib/tag.ts': "export const tag = (s: string): string => '[' + s.trim() + ']';\n",
    'configs/default.yaml': 'cat:\n  suffix: "!"\n',
    'src/a.txt': 'alpha\n',
    'src/b.txt': 'beta\n',
  });
}

/** Builds, settles, builds again (a no-op that leaves the stamp) and checks that the next answers from it. */
function stamped(r: TestRig, args: string[] = [], env: Record<string, string> = ENV): void {
  const first = r.run(args, env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  settle();
  const noop = r.run(args, env); // a full no-op, unless the first build left the stamp already
  assert.equal(noop.code, 0, noop.stdout + noop.stderr);
  const fast = r.run(args, env);
  assert.equal(fast.code, 0, fast.stdout + fast.stderr);
  assert.match(fast.stderr, FAST, 'the repeated no-op answers from the stamp');
  r.runs();
}

/** After `change`, the next build decides in full and runs exactly `expected`; its last line. */
function rebuilds(r: TestRig, change: () => void, expected: string[], env: Record<string, string> = ENV): string {
  stamped(r, [], env);
  change();
  const after = r.run([], env);
  assert.equal(after.code, 0, after.stdout + after.stderr);
  assert.doesNotMatch(after.stderr, FAST, 'a change is never answered from the stamp');
  assert.deepEqual(r.runs(), expected);
  return after.stdout;
}

test('a repeated no-op answers from the stamp: the same line, the run recorded, no secret in the stamp', () => {
  const r = rig();
  try {
    stamped(r);
    const slow = r.run([], { ...ENV, RC1_NO_FAST_NOOP: '1' });
    const fast = r.run([], ENV);
    assert.match(fast.stderr, FAST);
    const line = (s: string): string => s.replace(/ · \d+ms\n$/, '');
    assert.equal(line(fast.stdout), line(slow.stdout), 'the fast path prints the line the full build prints');
    assert.match(fast.stdout, /^rc1-build: ok · 0 ran, 0 restored, 2 up to date · \d+ms\n$/);
    assert.deepEqual(r.runs(), []);
    // The run history has the fast runs, as the full build records a no-op.
    const lines = r
      .read('.rc1/runs.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; counts: { upToDate: number }; full: boolean; trace: string });
    const [prev, last] = lines.slice(-2);
    assert.equal(last!.id, prev!.id + 1);
    assert.equal(last!.counts.upToDate, 2);
    assert.equal(last!.full, false);
    assert.equal(last!.trace, prev!.trace);
    const log = r.run(['log']);
    assert.equal(log.code, 0, log.stderr);
    // The stamp holds salted hashes of the variables, never their values.
    const stamp = r.read('.rc1/uptodate.json');
    assert.ok(!stamp.includes(ENV.TOKEN));
    assert.match(stamp, /"TOKEN":"[0-9a-f]{64}"/);
  } finally {
    r.cleanup();
  }
});

test('edits of a source, a source kept at its size and mtime, and a new file the glob matches rebuild', () => {
  const r = rig();
  try {
    rebuilds(r, () => r.write('src/a.txt', 'ALPHA\n'), ['cat', 'tree']);
    rebuilds(r, () => {
      // Same size, mtime put back: only the ctime tells (as the stat cache reads it).
      const abs = path.join(r.dir, 'src/b.txt');
      const st = fs.statSync(abs);
      fs.writeFileSync(abs, 'BETA\n');
      fs.utimesSync(abs, st.atime, st.mtime);
    }, ['cat', 'tree']);
    rebuilds(r, () => r.write('src/c.txt', 'gamma\n'), ['cat', 'tree']);
  } finally {
    r.cleanup();
  }
});

test('an output deleted or edited, and a file added to or removed from a directory output, are put back', () => {
  const r = rig();
  try {
    // Each is put back from the output cache (restored, not run).
    const restored = /^rc1-build: ok · 0 ran, 1 restored, 1 up to date/m;
    assert.match(
      rebuilds(r, () => fs.rmSync(path.join(r.dir, 'out/cat.txt')), []),
      restored,
    );
    assert.match(
      rebuilds(r, () => r.write('out/cat.txt', 'tampered'), []),
      restored,
    );
    assert.equal(r.read('out/cat.txt'), '[alpha\nbeta]!');
    assert.match(
      rebuilds(r, () => r.write('out/tree/sub/extra.txt', 'x'), []),
      restored,
    );
    assert.ok(!r.exists('out/tree/sub/extra.txt'));
    assert.match(
      rebuilds(r, () => fs.rmSync(path.join(r.dir, 'out/tree/sub/copy.txt')), []),
      restored,
    );
    assert.ok(r.exists('out/tree/sub/copy.txt'));
  } finally {
    r.cleanup();
  }
});

test("the rule's code, a library it imports, a param and rc1.build.ts rebuild", () => {
  const r = rig();
  try {
    rebuilds(r, () => r.write('rules/cat.ts', CAT.replace('text) +', "text) + '.' +")), ['cat', 'tree']);
    rebuilds(r, () => r.write('lib/tag.ts', "export const tag = (s: string): string => '<' + s.trim() + '>';\n"), [
      'cat',
      'tree',
    ]);
    rebuilds(r, () => r.write('configs/default.yaml', 'cat:\n  suffix: "?"\n'), ['cat', 'tree']);
    rebuilds(r, () => r.write('rc1.build.ts', PIPELINE.replace("'src/*.txt'", "'src/a.txt'")), ['cat', 'tree']);
  } finally {
    r.cleanup();
  }
});

test("a target's variable, the profile variable and a new RC1_ variable are decided in full", () => {
  const r = rig();
  try {
    stamped(r);
    const token = r.run([], { ...ENV, TOKEN: 'another' });
    assert.equal(token.code, 0, token.stderr);
    assert.doesNotMatch(token.stderr, FAST);
    assert.deepEqual(r.runs(), ['cat'], 'cat reruns; its output is the same, so tree stays up to date');
    stamped(r);
    for (const env of [
      { ...ENV, RUN_MODE: 'default' },
      { ...ENV, RC1_HISTORY_KEEP: '50' },
    ]) {
      const x = r.run([], env);
      assert.equal(x.code, 0, x.stderr);
      assert.doesNotMatch(x.stderr, FAST);
      assert.match(x.stderr, /rc1 fastpath: variable (RUN_MODE|RC1_HISTORY_KEEP)/);
    }
  } finally {
    r.cleanup();
  }
});

test('another command line, another target built, a held lock and a swapped folder are decided in full', () => {
  const r = rig();
  try {
    stamped(r);
    const verbose = r.run(['-v'], ENV);
    assert.match(verbose.stderr, /rc1 fastpath: another command line/);
    assert.match(verbose.stdout, /up-to-date|up to date/);
    // Building another target takes the lock, which drops the stamp: the next plain build decides in full.
    stamped(r);
    const other = r.run(['other'], ENV);
    assert.equal(other.code, 0, other.stderr);
    assert.deepEqual(r.runs(), ['other']);
    assert.ok(!r.exists('.rc1/uptodate.json'));
    const again = r.run([], ENV);
    assert.match(again.stderr, /rc1 fastpath: no stamp|^$/);
    assert.doesNotMatch(again.stderr, FAST);
    // The lock held by a live process (this one): the fast path steps aside and the full build says who holds it.
    stamped(r);
    const lock = new WorkspaceLock(path.join(r.dir, '.rc1/lock'));
    lock.acquire('a test holding the lock');
    try {
      const locked = r.run([], ENV);
      assert.doesNotMatch(locked.stderr, FAST);
      assert.equal(locked.code, 64, locked.stderr);
      assert.match(locked.stderr, /another build holds this workspace/);
    } finally {
      lock.release();
    }
    const free = r.run([], ENV);
    assert.match(free.stderr, FAST, 'once the lock is free again, nothing having changed, the stamp answers');
    // A folder of outputs swapped for a symlink to the same files elsewhere: refused, as before.
    stamped(r);
    const away = `${r.dir}-away`;
    fs.renameSync(path.join(r.dir, 'out'), away);
    fs.symlinkSync(away, path.join(r.dir, 'out'));
    try {
      const swapped = r.run([], ENV);
      assert.doesNotMatch(swapped.stderr, FAST);
      assert.notEqual(swapped.code, 0, 'an output reached through a link out of the workspace is refused');
    } finally {
      fs.rmSync(path.join(r.dir, 'out'));
      fs.renameSync(away, path.join(r.dir, 'out'));
    }
  } finally {
    r.cleanup();
  }
});

test('options that change what a no-op prints never answer from the stamp', () => {
  const r = rig();
  try {
    stamped(r);
    for (const args of [['--json'], ['--explain'], ['-n']]) {
      // Each is decided in full, and leaves no stamp for itself.
      for (let i = 0; i < 2; i++) {
        const x = r.run(args, ENV);
        assert.equal(x.code, 0, x.stderr);
        assert.doesNotMatch(x.stderr, FAST);
      }
    }
    const json = r.run(['--json'], ENV);
    assert.ok(json.events.some((e) => e.event === 'end'));
  } finally {
    r.cleanup();
  }
});

test('the manifest or a sidecar removed is rewritten by the full build', () => {
  const r = rig();
  try {
    stamped(r);
    const sidecars = path.join(r.dir, 'reports/build/sha256');
    fs.rmSync(sidecars, { recursive: true });
    const x = r.run([], ENV);
    assert.doesNotMatch(x.stderr, FAST);
    assert.ok(fs.existsSync(sidecars), 'the sidecars are back');
    stamped(r);
    fs.rmSync(path.join(r.dir, 'reports/build/manifest.json'));
    const y = r.run([], ENV);
    assert.doesNotMatch(y.stderr, FAST);
    assert.ok(r.exists('reports/build/manifest.json'));
  } finally {
    r.cleanup();
  }
});

test('a served no-op leaves the stamp too, and the stamp answers before the server is asked', () => {
  const r = rig();
  const served = (): number => {
    const st = r.run(['server', 'status']);
    const m = /commands served: (\d+)/.exec(st.stdout);
    assert.ok(m, st.stdout + st.stderr);
    return Number(m[1]);
  };
  try {
    const first = r.run([], ENV);
    assert.equal(first.code, 0, first.stderr);
    r.runs();
    const start = r.run(['server', 'start'], ENV);
    assert.equal(start.code, 0, start.stdout + start.stderr);
    settle();
    const before = served();
    const noop = r.run([], ENV);
    assert.equal(noop.code, 0, noop.stderr);
    assert.equal(served(), before + 1, 'the no-op was served');
    const fast = r.run([], ENV);
    assert.match(fast.stderr, FAST);
    assert.equal(served(), before + 1, 'the stamp answered; the server was not asked');
    // A change: the stamp steps aside, the server builds it.
    r.write('src/a.txt', 'ALPHA\n');
    const after = r.run([], ENV);
    assert.equal(after.code, 0, after.stderr);
    assert.doesNotMatch(after.stderr, FAST);
    assert.equal(served(), before + 2);
    assert.deepEqual(r.runs(), ['cat', 'tree']);
  } finally {
    r.run(['server', 'stop']);
    r.cleanup();
  }
});
