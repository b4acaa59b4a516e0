// Bad declarations and bad config are usage errors (exit 64) that name the targets and the
// rc1.build.ts (or YAML) line, and build nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
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
  const rig = rigWith(
    [T('alpha', ", inputs: { src: 'src/a.txt' }"), T('beta', ", inputs: { src: target('alpah') }")].join('\n'),
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target beta: input src names unknown target alpah/);
    assert.match(r.stderr, /at rc1\.build\.ts:5:\d+/);
    assert.match(r.stderr, /did you mean alpha\?/);
    assert.ok(!rig.exists('out'));
  } finally {
    rig.cleanup();
  }
});

test('a cycle is a usage error that prints the cycle path', () => {
  const rig = rigWith(
    [
      T('x', ", inputs: { src: target('z') }"),
      T('y', ", inputs: { src: target('x') }"),
      T('z', ", inputs: { src: 'out/y.txt' }"),
    ].join('\n'),
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /dependency cycle: x -> z -> y -> x/);
    assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
  } finally {
    rig.cleanup();
  }
});

test('two targets writing one output is a usage error naming both', () => {
  const rig = rigWith(
    [
      T('one', ", inputs: { src: 'src/a.txt' }", "['out/same.txt']"),
      T('two', ", inputs: { src: 'src/a.txt' }", "['out/same.txt']"),
    ].join('\n'),
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /targets one and two both write out\/same\.txt/);
    assert.match(r.stderr, /at rc1\.build\.ts:5:\d+/);
    assert.match(r.stderr, /one: rc1\.build\.ts:4:\d+/);
  } finally {
    rig.cleanup();
  }
});

test('an output outside the workspace is a usage error', () => {
  const rig = rigWith(T('esc', ", inputs: { src: 'src/a.txt' }", "['../escape.txt']"));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target esc: output \.\.\/escape\.txt is outside the workspace/);
  } finally {
    rig.cleanup();
  }
});

test('an unknown config key is a usage error with a did-you-mean', () => {
  const rig = rigWith(
    `    defineTarget({ name: 'p', rule: 'rules/copy.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/p.txt'], params: ['cpy.suffix'] }),`,
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target p: unknown config key cpy\.suffix/);
    assert.match(r.stderr, /at rc1\.build\.ts:4:\d+/);
    assert.match(r.stderr, /did you mean copy\?/);
  } finally {
    rig.cleanup();
  }
});

test('an unknown field in a declaration is rejected by the strict schema', () => {
  const rig = rigWith(
    `    defineTarget({ name: 'p', rule: 'rules/copy.ts', outputs: ['out/p.txt'], param: ['copy.suffix'] } as never),`,
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target p: .*[Uu]nrecognized key.*param/);
  } finally {
    rig.cleanup();
  }
});

test('an unknown target on the command line is a usage error with a did-you-mean', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"));
  try {
    const r = rig.run(['alpah']);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /unknown target alpah/);
    assert.match(r.stderr, /did you mean alpha\?/);
  } finally {
    rig.cleanup();
  }
});

test('a config value of the wrong type is a usage error at its YAML file, line and key before any target runs', () => {
  const rig = rigWith(
    [T('first', ", inputs: { src: 'src/a.txt' }"), T('second', ", inputs: { src: target('first') }")].join('\n'),
    '# the suffix\ncopy:\n  suffix: 42\n',
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /copy\.suffix: Invalid input: expected string, received number \(target first, checked by rules\/copy\.ts\)/,
    );
    assert.match(r.stderr, /at configs\/default\.yaml:3:11/);
    assert.equal((r.stderr.match(/copy\.suffix: Invalid input/g) ?? []).length, 1, 'reported once for both targets');
    assert.deepEqual(rig.runs(), [], 'no rule ran, not even the first');
    rig.write('configs/default.yaml', '# the suffix\ncopy:\n  suffix: "!"\n');
    assert.equal(rig.run([]).code, 0);
  } finally {
    rig.cleanup();
  }
});

test('an unknown key inside a mapping a rule reads is a usage error with a did-you-mean', () => {
  const rig = rigWith(
    `    defineTarget({ name: 'alpha', rule: 'rules/copy.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/alpha.txt'], params: ['copy'] }),`,
    'copy:\n  sufix: "!"\n',
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(r.stderr, /copy\.sufix: Unrecognized key: "sufix"/);
    assert.match(r.stderr, /at configs\/default\.yaml:2:3/);
    assert.match(r.stderr, /did you mean copy\.suffix\?/);
  } finally {
    rig.cleanup();
  }
});

test('a config key read by no target is a usage error at its line with a did-you-mean, unless declared free-form', () => {
  const rig = rigWith(
    T('alpha', ", inputs: { src: 'src/a.txt' }"),
    'copy:\n  suffix: "!"\n  prefix: "<"\ncpy:\n  suffix: 1\n',
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(r.stderr, /config key copy\.prefix is read by no target\n  at configs\/default\.yaml:3:3/);
    assert.match(
      r.stderr,
      /config key cpy is read by no target\n  at configs\/default\.yaml:4:1\n  hint: did you mean copy\?/,
    );
    assert.match(r.stderr, /freeFormConfig/);
    assert.ok(!rig.exists('out'));
    rig.write(
      'rc1.build.ts',
      rig.read('rc1.build.ts').replace('definePipeline({', "definePipeline({ freeFormConfig: ['cpy', 'copy.prefix'],"),
    );
    const ok = rig.run([]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  } finally {
    rig.cleanup();
  }
});

test('invalid YAML is a usage error at its real line and column', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"), 'copy:\n  suffix: "!"\n bad: [\n');
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /invalid YAML in configs\/default\.yaml/);
    assert.match(r.stderr, /at configs\/default\.yaml:3:1\b/);
  } finally {
    rig.cleanup();
  }
});

test('a missing input file fails the target with its path', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/nope.txt' }"));
  try {
    const r = rig.run([]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAILED   alpha: missing input: src\/nope\.txt/);
  } finally {
    rig.cleanup();
  }
});

test('a rule module that does not compile fails its target with the file and line', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"));
  try {
    rig.write('rules/copy.ts', 'export default {{{');
    const r = rig.run([]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAILED   alpha: rules\/copy\.ts does not compile:\n.*rules\/copy\.ts:1:\d+/);
  } finally {
    rig.cleanup();
  }
});

test('a pipeline function declares one target per configured stage; a stage arg change reruns only that stage', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline(({ config, profile }) => {
  const stages = (config.stages as { sizes: number[] }).sizes;
  return {
    targets: stages.map((n, i) => defineTarget({
      name: 'pool@' + n, rule: 'rules/stage.ts', args: { n, profile },
      inputs: i === 0 ? { prev: [] } : { prev: target('pool@' + stages[i - 1]) },
      outputs: ['out/pool_' + n + '.txt'],
    })),
  };
}, { profiles: ['dev', 'prod'], defaultProfile: 'dev' });
`,
    'rules/stage.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'stage', version: 1, run(ctx) {
  if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
  fs.writeFileSync(ctx.output('out/pool_' + ctx.args.n + '.txt'), 'n=' + ctx.args.n + ' profile=' + ctx.args.profile + '\\n');
}});
`,
    'configs/default.yaml': 'stages:\n  sizes: [10, 20]\n',
  });
  try {
    const r = rig.run(['pool@20']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(rig.runs(), ['pool@10', 'pool@20']);
    assert.equal(rig.read('out/pool_20.txt'), 'n=20 profile=dev\n');
    rig.write('configs/default.yaml', 'stages:\n  sizes: [10, 30]\n');
    const s = rig.run(['pool@30', '--explain']);
    assert.equal(s.code, 0, s.stdout + s.stderr);
    assert.deepEqual(rig.runs(), ['pool@30']);
    const p = rig.run(['pool@30', '--explain'], { RUN_MODE: 'prod' });
    // the root is the profile switch; the arg it changed is in the detail (-v)
    assert.match(p.stdout, /rc1 explain: pool@10: profile dev → prod, \+1 more/);
    assert.match(p.stdout, /rc1 explain: 2 targets ran because profile dev → prod: pool@10, pool@30/);
    rig.write('configs/default.yaml', 'stages:\n  sizes: [10, 40]\n');
    const v = rig.run(['pool@40', '--explain', '-v']);
    assert.match(v.stdout, /rc1 explain: pool@10: arg profile changed: "prod" → "dev"/);
  } finally {
    rig.cleanup();
  }
});

test('a key set in two configs/*.yaml files is a usage error naming both; a profile overlay may override', () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"));
  try {
    rig.write('configs/extra.yaml', 'copy:\n  suffix: "?"\n');
    let r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /config key copy\.suffix is set in both configs\/default\.yaml and configs\/extra\.yaml/);
    fs.rmSync(`${rig.dir}/configs/extra.yaml`);
    rig.write('configs/profiles/prod.yaml', 'copy:\n  suffix: "?"\n');
    r = rig.run([], { RUN_MODE: 'prod' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(rig.read('out/alpha.txt'), 'a\n?');
    r = rig.run([], { RUN_MODE: 'staging' });
    assert.equal(r.code, 64);
    assert.match(
      r.stderr,
      /RUN_MODE must be one of default, prod \(the default and those with a configs\/profiles\/<name>\.yaml\), got "staging"/,
    );
  } finally {
    rig.cleanup();
  }
});

test("the profiles are the pipeline's: RUN_MODE names a declared one (else a usage error listing them), unset means defaultProfile", () => {
  const rig = rigWith(T('alpha', ", inputs: { src: 'src/a.txt' }"));
  try {
    rig.write(
      'rc1.build.ts',
      rig
        .read('rc1.build.ts')
        .replace('definePipeline({', "definePipeline({ profiles: ['lab', 'fleet'], defaultProfile: 'lab',"),
    );
    rig.write('configs/profiles/fleet.yaml', 'copy:\n  suffix: "?"\n');
    let r = rig.run([]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/alpha.txt'), 'a\n!', 'lab has no overlay: the base config');
    r = rig.run(['--explain'], { RUN_MODE: 'fleet' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /profile lab → fleet/);
    assert.equal(rig.read('out/alpha.txt'), 'a\n?');
    r = rig.run([], { RUN_MODE: 'prod' });
    assert.equal(r.code, 64);
    assert.match(r.stderr, /RUN_MODE must be one of lab, fleet \(the profiles rc1\.build\.ts declares\), got "prod"/);
    assert.match(r.stderr, /unset RUN_MODE for the lab profile/);
    rig.write('rc1.build.ts', rig.read('rc1.build.ts').replace("defaultProfile: 'lab'", "defaultProfile: 'dev'"));
    r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /defaultProfile: dev is not one of profiles \(lab, fleet\)/);
  } finally {
    rig.cleanup();
  }
});

test('a pipeline that declares no defaultTargets builds its leaves (a target named train is no default) and writes the manifest under reports/build', () => {
  const rig = rigWith(
    [
      T('train', ", inputs: { src: 'src/a.txt' }"),
      T('leaf', ", inputs: { src: target('train') }"),
      T('solo', ", inputs: { src: 'src/a.txt' }"),
    ].join('\n'),
  );
  try {
    const r = rig.run([]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(rig.runs(), ['leaf', 'solo', 'train']);
    assert.ok(rig.exists('reports/build/manifest.json'));
    assert.ok(!rig.exists('reports/rc1'), 'no pipeline-specific folder from the engine');
  } finally {
    rig.cleanup();
  }
});

// src/a.txt --> split {upper, lower} --upper--> shout
test('named outputs: the rule writes ctx.output(name), target(x, name) hands one output of x, and an unknown output name is a usage error with a did-you-mean', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({ targets: [
  defineTarget({ name: 'split', rule: 'rules/split.ts', inputs: { src: 'src/a.txt' }, outputs: { upper: 'out/upper.txt', lower: 'out/lower.txt' } }),
  defineTarget({ name: 'shout', rule: 'rules/shout.ts', inputs: { text: target('split', 'upper') }, outputs: { shout: 'out/shout.txt' } }),
] });
`,
    'rules/split.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'split', version: 1, run(ctx) {
  const text = fs.readFileSync(ctx.inputs('src')[0], 'utf8');
  fs.writeFileSync(ctx.output('upper'), text.toUpperCase());
  fs.writeFileSync(ctx.output('out/lower.txt'), text.toLowerCase());
}});
`,
    'rules/shout.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'shout', version: 1, run(ctx) {
  const files = ctx.inputs('text');
  fs.writeFileSync(ctx.output('shout'), files.map((f) => f.slice(ctx.root.length + 1) + '=' + fs.readFileSync(f, 'utf8').trim()).join(',') + '!');
}});
`,
    'src/a.txt': 'Hello\n',
  });
  try {
    let r = rig.run([]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/shout.txt'), 'out/upper.txt=HELLO!', 'only the named output is the input');
    assert.equal(rig.read('out/lower.txt'), 'hello\n');
    // A change to the other output of split does not rebuild shout (it is not its input).
    rig.write('rules/split.ts', rig.read('rules/split.ts').replace('text.toLowerCase()', "text.toLowerCase() + '.'"));
    r = rig.run(['--explain']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /rc1 explain: shout: up-to-date\n/);
    rig.write('rc1.build.ts', rig.read('rc1.build.ts').replace("target('split', 'upper')", "target('split', 'uper')"));
    r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /target shout: input text names output uper of split, which has the outputs upper, lower/);
    assert.match(r.stderr, /did you mean target\('split', 'upper'\)\?/);
  } finally {
    rig.cleanup();
  }
});

test("a target that declares no params reads the keys its rule's schema describes: whole where the config holds nothing else, else key by key", () => {
  const rig = rigWith(
    "    defineTarget({ name: 'alpha', rule: 'rules/copy.ts', outputs: ['out/alpha.txt'], inputs: { src: 'src/a.txt' } }),",
  );
  const params = (): unknown =>
    (JSON.parse(rig.run(['graph', '--format', 'json']).stdout) as { targets: { params: string[] }[] }).targets[0]!
      .params;
  try {
    let r = rig.run([]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(rig.read('out/alpha.txt'), 'a\n!');
    assert.deepEqual(params(), ['copy']);
    rig.write('configs/default.yaml', 'copy:\n  suffix: "?"\n');
    r = rig.run(['--explain']);
    assert.match(r.stdout, /rc1 explain: alpha: param copy\.suffix changed: "!" → "\?"/);
    assert.equal(rig.read('out/alpha.txt'), 'a\n?');
    // A key beside the rule's that nothing reads: the params become copy.suffix alone.
    rig.write(
      'rc1.build.ts',
      rig.read('rc1.build.ts').replace('definePipeline({', "definePipeline({ freeFormConfig: ['copy.note'],"),
    );
    rig.write('configs/default.yaml', 'copy:\n  suffix: "?"\n  note: one\n');
    assert.deepEqual(params(), ['copy.suffix']);
    assert.equal(rig.run([]).code, 0);
    rig.write('configs/default.yaml', 'copy:\n  suffix: "?"\n  note: two\n');
    r = rig.run(['--explain']);
    assert.match(r.stdout, /rc1 explain: alpha: up-to-date/, 'a key the rule does not read rebuilds nothing');
  } finally {
    rig.cleanup();
  }
});
