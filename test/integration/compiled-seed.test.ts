// The compiled code's copy in node_modules/.cache (packages/engine/src/config/compiled-seed.ts):
// a state dir made anew (rm -rf .rc1) starts from it instead of compiling rc1.build.ts and the
// rules again, and an edited source is still compiled again, never served from the copy.
//   src/a.txt --> a --> out/a.txt --> b --> out/b.txt
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compiledSeedDir } from '../../packages/engine/src/config/compiled-seed.ts';
import { type RunResult, TestRig, chainCopyRule, chainPipeline } from '../helpers/rig.ts';

const rule = chainCopyRule;
const pipeline = chainPipeline;

function workspace(withNodeModules = true): TestRig {
  const rig = new TestRig({
    'rc1.build.ts': pipeline(false),
    'rules/copy.ts': rule(''),
    'src/a.txt': 'one\n',
    'src/c.txt': 'see\n',
  });
  if (withNodeModules) fs.mkdirSync(path.join(rig.dir, 'node_modules'));
  return rig;
}

/** Builds with --json; the end event's count of modules compiled. */
function build(rig: TestRig, env: Record<string, string> = {}): { r: RunResult; compiles: number } {
  const r = rig.run(['--json'], env);
  assert.equal(r.code, 0, r.stderr);
  const end = r.events.find((e) => e.event === 'end') as { stats?: { compiles?: number } } | undefined;
  return { r, compiles: end?.stats?.compiles ?? -1 };
}

function fromScratch(rig: TestRig): void {
  for (const p of ['.rc1', 'out', 'reports']) fs.rmSync(path.join(rig.dir, p), { recursive: true, force: true });
}

test('a state dir made anew starts from the compiled code kept in node_modules/.cache: nothing is compiled, the same targets run and write the same bytes', (t) => {
  const rig = workspace();
  t.after(() => rig.cleanup());
  const first = build(rig);
  assert.ok(first.compiles >= 2, `the first build compiles rc1.build.ts and the rule (${first.compiles})`);
  assert.deepEqual(rig.runs(), ['a', 'b']);
  const seed = compiledSeedDir(rig.dir)!;
  assert.equal(seed, path.join(fs.realpathSync(rig.dir), 'node_modules', '.cache', 'rc1-build', path.basename(seed)));
  assert.deepEqual(fs.readdirSync(seed).sort(), fs.readdirSync(path.join(rig.dir, '.rc1', 'compiled')).sort());
  const bytes = rig.read('out/b.txt');

  fromScratch(rig);
  const second = build(rig);
  assert.equal(second.compiles, 0, 'nothing compiled: the seed had it all');
  assert.deepEqual(rig.runs(), ['a', 'b'], 'every target ran again: .rc1 held the records, not the seed');
  assert.equal(rig.read('out/b.txt'), bytes);
  assert.equal(build(rig).compiles, 0);
  assert.deepEqual(rig.runs(), [], 'and the build after it is a no-op');
});

test('after rm -rf .rc1, an edited rule or rc1.build.ts is compiled again and used, never the copy of the old one', (t) => {
  const rig = workspace();
  t.after(() => rig.cleanup());
  build(rig);
  rig.runs();

  rig.write('rules/copy.ts', rule('edited '));
  fromScratch(rig);
  const afterRule = build(rig);
  assert.ok(afterRule.compiles >= 1, 'the edited rule is compiled');
  assert.deepEqual(rig.runs(), ['a', 'b']);
  assert.equal(rig.read('out/b.txt'), 'one\nedited a\nedited b\n');

  rig.write('rc1.build.ts', pipeline(true));
  fromScratch(rig);
  const afterPipeline = build(rig);
  assert.ok(afterPipeline.compiles >= 1, 'the edited rc1.build.ts is compiled');
  assert.deepEqual(rig.runs(), ['a', 'b', 'c'], 'the target added to rc1.build.ts is built');

  // The seed now holds the new code: the next state dir made anew compiles nothing.
  fromScratch(rig);
  assert.equal(build(rig).compiles, 0);
  assert.deepEqual(rig.runs(), ['a', 'b', 'c']);
});

test('a seed whose files are damaged or missing costs a compile, never a wrong build', (t) => {
  const rig = workspace();
  t.after(() => rig.cleanup());
  build(rig);
  rig.runs();
  const seed = compiledSeedDir(rig.dir)!;
  // Its index cut short, and the rule's compiled module gone.
  const index = fs.readdirSync(seed).find((n) => n.startsWith('closures'))!;
  fs.writeFileSync(path.join(seed, `${index}.new`), fs.readFileSync(path.join(seed, index)).subarray(0, 20));
  fs.renameSync(path.join(seed, `${index}.new`), path.join(seed, index));
  for (const n of fs.readdirSync(seed)) if (n.startsWith('rules_copy')) fs.rmSync(path.join(seed, n));
  fromScratch(rig);
  const again = build(rig);
  assert.ok(again.compiles >= 1);
  assert.deepEqual(rig.runs(), ['a', 'b']);
  assert.equal(rig.read('out/b.txt'), 'one\na\nb\n');
});

test('without a node_modules at or above the workspace, or with RC1_COMPILE_SEED=off, nothing is kept outside .rc1', (t) => {
  const bare = workspace(false);
  t.after(() => bare.cleanup());
  assert.equal(compiledSeedDir(bare.dir), null);
  build(bare);
  fromScratch(bare);
  assert.ok(build(bare).compiles >= 2, 'no seed: a state dir made anew compiles again');

  const off = workspace();
  t.after(() => off.cleanup());
  build(off, { RC1_COMPILE_SEED: 'off' });
  assert.deepEqual(fs.readdirSync(path.join(off.dir, 'node_modules')), [], 'node_modules/.cache not made');
});

test('clean names the seed as kept, and clean --cache removes it', (t) => {
  const rig = workspace();
  t.after(() => rig.cleanup());
  build(rig);
  const seed = compiledSeedDir(rig.dir)!;
  assert.equal(fs.readFileSync(`${seed}.root`, 'utf8'), fs.realpathSync(rig.dir), 'beside it: the workspace it is for');
  const rel = path.relative(fs.realpathSync(rig.dir), seed);
  const kept = rig.run(['clean']);
  assert.equal(kept.code, 0, kept.stderr);
  assert.match(kept.stdout, new RegExp(`kept +${rel.replace(/[.]/g, '\\.')} \\(compiled code kept outside \\.rc1`));
  assert.ok(fs.existsSync(seed));
  const removed = rig.run(['clean', '--cache']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /removed .*node_modules\/\.cache\/rc1-build\/compiled-/);
  assert.equal(fs.existsSync(seed), false);
  assert.equal(fs.existsSync(`${seed}.root`), false);
});
