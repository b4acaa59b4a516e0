// Correct rebuilds through the real CLI:
//   src/a.txt --> a --> b --> g (gate) --> after_gate
//   src/c.txt --> c
//   src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { standardRig, type TestRig } from '../helpers/rig.ts';

const ALL = ['a', 'after_gate', 'after_sq', 'b', 'c', 'g', 'sq'];

function built(): TestRig {
  const rig = standardRig();
  const r = rig.run([]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(rig.runs(), ALL);
  return rig;
}

test('a second build runs nothing', () => {
  const rig = built();
  try {
    const r = rig.run(['--json']);
    assert.equal(r.code, 0);
    assert.deepEqual(rig.runs(), []);
    const skips = r.events
      .filter((e) => e.event === 'skip')
      .map((e) => e.target)
      .sort();
    assert.deepEqual(skips, ALL);
    assert.ok(r.events.every((e) => e.event !== 'skip' || e.reason === 'up-to-date'));
  } finally {
    rig.cleanup();
  }
});

test('touching a file without changing it runs nothing and re-reads only that file', () => {
  const rig = built();
  try {
    // Files written less than the racy window (100 ms) before a stat are re-hashed once more,
    // by design; wait it out, then settle them.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    rig.run([]);
    rig.touch('src/a.txt');
    const r = rig.run(['--json']);
    assert.deepEqual(rig.runs(), []);
    const end = r.events.find((e) => e.event === 'end') as { stats: { hashedPaths: string[] } };
    assert.deepEqual(end.stats.hashedPaths, ['src/a.txt']);
  } finally {
    rig.cleanup();
  }
});

test('a changed input byte reruns exactly the target and its true dependents, and --explain names it', () => {
  const rig = built();
  try {
    rig.write('src/a.txt', 'hellO\n');
    const r = rig.run(['--explain']);
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(rig.runs(), ['a', 'after_gate', 'b', 'g']);
    assert.match(r.stdout, /rc1 explain: a: input src\/a\.txt changed: [0-9a-f]{12} → [0-9a-f]{12}/);
    assert.match(r.stdout, /rc1 explain: b: src\/a\.txt changed \(via a\)/);
    assert.match(r.stdout, /rc1 explain: c: up-to-date/);
    // -v: the field-by-field detail, every changed input with its hashes
    rig.write('src/a.txt', 'hello\n');
    const v = rig.run(['--explain', '-v']);
    assert.match(v.stdout, /rc1 explain: b: input out\/a\.txt changed: [0-9a-f]{12} → [0-9a-f]{12}/);
  } finally {
    rig.cleanup();
  }
});

test('a changed declared param reruns its users; an unrelated config key changes nothing', () => {
  const rig = built();
  try {
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 3\nunrelated: 2\n');
    rig.run([]);
    assert.deepEqual(rig.runs(), []);
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 4\nunrelated: 2\n');
    const r = rig.run(['--explain']);
    // after_gate reads g's report, whose threshold field changed
    assert.deepEqual(rig.runs(), ['after_gate', 'g']);
    assert.match(r.stdout, /rc1 explain: g: param gate\.min changed: 3 → 4/);
  } finally {
    rig.cleanup();
  }
});

test('reformatting the YAML (key order, comments, spacing) without changing values rebuilds nothing', () => {
  const rig = built();
  try {
    rig.write('configs/default.yaml', '# reordered\nunrelated: 1\ngate: { min: 3 }\ncopy:\n    suffix:   "!"\n');
    const r = rig.run(['--json']);
    assert.equal(r.code, 0);
    assert.deepEqual(rig.runs(), []);
  } finally {
    rig.cleanup();
  }
});

test('a changed rule source reruns the targets of that rule and what depends on them', () => {
  const rig = built();
  try {
    rig.write('rules/squeeze.ts', rig.read('rules/squeeze.ts').replace("text + '\\n'", "text + '\\n\\n'"));
    const r = rig.run(['--explain']);
    assert.deepEqual(rig.runs(), ['after_sq', 'sq']);
    assert.match(r.stdout, /rc1 explain: sq: code rules\/squeeze\.ts changed/);
  } finally {
    rig.cleanup();
  }
});

test('a change in a local module that a rule imports reruns that rule', () => {
  const rig = standardRig();
  try {
    rig.write('rules/lib/suffix.ts', "export const extra = '';\n");
    rig.write(
      'rules/squeeze.ts',
      rig
        .read('rules/squeeze.ts')
        .replace(
          "import * as fs from 'node:fs';",
          "import * as fs from 'node:fs';\nimport { extra } from './lib/suffix.ts';",
        )
        .replace("text + '\\n'", "text + extra + '\\n'"),
    );
    assert.equal(rig.run([]).code, 0);
    rig.runs();
    rig.write('rules/lib/suffix.ts', "export const extra = '?';\n");
    const r = rig.run(['--explain']);
    assert.deepEqual(rig.runs(), ['after_sq', 'sq']);
    assert.match(r.stdout, /rc1 explain: sq: code rules\/lib\/suffix\.ts changed/);
  } finally {
    rig.cleanup();
  }
});

test('early cutoff: a rebuilt target whose output is unchanged does not rerun its dependents', () => {
  const rig = built();
  try {
    rig.write('src/w.txt', 'some words   \n\n');
    const r = rig.run(['--explain']);
    assert.deepEqual(rig.runs(), ['sq']);
    assert.match(r.stdout, /rc1 explain: after_sq: up-to-date/);
  } finally {
    rig.cleanup();
  }
});

test('edit, build, revert: the reverted build restores outputs from the cache', () => {
  const rig = built();
  try {
    const before = rig.read('out/a.txt');
    rig.write('src/a.txt', 'changed\n');
    rig.run([]);
    rig.runs();
    rig.write('src/a.txt', 'hello\n');
    const st = rig.run(['status']);
    assert.match(st.stdout, /^a\s+stale \(restorable from cache: input src\/a\.txt changed/m);
    const r = rig.run(['--explain']);
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(rig.runs(), []);
    assert.match(r.stdout, /restore  a from cache/);
    assert.match(r.stdout, /restored a /);
    assert.equal(rig.read('out/a.txt'), before);
    assert.match(rig.run(['status']).stdout, /^a\s+up-to-date \(restored from cache\)/m);
  } finally {
    rig.cleanup();
  }
});

test('a deleted or modified output is rebuilt (or restored) and said so', () => {
  const rig = built();
  try {
    rig.write('out/c.txt', 'tampered');
    const st = rig.run(['status']);
    assert.match(st.stdout, /^c\s+stale \(restorable from cache: output out\/c\.txt was modified/m);
    const r = rig.run(['c', '--explain']);
    assert.equal(r.code, 0);
    assert.equal(rig.read('out/c.txt'), 'cee\n!');
    assert.match(r.stdout, /rc1 explain: c: output out\/c\.txt was modified/);
  } finally {
    rig.cleanup();
  }
});

test('--force reruns a named target even when it is up to date', () => {
  const rig = built();
  try {
    const r = rig.run(['--force', 'c', '--explain']);
    assert.equal(r.code, 0);
    assert.deepEqual(rig.runs(), ['c']);
    assert.match(r.stdout, /rc1 explain: c: forced \(--force\)/);
  } finally {
    rig.cleanup();
  }
});

test('--dry-run prints the plan with reasons and runs nothing', () => {
  const rig = built();
  try {
    rig.write('src/a.txt', 'x\n');
    const r = rig.run(['-n']);
    assert.equal(r.code, 0);
    assert.deepEqual(rig.runs(), []);
    assert.match(r.stdout, /would run a \(input src\/a\.txt changed/);
    assert.match(r.stdout, /would maybe run b \(after a/);
  } finally {
    rig.cleanup();
  }
});

test('a rule that throws exits 1, names the target, and keeps the outputs already built', () => {
  const rig = built();
  try {
    const before = rig.read('out/sq.txt');
    rig.write(
      'rules/squeeze.ts',
      rig.read('rules/squeeze.ts').replace('run(ctx) {', "run(ctx) { throw new Error('boom in squeeze');"),
    );
    const r = rig.run([]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAILED   sq: Error: boom in squeeze/);
    assert.match(r.stdout, /rules\/squeeze\.ts:\d+/, 'the stack points into the rule source');
    assert.match(r.stdout, /blocked  after_sq \(needs sq\)/);
    assert.equal(rig.read('out/sq.txt'), before);
    assert.match(rig.run(['status']).stdout, /^sq\s+failed/m);
  } finally {
    rig.cleanup();
  }
});

test('a rule that writes no declared output or an undeclared file fails with a clear message', () => {
  const rig = built();
  try {
    rig.write(
      'rules/squeeze.ts',
      rig
        .read('rules/squeeze.ts')
        .replace("fs.writeFileSync(ctx.output('out/' + ctx.target + '.txt'), text + '\\n');", 'void text;'),
    );
    let r = rig.run(['sq']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /sq: the rule did not write its declared output out\/sq\.txt/);
    rig.write(
      'rules/squeeze.ts',
      rig
        .read('rules/squeeze.ts')
        .replace(
          'void text;',
          "ctx.output('out/sq.txt'); fs.writeFileSync(ctx.output('out/sq.txt'), text); fs.writeFileSync(ctx.output('out/sq.txt') + '.extra', 'x');",
        ),
    );
    r = rig.run(['sq']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /wrote undeclared files: out\/sq\.txt\.extra/);
  } finally {
    rig.cleanup();
  }
});
