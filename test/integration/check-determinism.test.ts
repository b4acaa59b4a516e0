// `rc1-build check-determinism TARGET…` through the real CLI, in a temp workspace:
//   data/in.txt --> stable (reverses the lines) --> stamped (a directory: a copy, and a file with the time)
// A target that writes the time is flagged with the first differing file, byte, line, column and
// both lines; its verdict in .rc1/determinism.json makes mayUpload (the remote cache's upload
// check) refuse it, until a check of the fixed rule passes. A deterministic target passes. The
// check leaves the workspace's outputs and records alone and gives each run a fresh state dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { firstByteDifference, mayUpload, readVerdicts } from '../../packages/engine/src/cache/determinism.ts';
import { TestRig } from '../helpers/rig.ts';

const STABLE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'stable', version: 1, run(ctx) {
  const text = fs.readFileSync(ctx.inputs('src')[0], 'utf8');
  fs.writeFileSync(ctx.output('out/stable.txt'), text.split('\\n').reverse().join('\\n'));
} });
`;

const STAMPED = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'stamped', version: 1, async run(ctx) {
  // A rule that remembers a run in its state dir would hide the difference if the runs shared one.
  const seen = path.join(ctx.stateDir, 'seen');
  const before = fs.existsSync(seen);
  fs.writeFileSync(seen, 'x');
  const text = fs.readFileSync(ctx.inputs('src')[0], 'utf8');
  await new Promise((r) => setTimeout(r, 5));
  const dir = ctx.output('out/stamped/');
  fs.writeFileSync(path.join(dir, 'a.txt'), text);
  fs.writeFileSync(path.join(dir, 'b.txt'), 'state seen before: ' + before + '\\nbuilt at ' + STAMP + '\\n');
} });
`;

function rig(stamp: string): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({ targets: [
  defineTarget({ name: 'stable', rule: 'rules/stable.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/stable.txt'] }),
  defineTarget({ name: 'stamped', rule: 'rules/stamped.ts', inputs: { src: target('stable') }, outputs: ['out/stamped/'] }),
] });
`,
    'rules/stable.ts': STABLE,
    'rules/stamped.ts': STAMPED.replace('STAMP', stamp),
    'data/in.txt': 'alpha\nbeta\n',
  });
}

test('check-determinism flags a target that writes the time: first differing file, byte, line, column and both lines; mayUpload refuses it until a check of the fixed rule passes', () => {
  const r = rig('new Date().toISOString()');
  try {
    const res = r.run(['check-determinism', 'stamped']);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(res.stdout, /DIFFERS stamped: its output differs between two runs on the same inputs/);
    const m =
      /out\/stamped\/b\.txt: first difference at byte (\d+) \(line 2, column (\d+)\)\n\s+run 1: "built at (\S+)"\n\s+run 2: "built at (\S+)"/.exec(
        res.stdout,
      );
    assert.ok(m, res.stdout);
    const [, byte, column, t1, t2] = m;
    assert.notEqual(t1, t2);
    const firstDiff = [...t1!].findIndex((c, i) => c !== t2![i]);
    assert.equal(Number(column), 'built at '.length + firstDiff + 1);
    assert.equal(Number(byte), 'state seen before: false\n'.length + 'built at '.length + firstDiff);
    assert.match(
      res.stdout,
      /both runs are kept in \.rc1\/determinism\/stamped\/run1 and run2; stamped will not be uploaded to a remote cache/,
    );
    assert.ok(fs.existsSync(path.join(r.dir, '.rc1/determinism/stamped/run2/out')));

    assert.equal(r.exists('out/stamped'), false, 'the check writes no output into the workspace');
    assert.equal(r.read('out/stable.txt'), '\nbeta\nalpha', 'what stamped needs was built the ordinary way');
    const v = readVerdicts(path.join(r.dir, '.rc1')).stamped!;
    assert.equal(v.deterministic, false);
    assert.equal(v.differences![0]!.file, 'out/stamped/b.txt');
    const up = mayUpload(path.join(r.dir, '.rc1'), 'stamped');
    assert.equal(up.upload, false);
    assert.match(
      up.reason,
      /not uploaded: check-determinism found two builds differ in out\/stamped\/b\.txt at byte \d+/,
    );
    assert.equal(mayUpload(path.join(r.dir, '.rc1'), 'stamped', { allowNonDeterministic: true }).upload, true);

    r.write('rules/stamped.ts', STAMPED.replace('STAMP', "'(no time)'"));
    const fixed = r.run(['check-determinism', 'stamped']);
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
    assert.match(fixed.stdout, /ok {6}stamped: 1 output identical in both runs/);
    assert.equal(mayUpload(path.join(r.dir, '.rc1'), 'stamped').upload, true);
    assert.equal(
      fs.existsSync(path.join(r.dir, '.rc1/determinism/stamped')),
      false,
      'a passing check leaves no scratch runs',
    );
  } finally {
    r.cleanup();
  }
});

test('check-determinism passes a deterministic target (exit 0) and records it; an unchecked target may be uploaded', () => {
  const r = rig('new Date().toISOString()');
  try {
    assert.equal(mayUpload(path.join(r.dir, '.rc1'), 'stable').reason, 'never checked by check-determinism');
    const res = r.run(['check-determinism', 'stable', '--json']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const ev = res.events.find((e) => e.event === 'determinism') as {
      target: string;
      deterministic: boolean;
      outputs: { path: string; sha256: string }[];
    };
    assert.equal(ev.target, 'stable');
    assert.equal(ev.deterministic, true);
    assert.equal(ev.outputs[0]!.path, 'out/stable.txt');
    assert.equal(readVerdicts(path.join(r.dir, '.rc1')).stable!.deterministic, true);
    assert.equal(r.exists('out/stable.txt'), false, 'a target without dependencies is not built into the workspace');
    assert.equal(r.run(['check-determinism']).code, 64, 'no target named: usage error');
  } finally {
    r.cleanup();
  }
});

test('the first difference of two files: byte, line and column in text; hex around it in binary; a file that is a prefix of the other', () => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'rc1-det-'));
  try {
    const w = (n: string, c: string | Buffer): string => {
      const p = path.join(dir, n);
      fs.writeFileSync(p, c);
      return p;
    };
    assert.deepEqual(firstByteDifference(w('a', 'one\ntwo\nthree\n'), w('b', 'one\ntwo\nthreE\n')), {
      byte: 12,
      line: 3,
      column: 5,
      run1: 'three',
      run2: 'threE',
    });
    assert.equal(firstByteDifference(w('c', 'same'), w('d', 'same')), null);
    assert.deepEqual(firstByteDifference(w('e', 'abc\n'), w('f', 'abc\nmore\n')), {
      byte: 4,
      line: 2,
      column: 1,
      run1: '(ends here)',
      run2: 'more',
    });
    const bin = firstByteDifference(w('g', Buffer.from([0, 1, 2, 3, 4])), w('h', Buffer.from([0, 1, 2, 9, 4])))!;
    assert.equal(bin.byte, 3);
    assert.equal(bin.line, undefined);
    assert.equal(bin.run1, '@0: 00 01 02 03 04');
    assert.equal(bin.run2, '@0: 00 01 02 09 04');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
