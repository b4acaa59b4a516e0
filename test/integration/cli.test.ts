// The command line that helps (issue 15, items 6 and 7): per-command options and --help, usage
// errors with suggestions (exit 64), `clean -n`, targets named by output path, `graph TARGET`,
// `status TARGET`, the workspace found from a subdirectory, shell completion.
//   src/a.txt --> alpha --> beta --> gamma ;  src/a.txt --> other
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, COPY_RULE, TestRig } from '../helpers/rig.ts';

const T = (name: string, src: string): string =>
  `    defineTarget({ name: '${name}', rule: 'rules/copy.ts', inputs: { src: ${src} }, outputs: ['out/${name}.txt'], params: ['copy.suffix'] }),`;

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, target } from 'rc1-build';\nexport default definePipeline({\n  targets: [\n${[
      T('alpha', "'src/a.txt'"),
      T('beta', "target('alpha')"),
      T('gamma', "target('beta')"),
      T('other', "'src/a.txt'"),
    ].join('\n')}\n  ],\n  defaultTargets: ['gamma'],\n});\n`,
    'rules/copy.ts': COPY_RULE,
    'configs/default.yaml': 'copy:\n  suffix: "!"\n',
    'src/a.txt': 'a\n',
  });
}

/** The CLI run in a directory of the workspace (relative to it). */
function runIn(r: TestRig, sub: string, args: string[]): { code: number; stdout: string; stderr: string } {
  const p = spawnSync(process.execPath, [CLI, ...args], {
    cwd: path.join(r.dir, sub),
    encoding: 'utf8',
    env: { ...process.env, RC1_TEST_COUNTER: r.counter },
    timeout: 120_000,
  });
  return { code: p.status ?? -1, stdout: p.stdout, stderr: p.stderr };
}

test('a misspelt command suggests the nearest one and exits 64', () => {
  const r = rig();
  try {
    const res = r.run(['stauts']);
    assert.equal(res.code, 64, res.stderr);
    assert.match(res.stderr, /unknown command stauts \(no target or output path of this pipeline either\)/);
    assert.match(res.stderr, /did you mean status\?/);
    assert.deepEqual(r.runs(), []);
    const opt = r.run(['--jbos', '2']);
    assert.equal(opt.code, 64);
    assert.match(opt.stderr, /unknown option '--jbos'\n {2}hint: did you mean --jobs\?/);
  } finally {
    r.cleanup();
  }
});

test('stray arguments and options of another command are usage errors (exit 64)', () => {
  const r = rig();
  try {
    const audit = r.run(['audit', 'extra']);
    assert.equal(audit.code, 64);
    assert.match(audit.stderr, /too many arguments for 'audit'/);
    const status = r.run(['status', 'extra']);
    assert.equal(status.code, 64);
    assert.match(status.stderr, /unknown target extra/);
    const opt = r.run(['audit', '--cache']);
    assert.equal(opt.code, 64);
    assert.match(opt.stderr, /unknown option '--cache'/);
  } finally {
    r.cleanup();
  }
});

test('--help lists the commands, and each command has its own --help', () => {
  const r = rig();
  try {
    const all = r.run(['--help']);
    assert.equal(all.code, 0);
    for (const c of ['status', 'graph', 'clean', 'why', 'diff', 'completion'])
      assert.match(all.stdout, new RegExp(`^  ${c} `, 'm'));
    const clean = r.run(['clean', '--help']);
    assert.equal(clean.code, 0);
    assert.match(clean.stdout, /-n, --dry-run +list what would be removed/);
    assert.doesNotMatch(clean.stdout, /--jobs/);
  } finally {
    r.cleanup();
  }
});

test('clean -n lists what would be removed and removes nothing', () => {
  const r = rig();
  try {
    assert.equal(r.run([]).code, 0);
    const res = r.run(['clean', '-n', 'beta']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /dry run, nothing removed\): would remove 1 output of 1 target/);
    assert.match(res.stdout, /would remove out\/beta\.txt \(output of beta, /);
    assert.ok(r.exists('out/beta.txt'));
    assert.match(r.run(['status', 'beta']).stdout, /^beta +up-to-date/m);
    const real = r.run(['clean', 'beta']);
    assert.equal(real.code, 0);
    assert.ok(!r.exists('out/beta.txt'));
  } finally {
    r.cleanup();
  }
});

test('a target may be named by its output path (./ and a trailing / ignored)', () => {
  const r = rig();
  try {
    const res = r.run(['./out/beta.txt']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(r.runs(), ['alpha', 'beta']);
    assert.ok(!r.exists('out/gamma.txt'));
    const bad = r.run(['out/betta.txt']);
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /unknown target out\/betta\.txt \(no output path of this pipeline either\)/);
  } finally {
    r.cleanup();
  }
});

test('graph TARGET draws the target and what it needs; status TARGET shows that target', () => {
  const r = rig();
  try {
    const g = r.run(['graph', 'beta']);
    assert.equal(g.code, 0, g.stderr);
    assert.match(g.stdout, /"alpha" -> "beta"/);
    assert.doesNotMatch(g.stdout, /gamma|other/);
    const j = JSON.parse(r.run(['graph', '--format', 'json', 'out/beta.txt']).stdout) as {
      targets: { name: string }[];
    };
    assert.deepEqual(
      j.targets.map((t) => t.name),
      ['alpha', 'beta'],
    );
    const s = r.run(['status', 'gamma']);
    assert.equal(s.code, 0);
    assert.deepEqual(
      s.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/ +/)[0]),
      ['gamma'],
    );
    assert.match(s.stdout, /^gamma +missing/);
  } finally {
    r.cleanup();
  }
});

test('run from a subdirectory, rc1-build finds the workspace upwards; an output path is read relative to it', () => {
  const r = rig();
  try {
    fs.mkdirSync(path.join(r.dir, 'src', 'deep'), { recursive: true });
    const res = runIn(r, 'src/deep', ['alpha']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(r.exists('out/alpha.txt'));
    assert.ok(!fs.existsSync(path.join(r.dir, 'src', 'deep', '.rc1')));
    const byPath = runIn(r, 'out', ['beta.txt']);
    assert.equal(byPath.code, 0, byPath.stderr);
    assert.deepEqual(r.runs(), ['alpha', 'beta']);
    const st = runIn(r, 'src', ['status', '--json']);
    assert.equal(st.code, 0);
    assert.equal((JSON.parse(st.stdout) as { targets: unknown[] }).targets.length, 4);
  } finally {
    r.cleanup();
  }
});

test('completion scripts for bash, zsh and fish name the commands; __complete gives targets, options and values', () => {
  const r = rig();
  try {
    for (const sh of ['bash', 'zsh', 'fish']) {
      const s = r.run(['completion', sh]);
      assert.equal(s.code, 0);
      for (const c of ['status', 'graph', 'clean', 'check-determinism'])
        assert.ok(s.stdout.includes(c), `${sh} script lacks ${c}`);
      assert.match(s.stdout, /rc1-build __complete/);
    }
    assert.equal(r.run(['completion', 'tcsh']).code, 64);
    assert.equal(r.run(['status']).code, 0); // caches the resolved pipeline
    const words = (args: string[]): string[] =>
      r
        .run(['__complete', ...args])
        .stdout.split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0]!);
    assert.deepEqual(words(['a']), ['audit', 'alpha']);
    assert.deepEqual(words(['clean', '']), ['alpha', 'beta', 'gamma', 'other']);
    assert.deepEqual(words(['clean', '--']), ['--dry-run', '--cache', '--directory', '--help']);
    assert.deepEqual(words(['graph', '--format', '']), ['dot', 'mermaid', 'json']);
    assert.deepEqual(words(['status', 'out/g']), ['out/gamma.txt']);
  } finally {
    r.cleanup();
  }
});

test('bash completes target names through the generated script', {
  skip: spawnSync('bash', ['--version']).status !== 0 && 'no bash',
}, () => {
  const r = rig();
  try {
    assert.equal(r.run(['status']).code, 0);
    const bin = fs.mkdtempSync(path.join(r.dir, '..', 'rc1-bin-'));
    fs.writeFileSync(
      path.join(bin, 'rc1-build'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`,
      { mode: 0o755 },
    );
    const script = r.run(['completion', 'bash']).stdout;
    const p = spawnSync(
      'bash',
      ['-c', `${script}\nCOMP_WORDS=(rc1-build clean g); COMP_CWORD=2; _rc1_build; printf '%s\\n' "\${COMPREPLY[@]}"`],
      {
        cwd: r.dir,
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      },
    );
    fs.rmSync(bin, { recursive: true, force: true });
    assert.equal(p.stdout.trim(), 'gamma', p.stderr);
  } finally {
    r.cleanup();
  }
});
