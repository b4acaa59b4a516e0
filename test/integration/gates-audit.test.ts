// Gates, keep-going, the manifest, sha256 sidecars and audit, through the real CLI:
//   src/a.txt --> a --> b --> g (gate) --> after_gate
//   src/c.txt --> c
//   src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TestRig, hasSha256sum, standardRig } from '../helpers/rig.ts';

const FAILING = 'copy:\n  suffix: "!"\ngate:\n  min: 100\nunrelated: 1\n';

test('a failing gate exits 2 with its checks table and hint, writes its report, and blocks its dependents', () => {
  const rig = standardRig();
  try {
    rig.write('configs/default.yaml', FAILING);
    const r = rig.run(['after_gate']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /GATE FAILED g · report reports\/g\.json/);
    assert.match(r.stdout, /length\s+8\s+>=\s+100\s+FAIL/);
    assert.match(r.stdout, /hint: make the text longer or lower gate\.min/);
    assert.match(r.stdout, /blocked  after_gate \(needs g\)/);
    const report = JSON.parse(rig.read('reports/g.json'));
    assert.equal(report.pass, false);
    assert.equal(report.checks[0].value, 8);
    assert.equal(report.length, 8);
    assert.ok(!rig.exists('out/after_gate.txt'));
    assert.ok(rig.runs().includes('g'));
  } finally {
    rig.cleanup();
  }
});

test('a failed gate with unchanged inputs reports its recorded failure without rerunning', () => {
  const rig = standardRig();
  try {
    rig.write('configs/default.yaml', FAILING);
    rig.run(['after_gate']);
    rig.runs();
    const r = rig.run(['after_gate', '--json']);
    assert.equal(r.code, 2);
    assert.deepEqual(rig.runs(), []);
    const gate = r.events.find((e) => e.event === 'gate') as { pass: boolean; replayed: boolean; checks: unknown[] };
    assert.equal(gate.pass, false);
    assert.equal(gate.replayed, true);
    assert.match(rig.run(['status']).stdout, /^g\s+failed \(gate failed: length\)/m);
  } finally {
    rig.cleanup();
  }
});

test('-k finishes independent branches after a gate failure; without -k nothing new starts', () => {
  const rig = standardRig();
  try {
    rig.write('configs/default.yaml', FAILING);
    const r = rig.run(['-k', '-j', '1', '--json']);
    assert.equal(r.code, 2);
    const ran = rig.runs();
    for (const t of ['a', 'b', 'g', 'c', 'sq', 'after_sq']) assert.ok(ran.includes(t), `${t} ran: ${ran}`);
    assert.ok(!ran.includes('after_gate'));
    const end = r.events.find((e) => e.event === 'end') as {
      ok: boolean;
      exitCode: number;
      counts: Record<string, number>;
    };
    assert.equal(end.ok, false);
    assert.equal(end.exitCode, 2);
    assert.equal(end.counts.gateFailed, 1);
    assert.equal(end.counts.blocked, 1);
  } finally {
    rig.cleanup();
  }
});

test('--json events follow the documented contract', () => {
  const rig = standardRig();
  try {
    const r = rig.run(['--json', '-j', '2']);
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout
        .trim()
        .split('\n')
        .every((l) => {
          JSON.parse(l);
          return true;
        }),
      true,
    );
    const kinds = new Set(r.events.map((e) => e.event));
    for (const k of ['plan', 'start', 'done', 'gate', 'end']) assert.ok(kinds.has(k), k);
    const plan = r.events[0] as { event: string; targets: string[] };
    assert.equal(plan.event, 'plan');
    assert.equal(plan.targets.length, 7);
    const start = r.events.find((e) => e.event === 'start') as { target: string; reason: string };
    assert.equal(start.reason, 'never built');
    const done = r.events.find((e) => e.event === 'done' && e.target === 'a') as {
      ms: number;
      outputs: { path: string; sha256: string }[];
    };
    assert.equal(typeof done.ms, 'number');
    assert.deepEqual(
      done.outputs.map((o) => o.path),
      ['out/a.txt'],
    );
    assert.match(done.outputs[0]!.sha256, /^[0-9a-f]{64}$/);
    const gate = r.events.find((e) => e.event === 'gate') as {
      pass: boolean;
      checks: { name: string; value: number; op: string; threshold: number; pass: boolean }[];
      report: string;
    };
    assert.equal(gate.report, 'reports/g.json');
    assert.deepEqual(Object.keys(gate.checks[0]!).sort(), [
      'hint',
      'name',
      'op',
      'pass',
      'status',
      'threshold',
      'value',
    ]);
    const end = r.events.at(-1) as { event: string; ok: boolean; ms: number };
    assert.equal(end.event, 'end');
    assert.equal(end.ok, true);
  } finally {
    rig.cleanup();
  }
});

test('the manifest lists every artifact with hash, size, producer and input hashes, and the git state', () => {
  const rig = standardRig();
  try {
    spawnSync('git', ['init', '-q'], { cwd: rig.dir });
    rig.run([]);
    const m = JSON.parse(rig.read('reports/build/manifest.json'));
    const paths = m.artifacts.map((a: { path: string }) => a.path);
    assert.deepEqual(paths, [
      'out/a.txt',
      'out/after_gate.txt',
      'out/after_sq.txt',
      'out/b.txt',
      'out/c.txt',
      'out/sq.txt',
      'reports/g.json',
    ]);
    const a = m.artifacts[0];
    assert.equal(a.target, 'a');
    assert.equal(a.size, 7);
    assert.match(a.sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(Object.keys(m.targets.b.inputs.src), ['out/a.txt']);
    assert.ok('commit' in m.git && 'dirty' in m.git);
  } finally {
    rig.cleanup();
  }
});

test('sha256sum -c accepts every sidecar', { skip: !hasSha256sum() && 'sha256sum not installed' }, () => {
  const rig = standardRig();
  try {
    rig.run([]);
    const dir = path.join(rig.dir, 'reports/build/sha256');
    const sidecars = fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(rig.dir, path.join(e.parentPath, e.name)));
    assert.equal(sidecars.length, 7);
    const r = spawnSync('sha256sum', ['-c', ...sidecars], { cwd: rig.dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal((r.stdout.match(/: OK$/gm) ?? []).length, 7);
  } finally {
    rig.cleanup();
  }
});

test('audit passes on a clean build and exits non-zero on a modified, missing or extra artifact', () => {
  const rig = standardRig();
  try {
    rig.run([]);
    let r = rig.run(['audit']);
    assert.equal(r.code, 0, r.stdout);
    assert.match(r.stdout, /audit: ok · 7 artifacts checked, 0 problems/);
    rig.write('out/c.txt', 'tampered');
    r = rig.run(['audit', '--json']);
    assert.equal(r.code, 1);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(
      j.problems.map((p: { kind: string; path: string }) => `${p.kind} ${p.path}`),
      ['modified out/c.txt'],
    );
    rig.run(['c']);
    fs.rmSync(path.join(rig.dir, 'out/sq.txt'));
    r = rig.run(['audit']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /missing\s+out\/sq\.txt \(from sq\)/);
    rig.run([]);
    rig.write('reports/build/sha256/out/ghost.txt.sha256', `${'0'.repeat(64)}  out/ghost.txt\n`);
    r = rig.run(['audit']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /extra\s+reports\/build\/sha256\/out\/ghost\.txt\.sha256/);
  } finally {
    rig.cleanup();
  }
});

test('clean removes outputs and records but keeps the cache, so the next build restores', () => {
  const rig = standardRig();
  try {
    rig.run([]);
    rig.runs();
    const r = rig.run(['clean']);
    assert.equal(r.code, 0);
    assert.ok(!rig.exists('out/a.txt'));
    const b = rig.run([]);
    assert.equal(b.code, 0);
    assert.deepEqual(rig.runs(), []);
    assert.match(b.stdout, /0 ran, 7 restored/);
    rig.run(['clean', '--cache']);
    rig.run([]);
    assert.equal(rig.runs().length, 7);
  } finally {
    rig.cleanup();
  }
});

test('graph prints dot, mermaid and json', () => {
  const rig = standardRig();
  try {
    assert.match(rig.run(['graph']).stdout, /"a" -> "b";/);
    assert.match(rig.run(['graph', '--format', 'mermaid']).stdout, /flowchart LR[\s\S]*b --> g/);
    const j = JSON.parse(rig.run(['graph', '--format', 'json']).stdout);
    assert.deepEqual(j.targets.find((t: { name: string }) => t.name === 'g').deps, ['b']);
    assert.equal(rig.run(['graph', '--format', 'svg']).code, 64);
  } finally {
    rig.cleanup();
  }
});

test('directory outputs keep their symbolic links: hashed, audited, and restored from the cache', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'ckpt', rule: 'rules/ckpt.ts', inputs: { v: 'src/v.txt' }, outputs: ['ckpt/'] })] });
`,
    'rules/ckpt.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'ckpt', version: 1, run(ctx) {
  const dir = ctx.output('ckpt');
  const v = fs.readFileSync(ctx.inputs('v')[0], 'utf8').trim();
  for (const s of [1, 2]) { fs.mkdirSync(path.join(dir, 'step_0000' + s)); fs.writeFileSync(path.join(dir, 'step_0000' + s, 'w.bin'), v + s); }
  fs.symlinkSync('step_00002', path.join(dir, 'latest'));
}});
`,
    'src/v.txt': 'one\n',
  });
  try {
    assert.equal(rig.run([]).code, 0);
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'ckpt/latest')), 'step_00002');
    assert.equal(rig.run(['audit']).code, 0);
    fs.rmSync(path.join(rig.dir, 'ckpt/latest'));
    fs.symlinkSync('step_00001', path.join(rig.dir, 'ckpt/latest'));
    const a = rig.run(['audit']);
    assert.equal(a.code, 1);
    assert.match(a.stdout, /modified\s+ckpt\/latest: expected link to step_00002, found link to step_00001/);
    assert.match(rig.run(['status']).stdout, /ckpt\s+stale \(restorable from cache: output ckpt was modified/);
    rig.run(['clean']);
    const r = rig.run([]);
    assert.match(r.stdout, /restored ckpt/);
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'ckpt/latest')), 'step_00002');
    assert.equal(rig.read('ckpt/latest/w.bin'), 'one2');
  } finally {
    rig.cleanup();
  }
});
