// What a failed build leaves behind for diagnosis: reports/ERROR_<ts>.json for a crashed rule,
// and `rc1-build failpack` packing logs and gate reports into a .tgz.
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
    rig.write(
      'rules/squeeze.ts',
      rig
        .read('rules/squeeze.ts')
        .replace(
          'run(ctx) {',
          "run(ctx) { for (let i = 0; i < 250; i++) ctx.log('line ' + i); throw new Error('kaboom');",
        ),
    );
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
  } finally {
    rig.cleanup();
  }
});

test('failpack packs logs, failed gate reports, ERROR reports and a status snapshot', () => {
  const rig = standardRig();
  try {
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 100\nunrelated: 1\n');
    rig.write(
      'rules/squeeze.ts',
      rig
        .read('rules/squeeze.ts')
        .replace('run(ctx) {', "run(ctx) { ctx.log('about to fail'); throw new Error('kaboom');"),
    );
    assert.equal(rig.run(['-k']).code, 1);
    const r = rig.run(['failpack']);
    assert.equal(r.code, 0, r.stderr);
    const m = /failpack: (reports\/build\/FAIL_\d{8}T\d{9}Z\.tgz) \(\d+ files; failed gates: g\)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const list = spawnSync('tar', ['tzf', path.join(rig.dir, m[1]!)], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
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
  } finally {
    rig.cleanup();
  }
});

test("an error carrying the expected-error marker (expectedError(e), a rule's own ExpectedError subclass) prints its message alone; any other error keeps its stack", () => {
  const rig = standardRig();
  try {
    const squeeze = rig.read('rules/squeeze.ts');
    const marked = (body: string): string =>
      squeeze
        .replace(
          "from 'rc1-build';",
          "from 'rc1-build';\nimport { ExpectedError, expectedError } from 'rc1-build';\nclass RowError extends ExpectedError { override name = 'RowError'; }",
        )
        .replace('run(ctx) {', `run(ctx) { ${body}`);
    const failure = (body: string): { stdout: string; kind: string; error: string } => {
      rig.write('rules/squeeze.ts', marked(body));
      const r = rig.run(['sq']);
      assert.equal(r.code, 1);
      const m = /error report (reports\/ERROR_\d{8}T\d{9}Z\.json)/.exec(r.stdout);
      assert.ok(m, r.stdout);
      const rep = JSON.parse(rig.read(m[1]!)) as { kind: string; error: string };
      fs.rmSync(path.join(rig.dir, m[1]!));
      return { stdout: r.stdout, ...rep };
    };
    let f = failure('throw expectedError(new Error(\'src/w.txt:3: field x: expected a number, got "a"\'));');
    assert.match(f.stdout, /FAILED +sq: src\/w\.txt:3: field x: expected a number/);
    assert.equal(f.kind, 'contract-error');
    assert.doesNotMatch(f.error, /\n\s+at /, 'an expected error has no stack');
    f = failure("throw new RowError('src/w.txt:4: field y: expected a string');");
    assert.match(f.stdout, /FAILED +sq: src\/w\.txt:4: field y: expected a string/);
    assert.equal(f.kind, 'contract-error');
    assert.doesNotMatch(f.error, /\n\s+at /);
    f = failure("class Plain extends Error { override name = 'DataError'; } throw new Plain('no marker');");
    assert.equal(f.kind, 'rule-error', 'an error without the marker is a crash, whatever its class name');
    assert.match(f.error, /no marker\n\s+at .*rules\/squeeze\.ts/);
  } finally {
    rig.cleanup();
  }
});
