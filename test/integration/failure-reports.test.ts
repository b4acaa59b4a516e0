// What a failed build leaves behind for diagnosis: reports/ERROR_<ts>.json for a crashed rule,
// and `rc1-build failpack` packing logs, preflight and failed gates' reports into a .tgz.
//   src/a.txt --> a --> b --> g (gate) --> after_gate ;  src/c.txt --> c ;  src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { standardRig } from '../helpers/rig.ts';

test('a crashing rule writes reports/ERROR_<ts>.json with its stack and last log lines', () => {
  const rig = standardRig();
  try {
    rig.write('rules/squeeze.ts', rig.read('rules/squeeze.ts').replace('run(ctx) {', "run(ctx) { for (let i = 0; i < 250; i++) ctx.log('line ' + i); throw new Error('kaboom');"));
    const r = rig.run(['sq']);
    assert.equal(r.code, 1);
    const m = /error report (reports\/ERROR_\d{8}T\d{9}Z\.json)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const rep = JSON.parse(rig.read(m[1]!));
    assert.equal(rep.target, 'sq');
    assert.equal(rep.kind, 'rule-error');
    assert.match(rep.error, /Error: kaboom\n\s+at .*rules\/squeeze\.ts/);
    assert.equal(rep.log_tail.length, 200);
    assert.equal(rep.log_tail.at(-1), 'line 249');
    assert.deepEqual(rep.reasons, ['never built']);
  } finally { rig.cleanup(); }
});

test('failpack packs logs, failed gate reports, ERROR reports and a status snapshot', () => {
  const rig = standardRig();
  try {
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 100\nunrelated: 1\n');
    rig.write('rules/squeeze.ts', rig.read('rules/squeeze.ts').replace('run(ctx) {', "run(ctx) { ctx.log('about to fail'); throw new Error('kaboom');"));
    assert.equal(rig.run(['-k']).code, 1);
    const r = rig.run(['failpack']);
    assert.equal(r.code, 0, r.stderr);
    const m = /failpack: (reports\/rc1\/FAIL_\d{8}T\d{9}Z\.tgz) \(\d+ files; failed gates: g\)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const list = spawnSync('tar', ['tzf', path.join(rig.dir, m[1]!)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    assert.ok(list.includes('status.json'));
    assert.ok(list.includes('reports/g.json'));
    assert.ok(list.includes('logs/sq.log'));
    assert.ok(list.some((f) => /^reports\/ERROR_.*\.json$/.test(f)));
    const x = fs.mkdtempSync(path.join(rig.dir, '..', 'unpack-'));
    spawnSync('tar', ['xzf', path.join(rig.dir, m[1]!), '-C', x]);
    const status = JSON.parse(fs.readFileSync(path.join(x, 'status.json'), 'utf8'));
    assert.deepEqual(status.failed_gates, ['g']);
    assert.equal(status.targets.find((t: { name: string }) => t.name === 'sq').state, 'failed');
    fs.rmSync(x, { recursive: true, force: true });
  } finally { rig.cleanup(); }
});
