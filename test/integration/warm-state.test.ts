// One process running command after command (as the resident server and `watch` do) keeps the
// parsed trace, stat cache and resolved pipeline while their files are unchanged
// (packages/engine/src/state/parsed-state.ts). Each command must still decide exactly as a fresh
// process would: after an edit of a source, of an output, of rc1.build.ts, and after no-ops.
//   src/a.txt --> a --> out/a.txt --> b --> out/b.txt        (added later: src/c.txt --> c --> out/c.txt)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { REPO, TestRig, chainCopyRule, chainPipeline } from '../helpers/rig.ts';

const COPY_RULE = chainCopyRule();
const pipeline = chainPipeline;

/** A process that runs main() once per line it reads, answering with the exit code. */
const CHILD = `
const { main } = await import(process.argv[2]);
const { createInterface } = await import('node:readline');
for await (const line of createInterface({ input: process.stdin })) {
  let said = '';
  const code = await main(JSON.parse(line), { out: (s) => { said += s; }, err: (s) => process.stderr.write(s), tty: false });
  const end = said.split('\\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((e) => e.event === 'end');
  process.stdout.write(JSON.stringify({ code, counts: end?.counts ?? null }) + '\\n');
}
`;

test('command after command in one process: each decides as a fresh process would, with the state kept between them', async (t) => {
  const rig = new TestRig({
    'rc1.build.ts': pipeline(false),
    'rules/copy.ts': COPY_RULE,
    'src/a.txt': 'one\n',
    'src/c.txt': 'see\n',
  });
  t.after(() => rig.cleanup());
  // A file, not -e: rule workers inherit the process's execArgv.
  const script = path.join(rig.dir, '..', `${path.basename(rig.dir)}-child.mjs`);
  fs.writeFileSync(script, CHILD);
  t.after(() => fs.rmSync(script, { force: true }));
  const child = spawn(process.execPath, [script, pathToFileURL(path.join(REPO, 'packages/engine/dist/cli.js')).href], {
    cwd: rig.dir,
    env: { ...process.env, RC1_TEST_COUNTER: rig.counter, RC1_NO_SERVER: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill());
  const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  /** Builds; the rules that ran, and how many targets were up to date / restored. */
  const build = async (): Promise<string[]> => {
    await sleep(250); // past the state files' timestamp tick: from here on they can be kept
    child.stdin!.write(`${JSON.stringify(['-j', '2', '--json'])}\n`);
    const { value } = await answers.next();
    const r = JSON.parse(value as string) as { code: number; counts: { upToDate: number; restored: number } };
    assert.equal(r.code, 0);
    last = r.counts;
    return rig.runs();
  };
  let last = { upToDate: 0, restored: 0 };
  assert.deepEqual(await build(), ['a', 'b']);
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await build(), [], 'no-op');
    assert.deepEqual(last, { ...last, upToDate: 2, restored: 0 });
  }
  rig.write('src/a.txt', 'one two\n');
  assert.deepEqual(await build(), ['a', 'b'], 'a source edited');
  assert.equal(rig.read('out/b.txt'), 'one two\na\nb\n');
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(await build(), [], 'no-op after the edit');
    assert.deepEqual(last, { ...last, upToDate: 2, restored: 0 }, 'the records of the last build, not older ones');
  }
  // An output edited by hand, same size: put back from the cache, no rule runs.
  fs.writeFileSync(path.join(rig.dir, 'out/b.txt'), 'ONE TWO\nA\nB\n');
  assert.deepEqual(await build(), []);
  assert.deepEqual(last, { ...last, upToDate: 1, restored: 1 });
  assert.equal(rig.read('out/b.txt'), 'one two\na\nb\n');
  assert.deepEqual(await build(), [], 'no-op after the restore');
  assert.deepEqual(last, { ...last, upToDate: 2, restored: 0 });
  // The source back as it was: a and b are restored from the cache, nothing runs.
  rig.write('src/a.txt', 'one\n');
  assert.deepEqual(await build(), []);
  assert.deepEqual(last, { ...last, upToDate: 0, restored: 2 });
  assert.equal(rig.read('out/b.txt'), 'one\na\nb\n');
  // A new target in rc1.build.ts: only it runs.
  rig.write('rc1.build.ts', pipeline(true));
  assert.deepEqual(await build(), ['c']);
  assert.deepEqual(await build(), [], 'no-op with the new pipeline');
  assert.deepEqual(last, { ...last, upToDate: 3, restored: 0 });
  rig.write('src/c.txt', 'sea\n'); // same size
  assert.deepEqual(await build(), ['c']);
  assert.equal(rig.read('out/c.txt'), 'sea\nc\n');
  child.stdin!.end();
});

test('a build starts with an empty .rc1/tmp: what a killed build left there is removed, a symbolic link there is replaced by a dir, an empty one is kept', async (t) => {
  const rig = new TestRig({ 'rc1.build.ts': pipeline(false), 'rules/copy.ts': COPY_RULE, 'src/a.txt': 'one\n' });
  const outside = fs.mkdtempSync(path.join(path.dirname(rig.dir), 'rc1-outside-'));
  t.after(() => {
    rig.cleanup();
    fs.rmSync(outside, { recursive: true, force: true });
  });
  assert.equal(rig.run(['-j', '2']).code, 0);
  const tmp = path.join(rig.dir, '.rc1', 'tmp');
  const ino = fs.statSync(tmp).ino;
  assert.equal(rig.run(['-j', '2']).code, 0);
  assert.equal(fs.statSync(tmp).ino, ino, 'the empty dir is kept');
  fs.mkdirSync(path.join(tmp, 'left', 'deep'), { recursive: true });
  fs.writeFileSync(path.join(tmp, '3-1-0-a.txt'), 'half');
  assert.equal(rig.run(['-j', '2']).code, 0);
  assert.deepEqual(fs.readdirSync(tmp), []);
  fs.rmSync(tmp, { recursive: true });
  fs.symlinkSync(outside, tmp); // to an empty dir elsewhere: not ours to write temp outputs into
  rig.write('src/a.txt', 'two\n'); // a build that writes temp outputs
  assert.equal(rig.run(['-j', '2']).code, 0);
  assert.ok(fs.lstatSync(tmp).isDirectory(), 'a dir of its own, not the link');
  assert.deepEqual(fs.readdirSync(outside), []);
});
