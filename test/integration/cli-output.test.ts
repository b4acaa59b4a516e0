// What a build prints for people (issue 15, item 6): colours only on a terminal (NO_COLOR off,
// FORCE_COLOR on), the progress display within the terminal's width on a pseudo-terminal (tmux,
// 80 columns, -j 2), a waived check listed once per build, blocked targets in one line.
//   src/a.txt --> g1, g2, g3 (gates waiving the same two checks)
//   src/a.txt --> bad (gate that fails) --> d1 --> d2 ;  bad --> d3
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, COPY_RULE, TestRig } from '../helpers/rig.ts';

const WAIVING = `import { defineRule, check, waive } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'waiving', version: 1, run(ctx) {
  const n = fs.readFileSync(ctx.inputs('src')[0], 'utf8').length;
  fs.writeFileSync(ctx.output('reports/' + ctx.target + '.json'), '{}');
  const min = ctx.target === 'bad' ? 1000 : 1;
  return { checks: [check('length', n, '>=', min), waive(check('judge_agreement', 0, '>=', 0.8), 'profile dev'), waive(check('label_leakage', 1, '<=', 0), 'profile dev')] };
} });
`;

function gatesRig(): TestRig {
  const gate = (name: string): string =>
    `defineGate({ name: '${name}', rule: 'rules/waiving.ts', inputs: { src: 'src/a.txt' }, outputs: ['reports/${name}.json'], report: 'reports/${name}.json' }),`;
  const copy = (name: string, src: string): string =>
    `defineTarget({ name: '${name}', rule: 'rules/copy.ts', inputs: { src: ${src} }, outputs: ['out/${name}.txt'], params: ['copy.suffix'] }),`;
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
export default definePipeline({ targets: [
  ${gate('g1')} ${gate('g2')} ${gate('g3')} ${gate('bad')}
  ${copy('d1', "target('bad')")} ${copy('d2', "target('d1')")} ${copy('d3', "['src/a.txt', target('bad')]")}
] });
`,
    'rules/waiving.ts': WAIVING,
    'rules/copy.ts': COPY_RULE,
    'configs/default.yaml': 'copy:\n  suffix: "!"\n',
    'src/a.txt': 'hello\n',
  });
}

test('a waived check is listed once per build; later gates that waive it say so', () => {
  const r = gatesRig();
  try {
    const res = r.run(['g1', 'g2', 'g3', '-j', '1']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.equal(res.stdout.match(/judge_agreement .*WAIVED \(profile dev\)/g)?.length, 1, res.stdout);
    assert.equal(res.stdout.match(/label_leakage .*WAIVED \(profile dev\)/g)?.length, 1);
    assert.equal(res.stdout.match(/^gate +g\d ok: 1 passed, 2 WAIVED \(as listed above\)/gm)?.length, 2, res.stdout);
  } finally {
    r.cleanup();
  }
});

test('blocked targets are summarised in one line, by the failure they wait for', () => {
  const r = gatesRig();
  try {
    const res = r.run(['d2', 'd3', 'g1', '-k', '-j', '1']);
    assert.equal(res.code, 2, res.stdout + res.stderr);
    const lines = res.stdout.split('\n').filter((l) => l.startsWith('blocked'));
    assert.deepEqual(lines, ['blocked  3 targets behind bad: d1, d2, d3'], res.stdout);
    assert.match(res.stdout, /3 blocked/);
    assert.match(
      res.stdout,
      /^gate +g1 ok: 1 passed, 2 WAIVED \(as listed above\)/m,
      "listed in the failed gate's table already",
    );
  } finally {
    r.cleanup();
  }
});

const SGR = /\x1b\[[0-9;]*m/;
const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (!('FORCE_COLOR' in extra)) delete e.FORCE_COLOR;
  if (!('NO_COLOR' in extra)) delete e.NO_COLOR;
  return e;
};

test('colours: none in a pipe or under NO_COLOR, present under FORCE_COLOR and on a terminal', {
  skip: spawnSync('script', ['--version']).status !== 0 && 'no script(1)',
}, () => {
  const r = gatesRig();
  try {
    const plain = spawnSync(process.execPath, [CLI, 'g1', 'bad'], { cwd: r.dir, encoding: 'utf8', env: env({}) });
    assert.equal(plain.status, 2);
    assert.doesNotMatch(plain.stdout + plain.stderr, /\x1b/);
    const forced = spawnSync(process.execPath, [CLI, 'g1', 'bad', 'nope'], {
      cwd: r.dir,
      encoding: 'utf8',
      env: env({ FORCE_COLOR: '1' }),
    });
    assert.match(forced.stderr, SGR, 'the usage error in colour');
    const forcedBuild = spawnSync(process.execPath, [CLI, 'g1', 'bad'], {
      cwd: r.dir,
      encoding: 'utf8',
      env: env({ FORCE_COLOR: '1' }),
    });
    assert.match(forcedBuild.stdout, /\x1b\[[0-9;]*mGATE FAILED/);
    // on a terminal (script(1) gives the build a pseudo-terminal): coloured, unless NO_COLOR
    const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} g1 bad`;
    const tty = spawnSync('script', ['-q', '-e', '-c', cmd, '/dev/null'], {
      cwd: r.dir,
      encoding: 'utf8',
      env: env({}),
    });
    assert.match(tty.stdout, SGR, tty.stdout);
    const noColor = spawnSync('script', ['-q', '-e', '-c', cmd, '/dev/null'], {
      cwd: r.dir,
      encoding: 'utf8',
      env: env({ NO_COLOR: '1' }),
    });
    assert.match(noColor.stdout, /GATE FAILED bad/);
    assert.doesNotMatch(noColor.stdout, SGR, noColor.stdout);
  } finally {
    r.cleanup();
  }
});

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

test('on an 80-column terminal, -j 2 draws one bar per running target and no line is longer than the width', {
  skip: !hasTmux && 'tmux is not installed (apt-get install -y tmux)',
}, async () => {
  const long = (name: string): string =>
    `defineTarget({ name: '${name}', rule: 'rules/long.ts', outputs: ['out/${name}.txt'] }),`;
  const r = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [${long('a_long_target_name_for_the_first_slow_rule')} ${long('another_long_target_name_for_the_second_one')}] });
`,
    'rules/long.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
export default defineRule({ name: 'long', version: 1, async run(ctx) {
  for (let i = 1; i <= 60; i++) { await pause(50); ctx.progress(i, 60, 'steps'); }
  fs.writeFileSync(ctx.output('out/' + ctx.target + '.txt'), 'ok');
} });
`,
  });
  const sock = `rc1-test-${process.pid}`;
  const tmux = (...a: string[]): string => spawnSync('tmux', ['-L', sock, ...a], { encoding: 'utf8' }).stdout ?? '';
  try {
    const done = path.join(r.dir, '..', `${path.basename(r.dir)}.done`);
    const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} -j 2; echo $? > ${JSON.stringify(`${done}.tmp`)}; mv ${JSON.stringify(`${done}.tmp`)} ${JSON.stringify(done)}; sleep 60`;
    spawnSync('tmux', ['-L', sock, '-f', '/dev/null', 'new-session', '-d', '-x', '80', '-y', '40', '-c', r.dir, cmd], {
      env: env({}),
    });
    const screens: string[] = [];
    const t0 = Date.now();
    while (!fs.existsSync(done) && Date.now() - t0 < 90_000) {
      screens.push(tmux('capture-pane', '-p', '-J'));
      await new Promise((res) => setTimeout(res, 150));
    }
    // tmux may draw the CLI's last output after the exit code is written: the last screen is the one with the summary.
    for (const t1 = Date.now(); ; await new Promise((res) => setTimeout(res, 100))) {
      screens.push(tmux('capture-pane', '-p', '-J'));
      if (/rc1-build: ok/.test(screens.at(-1)!) || Date.now() - t1 > 5000) break;
    }
    assert.equal(fs.readFileSync(done, 'utf8').trim(), '0', screens.at(-1));
    fs.rmSync(done);
    // -J joins lines the terminal wrapped: a line over 80 columns is one that wrapped
    for (const s of screens) for (const l of s.split('\n')) assert.ok(l.length <= 80, `${l.length} columns: ${l}`);
    const both = screens.find((s) => s.split('\n').filter((l) => /\[[#.]+\] \d+% \d+\/60 steps/.test(l)).length === 2);
    assert.ok(both, `no screen with two bars, one per line:\n${screens.slice(-3).join('\n---\n')}`);
    assert.doesNotMatch(screens.at(-1)!, /\[[#.]+\] \d+%/, 'the bars are cleared at the end');
    assert.match(screens.at(-1)!, /rc1-build: ok · 2 ran/);
  } finally {
    tmux('kill-server');
    r.cleanup();
  }
});

test('a command that stops waiting on a promise that never settles (a top-level await in rc1.build.ts) exits 70 and says so, instead of exiting 0 with nothing printed', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
await new Promise(() => {}); // never settles: nothing is left for node to wait on
export default definePipeline({ targets: [defineTarget({ name: 'a', rule: 'rules/write.ts', outputs: ['out/a.txt'] })] });
`,
    'rules/write.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'write', version: 1, run(ctx) { fs.writeFileSync(ctx.output('out/a.txt'), 'a'); } });
`,
  });
  try {
    const r = rig.run(['a'], { RC1_NO_SERVER: '1' });
    assert.equal(r.code, 70, r.stdout + r.stderr);
    assert.match(r.stderr, /rc1-build: internal error: the command stopped before it finished/);
    assert.doesNotMatch(r.stdout, /ok ·/);
    assert.equal(rig.exists('out/a.txt'), false);
  } finally {
    rig.cleanup();
  }
});
