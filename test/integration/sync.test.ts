// `rc1-build sync` writes the seeds' SYNC hand-off package after a dev build; `audit --sync`
// checks the hashes it lists on the receiving side.
//   templates/pack/*.json --> render --> train (metrics: out/metrics.jsonl) --> gate (dev: waived)
//   data/balanced.jsonl (missing, another team's) --> later (not built)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRig } from '../helpers/rig.ts';

const CONCAT = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'concat', version: 1, run(ctx) {
  fs.writeFileSync(ctx.output(ctx.outputs[0]), ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join(''));
}});
`;
const TRAIN = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'train', version: 1, run(ctx) {
  const lines = Array.from({ length: 25 }, (_, i) => JSON.stringify({ step: i + 1, loss: 1 / (i + 1) })).join('\\n') + '\\n';
  fs.writeFileSync(ctx.output('out/metrics.jsonl'), lines);
  fs.writeFileSync(ctx.output('out/model.txt'), 'model of ' + fs.readFileSync(ctx.inputs('src')[0], 'utf8').length + ' bytes\\n');
}});
`;
// In dev the live check is waived (with the profile as the reason); in prod it applies.
const GATE = `import { defineRule, check, waive } from 'rc1-build';
export default defineRule({ name: 'eval_gate', version: 1, run(ctx) {
  const live = check('live_samples', 0, '>=', 1, 'run the live judge (RUN_MODE=prod) before training');
  return { checks: [check('size', 3, '>=', 1), ctx.profile === 'dev' ? waive(live, 'profile dev') : live] };
}});
`;
const PIPELINE = `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
export default definePipeline({
  name: 'mini', defaultTargets: ['gate'], profiles: ['dev', 'prod'], defaultProfile: 'dev',
  sync: { from: 'cursor', peers: [
    { name: 'gemini', provides: [{ name: 'template_pack', path: 'templates/pack/', desc: 'six templates per task' }, { name: 'unused', path: 'elsewhere/', desc: 'nobody reads it' }] },
    { name: 'ops', provides: [] },
  ] },
  targets: [
    defineTarget({ name: 'render', rule: 'rules/concat.ts', inputs: { src: 'templates/pack/*.json' }, outputs: ['out/render.txt'] }),
    defineTarget({ name: 'train', rule: 'rules/train.ts', inputs: { src: target('render') }, outputs: ['out/metrics.jsonl', 'out/model.txt'], metrics: ['out/metrics.jsonl'] }),
    defineGate({ name: 'gate', rule: 'rules/gate.ts', inputs: { model: target('train') }, outputs: ['reports/gate.json'], report: 'reports/gate.json' }),
    defineTarget({ name: 'later', rule: 'rules/concat.ts', inputs: { src: 'data/balanced.jsonl' }, outputs: ['out/later.txt'] }),
  ],
});
`;

interface Pkg {
  from: string;
  round: number;
  need_from_gemini: { name: string; path: string; desc: string }[];
  need_from_ops: unknown[];
  artifacts_produced: { name: string; path: string; sha256: string; target: string }[];
  risks_blockers: string[];
  notes: string;
}

test('sync after a dev build lists every artifact with the manifest sha256 and the waived checks as risks; audit --sync fails on a tampered file', () => {
  const rig = new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/concat.ts': CONCAT,
    'rules/train.ts': TRAIN,
    'rules/gate.ts': GATE,
    'templates/pack/a.json': '{"t": 1}\n',
    'templates/pack/b.json': '{"t": 2}\n',
  });
  try {
    const b = rig.run(['-j', '1']);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    const s = rig.run(['sync']);
    assert.equal(s.code, 0, s.stderr);
    assert.match(
      s.stdout,
      /^sync: reports\/sync\/SYNC_round1\.json · round 1 · 4 artifacts · need_from_gemini 2, need_from_ops 0 · 1 risks\/blockers\n$/,
    );
    const pkg = JSON.parse(rig.read('reports/sync/SYNC_round1.json')) as Pkg;
    assert.deepEqual(Object.keys(pkg), [
      'from',
      'round',
      'need_from_gemini',
      'need_from_ops',
      'artifacts_produced',
      'risks_blockers',
      'notes',
    ]);
    assert.equal(pkg.from, 'cursor');
    assert.equal(pkg.round, 1);
    // the template pack is the peer's; the missing balanced pool is needed from the first peer
    assert.deepEqual(pkg.need_from_gemini, [
      { name: 'template_pack', path: 'templates/pack/', desc: 'six templates per task' },
      {
        name: 'balanced',
        path: 'data/balanced.jsonl',
        desc: 'declared input of later; missing here and no peer declares it',
      },
    ]);
    assert.deepEqual(pkg.need_from_ops, []);
    const manifest = JSON.parse(rig.read('reports/build/manifest.json')) as {
      artifacts: { path: string; sha256: string; target: string }[];
    };
    assert.deepEqual(
      pkg.artifacts_produced.map((a) => [a.path, a.sha256, a.target]),
      manifest.artifacts.map((a) => [a.path, a.sha256, a.target]),
    );
    assert.deepEqual(
      pkg.artifacts_produced.map((a) => a.path),
      ['out/metrics.jsonl', 'out/model.txt', 'out/render.txt', 'reports/gate.json'],
    );
    assert.deepEqual(pkg.risks_blockers, [
      'gate gate: live_samples WAIVED (profile dev; 0 >= 1) — hint: run the live judge (RUN_MODE=prod) before training · reports/gate.json',
    ]);
    assert.match(
      pkg.notes,
      /^mini, profile dev, built at no git commit; 4 artifacts from 3 targets; gates: 1 passed, 0 failed, 0 not built \(of 1\); last run 1 \(rc1-build -j 1, exit 0\) at /,
    );

    // the next round by default; --verbose adds the metrics tail and a two-level tree
    const v = rig.run(['sync', '--verbose']);
    assert.equal(v.code, 0, v.stderr);
    assert.ok(rig.exists('reports/sync/SYNC_round2.json'));
    assert.match(v.stdout, /\n== out\/metrics\.jsonl \(last 20 lines\)\n\{"step":6,"loss":0\.16666666666666666\}\n/);
    assert.match(v.stdout, /\{"step":25,"loss":0\.04\}\n\n== tree -L 2\n\.\n/);
    assert.match(v.stdout, /\n├── out\/\n│   ├── metrics\.jsonl\n/);
    assert.doesNotMatch(v.stdout, /\.rc1|node_modules/);
    assert.equal(rig.run(['sync', '--round', '7']).code, 0);
    assert.ok(rig.exists('reports/sync/SYNC_round7.json'));

    // the receiving side checks the listed hashes
    const ok = rig.run(['audit', '--sync', 'reports/sync/SYNC_round1.json']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(
      ok.stdout,
      /^audit --sync: reports\/sync\/SYNC_round1\.json \(from cursor, round 1\): 4 of 4 listed artifacts match\n$/,
    );
    rig.write('out/model.txt', 'a different model\n');
    const bad = rig.run(['audit', '--sync', 'reports/sync/SYNC_round1.json']);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /^MODIFIED out\/model\.txt \(from train\): listed [0-9a-f]{12}, here [0-9a-f]{12}\n/);
    assert.match(bad.stdout, /3 of 4 listed artifacts match, 1 do not\n$/);
    const j = JSON.parse(rig.run(['audit', '--sync', 'reports/sync/SYNC_round1.json', '--json']).stdout) as {
      ok: boolean;
      problems: { path: string }[];
    };
    assert.deepEqual([j.ok, j.problems.map((p) => p.path)], [false, ['out/model.txt']]);

    // a file outside the contract is a usage error naming the field
    rig.write('bad.json', JSON.stringify({ ...pkg, extra: 1, round: 0 }));
    const inv = rig.run(['audit', '--sync', 'bad.json']);
    assert.equal(inv.code, 64);
    assert.match(inv.stderr, /bad\.json: round: /);
    assert.match(inv.stderr, /bad\.json: extra: not a key of the SYNC contract/);
  } finally {
    rig.cleanup();
  }
});

test('sync in a pipeline that declares no hand-off is a usage error that says how to declare one', () => {
  const rig = new TestRig({
    'rc1.build.ts': PIPELINE.replace(/ {2}sync: \{[^]*?\n {2}\] \},\n/, ''),
    'rules/concat.ts': CONCAT,
    'rules/train.ts': TRAIN,
    'rules/gate.ts': GATE,
    'templates/pack/a.json': '{"t": 1}\n',
  });
  try {
    const s = rig.run(['sync']);
    assert.equal(s.code, 64, s.stdout + s.stderr);
    assert.match(
      s.stderr,
      /this pipeline declares no sync hand-off\n {2}hint: declare it in the pipeline: definePipeline\(\{ sync:/,
    );
  } finally {
    rig.cleanup();
  }
});
