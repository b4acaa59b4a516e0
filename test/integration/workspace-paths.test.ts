// Inputs and outputs stay inside the workspace (after following symlinks) unless a declared
// external root allows them; the engine's, git's and the rules' own files are never outputs; the
// manifest stays inside; and neither a build nor `clean` writes or deletes through a symlink that
// leads out. Each refusal is a usage error (exit 64) at the rc1.build.ts line.
//   src/a.txt (or an outside file) --> t --> out/t.txt
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COPY_RULE, TestRig } from '../helpers/rig.ts';

function rig(target: string, pipelineExtra = ''): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';\nexport default definePipeline({${pipelineExtra}\n  targets: [\n    ${target},\n  ],\n});\n`,
    'rules/copy.ts': COPY_RULE,
    'configs/default.yaml': 'copy:\n  suffix: "!"\n',
    'src/a.txt': 'a\n',
  });
}
const T = (inputs: string, outputs = "['out/t.txt']"): string =>
  `defineTarget({ name: 't', rule: 'rules/copy.ts', inputs: { src: ${inputs} }, outputs: ${outputs}, params: ['copy.suffix'] })`;

function outsideDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-outside-'));
  fs.writeFileSync(path.join(d, 'a.txt'), 'outside\n');
  return d;
}

test('inputs outside the workspace (../, absolute, through a symlink) are usage errors at the declaration line', () => {
  const out = outsideDir();
  for (const [input, expect] of [
    ["'../x.txt'", /target t: input src: \.\.\/x\.txt is outside the workspace/],
    [`'${out}/a.txt'`, /is outside the workspace/],
    ["'linked/a.txt'", /target t: input linked\/a\.txt resolves outside the workspace/],
  ] as const) {
    const r0 = rig(T(input));
    try {
      fs.symlinkSync(out, path.join(r0.dir, 'linked'));
      const r = r0.run([]);
      assert.equal(r.code, 64, input + r.stdout + r.stderr);
      assert.match(r.stderr, expect);
      assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
      assert.match(r.stderr, /externalRoots/);
      assert.ok(!r0.exists('out'));
    } finally {
      r0.cleanup();
    }
  }
  fs.rmSync(out, { recursive: true, force: true });
});

test('a declared external root allows inputs there, named directly or through a symlink', () => {
  const out = outsideDir();
  const r0 = rig(T(`['${out}/a.txt', 'linked/a.txt']`), `\n  externalRoots: ['${out}'],`);
  try {
    fs.symlinkSync(out, path.join(r0.dir, 'linked'));
    const r = r0.run([]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r0.read('out/t.txt'), 'outside\noutside\n!');
  } finally {
    r0.cleanup();
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('.git/, .rc1/, rc1.build.ts, rules/ and a rule source are never outputs', () => {
  for (const o of [
    '.git/hooks/pre-commit',
    '.rc1/trace.log',
    'rc1.build.ts',
    'rules/other.ts',
    'rules/copy.ts',
    'node_modules/x/index.js',
  ]) {
    const r0 = rig(T("'src/a.txt'", `['${o}']`));
    try {
      const r = r0.run([]);
      assert.equal(r.code, 64, o);
      assert.match(r.stderr, new RegExp(`target t: output ${o.replace(/\./g, '\\.')} (is|lies under)`), r.stderr);
      assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
    } finally {
      r0.cleanup();
    }
  }
});

test('an output that is a local module a rule imports is a usage error before anything runs', () => {
  const r0 = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [
  defineTarget({ name: 'uses', rule: 'rules/uses.ts', outputs: ['out/u.txt'] }),
  defineTarget({ name: 'clobber', rule: 'rules/uses.ts', outputs: ['lib/word.ts'] }),
] });
`,
    'rules/uses.ts': `import { defineRule } from 'rc1-build';\nimport * as fs from 'node:fs';\nimport { WORD } from '../lib/word.ts';\nexport default defineRule({ name: 'uses', version: 1, run(ctx) { for (const o of ctx.outputs) fs.writeFileSync(ctx.output(o), WORD); } });\n`,
    'lib/word.ts': `export const WORD = 'word';\n`,
  });
  try {
    const r = r0.run(['clobber']);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /target clobber: output lib\/word\.ts is the source file lib\/word\.ts of rule rules\/uses\.ts/,
    );
    assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
    assert.equal(r0.read('lib/word.ts'), `export const WORD = 'word';\n`);
    assert.equal(r0.run(['uses']).code, 0);
  } finally {
    r0.cleanup();
  }
});

test('a manifestDir outside the workspace is a usage error', () => {
  const r0 = rig(T("'src/a.txt'"), "\n  manifestDir: '../manifests',");
  try {
    const r = r0.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /manifestDir \.\.\/manifests is outside the workspace/);
  } finally {
    r0.cleanup();
  }
});

test('a manifestDir that is itself a symlink leading out is a usage error, and nothing is written there', () => {
  const out = outsideDir();
  const r0 = rig(T("'src/a.txt'"), "\n  manifestDir: 'reports/rc1',");
  try {
    fs.mkdirSync(path.join(r0.dir, 'reports'));
    fs.symlinkSync(out, path.join(r0.dir, 'reports/rc1'));
    const r = r0.run([]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(r.stderr, /manifestDir reports\/rc1 resolves outside the workspace/);
    assert.deepEqual(fs.readdirSync(out), ['a.txt']);
  } finally {
    r0.cleanup();
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('a glob input matching a file or folder that is a symlink leading out is a usage error naming the file and the line', () => {
  const out = outsideDir();
  fs.mkdirSync(path.join(out, 'sub'));
  fs.writeFileSync(path.join(out, 'sub', 'b.txt'), 'deep secret\n');
  const r0 = rig(T("'data/**/*.txt'"));
  try {
    fs.mkdirSync(path.join(r0.dir, 'data'));
    fs.writeFileSync(path.join(r0.dir, 'data/ok.txt'), 'ok\n');
    const first = r0.run([]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    // A file symlinked out: refused when the glob is walked again (the folder changed).
    fs.symlinkSync(path.join(out, 'a.txt'), path.join(r0.dir, 'data/x.txt'));
    const r = r0.run([]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /target t: input data\/x\.txt \(matched by data\/\*\*\/\*\.txt\) resolves outside the workspace/,
    );
    assert.match(r.stderr, /at rc1\.build\.ts/);
    assert.equal(r0.read('out/t.txt'), 'ok\n!', 'the rule did not run on the outside file');
    // Refused again on the next build (an escaping result is never cached).
    assert.equal(r0.run([]).code, 64);
    // A symlinked folder under ** leading out.
    fs.rmSync(path.join(r0.dir, 'data/x.txt'));
    fs.symlinkSync(path.join(out, 'sub'), path.join(r0.dir, 'data/sub'));
    const deep = r0.run([]);
    assert.equal(deep.code, 64, deep.stdout + deep.stderr);
    assert.match(
      deep.stderr,
      /input data\/sub\/b\.txt \(matched by data\/\*\*\/\*\.txt\) resolves outside the workspace/,
    );
    assert.ok(!r0.read('out/t.txt').includes('secret'));
    // Removing the link heals it.
    fs.rmSync(path.join(r0.dir, 'data/sub'));
    assert.equal(r0.run([]).code, 0);
  } finally {
    r0.cleanup();
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('an output under a symlinked directory that leads out is refused by build and clean (nothing outside written or deleted) unless its target is an external root', () => {
  const out = outsideDir();
  const r0 = rig(T("'src/a.txt'"));
  try {
    fs.symlinkSync(out, path.join(r0.dir, 'out'));
    const r = r0.run([]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(r.stderr, /target t: output out\/t\.txt resolves outside the workspace, to .*rc1-outside-/);
    assert.ok(!fs.existsSync(path.join(out, 't.txt')), 'nothing written outside');
    fs.writeFileSync(path.join(out, 't.txt'), 'precious\n');
    const c = r0.run(['clean']);
    assert.equal(c.code, 64, c.stdout + c.stderr);
    assert.equal(fs.readFileSync(path.join(out, 't.txt'), 'utf8'), 'precious\n', 'clean deleted nothing outside');
    // Declared as an external root (say, a bigger disk for checkpoints), the same layout builds.
    r0.write(
      'rc1.build.ts',
      r0.read('rc1.build.ts').replace('definePipeline({', `definePipeline({ externalRoots: ['${out}'],`),
    );
    const ok = r0.run([]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(fs.readFileSync(path.join(out, 't.txt'), 'utf8'), 'a\n!');
  } finally {
    r0.cleanup();
    fs.rmSync(out, { recursive: true, force: true });
  }
});
