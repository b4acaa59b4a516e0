// Bad declarations and bad config are usage errors (exit 64) that name the targets and the
// rc1.build.ts (or YAML) line, and build nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COPY_RULE, TestRig } from '../helpers/rig.ts';

function rigWith(targets: string, yaml = 'copy:\n  suffix: "!"\n'): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, target } from 'rc1-build';\nexport default definePipeline({\n  targets: [\n${targets}\n  ],\n});\n`,
    'rules/copy.ts': COPY_RULE,
    'configs/default.yaml': yaml,
    'src/a.txt': 'a\n',
  });
}

const T = (name: string, extra = '', outputs = `['out/${name}.txt']`): string =>
  `    defineTarget({ name: '${name}', rule: 'rules/copy.ts', outputs: ${outputs}, params: ['copy.suffix']${extra} }),`;

test('an unknown target reference is a usage error with the line and a did-you-mean', () => {
  const rig = rigWith([T('alpha', ", inputs: { src: 'src/a.txt' }"), T('beta', ", inputs: { src: target('alpah') }")].join('\n'));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target beta: input src names unknown target alpah/);
    assert.match(r.stderr, /at rc1\.build\.ts:5:\d+/);
    assert.match(r.stderr, /did you mean alpha\?/);
    assert.ok(!rig.exists('out'));
  } finally { rig.cleanup(); }
});

test('a cycle is a usage error that prints the cycle path', () => {
  const rig = rigWith([
    T('x', ", inputs: { src: target('z') }"),
    T('y', ", inputs: { src: target('x') }"),
    T('z', ", inputs: { src: 'out/y.txt' }"),
  ].join('\n'));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /dependency cycle: x -> z -> y -> x/);
    assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
  } finally { rig.cleanup(); }
});

test('two targets writing one output is a usage error naming both', () => {
  const rig = rigWith([T('one', ", inputs: { src: 'src/a.txt' }", "['out/same.txt']"), T('two', ", inputs: { src: 'src/a.txt' }", "['out/same.txt']")].join('\n'));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /targets one and two both write out\/same\.txt/);
    assert.match(r.stderr, /at rc1\.build\.ts:5:\d+/);
    assert.match(r.stderr, /one: rc1\.build\.ts:4:\d+/);
  } finally { rig.cleanup(); }
});

test('an output outside the workspace is a usage error', () => {
  const rig = rigWith(T('esc', ", inputs: { src: 'src/a.txt' }", "['../escape.txt']"));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target esc: output \.\.\/escape\.txt is outside the workspace/);
  } finally { rig.cleanup(); }
});

test('an unknown config key is a usage error with a did-you-mean', () => {
  const rig = rigWith(`    defineTarget({ name: 'p', rule: 'rules/copy.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/p.txt'], params: ['cpy.suffix'] }),`);
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target p: unknown config key cpy\.suffix/);
    assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
    assert.match(r.stderr, /did you mean copy\?/);
  } finally { rig.cleanup(); }
});

test('an unknown field in a declaration is rejected by the strict schema', () => {
  const rig = rigWith(`    defineTarget({ name: 'p', rule: 'rules/copy.ts', outputs: ['out/p.txt'], param: ['copy.suffix'] } as never),`);
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target p: .*[Uu]nrecognized key.*param/);
  } finally { rig.cleanup(); }
});

test('an unknown target on the command line is a usage error with a did-you-mean', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"));
  try {
    const r = rig.run(['alpah']);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /unknown target alpah/);
    assert.match(r.stderr, /did you mean alpha\?/);
  } finally { rig.cleanup(); }
});

test('a config value of the wrong type fails the target with the YAML file, line and key', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"), 'other: 1\ncopy:\n  suffix: 42\n');
  try {
    const r = rig.run([]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /configs\/default\.yaml:3:11: copy\.suffix: Invalid input: expected string, received number/);
  } finally { rig.cleanup(); }
});

test('invalid YAML is a usage error with the file and line', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"), 'copy:\n  suffix: "!"\n bad: [\n');
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /invalid YAML in configs\/default\.yaml/);
    assert.match(r.stderr, /at configs\/default\.yaml:\d+:\d+/);
  } finally { rig.cleanup(); }
});

test('a missing input file fails the target with its path', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/nope.txt' }"));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAILED   alpha: missing input: src\/nope\.txt/);
  } finally { rig.cleanup(); }
});

test('a rule module that does not compile fails its target with the file and line', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"));
  try {
    rig.write('rules/copy.ts', 'export default {{{');
    const r = rig.run([]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAILED   alpha: rules\/copy\.ts does not compile:\n.*rules\/copy\.ts:1:\d+/);
  } finally { rig.cleanup(); }
});
