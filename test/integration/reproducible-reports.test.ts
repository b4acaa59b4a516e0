// Reports others hash are the same wherever they are built: the preflight_checks gate, built
// through the CLI in two workspaces at different paths, writes byte-identical reports (the free
// disk figure goes to the rule's log, not the report), and best/eval.json names its checkpoint
// relative to the checkpoint dir, not by absolute path.
//   data/weights.json, configs/ppo_scale.yaml --> preflight_checks (gate)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO, TestRig } from '../helpers/rig.ts';
import { shippedConfig, writeWeights } from '../helpers/evaluation-fixtures.ts';
import { shadowEvalCallback } from '../../lib/train/callbacks.ts';

const PIPELINE = `import { definePipeline, defineGate } from 'rc1-build';
export default definePipeline({ profiles: ['dev', 'prod'], defaultProfile: 'dev', targets: [defineGate({ name: 'preflight_checks', rule: 'rules/preflight_checks.ts',
  inputs: { weights: 'data/weights.json', ppo_config: 'configs/ppo_scale.yaml' },
  outputs: ['reports/preflight/checks.json'], report: 'reports/preflight/checks.json', params: ['ppo', 'preflight', 'reward', 'pool'] })] });
`;
const WEIGHTS = {
  correctness: 0.5,
  reasoning: 0.3,
  clarity: 0.05,
  conciseness: 0.05,
  clarification: 0.05,
  tool_use: 0.05,
  format_safety: 0,
};

function preflightRig(): TestRig {
  const cfg = shippedConfig();
  const rig = new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/preflight_checks.ts': fs.readFileSync(path.join(REPO, 'rules/preflight_checks.ts'), 'utf8'),
    'configs/ppo_scale.yaml': fs.readFileSync(path.join(REPO, 'configs/ppo_scale.yaml'), 'utf8'),
    'configs/default.yaml': stringify({
      preflight: { weights: cfg.preflight.weights, ppo: cfg.preflight.ppo, min_free_disk_gb: 0.001 },
      reward: { beta: cfg.reward.beta },
      pool: { mix: cfg.pool.mix },
    }),
  });
  rig.withRc1Lib();
  writeWeights(path.join(rig.dir, 'data/weights.json'), WEIGHTS);
  return rig;
}

test('preflight_checks built in two workspaces at different paths writes byte-identical reports, the free disk figure only in its log', () => {
  const a = preflightRig();
  const b = preflightRig();
  try {
    for (const rig of [a, b]) {
      const r = rig.run(['-v'], { RUN_MODE: 'prod' });
      assert.equal(r.code, 0, r.stdout + r.stderr);
    }
    const report = a.read('reports/preflight/checks.json');
    assert.equal(report, b.read('reports/preflight/checks.json'));
    assert.ok(!report.includes(a.dir) && !report.includes(os.tmpdir()), 'no absolute path in the report');
    assert.match(report, /"DISK_OK >0.001GB"/);
    const disk = parse(report).checks.find((c: { name: string }) => c.name === 'disk.free_gb_above_min');
    assert.deepEqual([disk.value, disk.op, disk.threshold, disk.status], [true, '==', true, 'pass']);
    assert.match(
      a.read('logs/preflight_checks.log'),
      /^disk: \d+\.\d GiB free on the workspace's filesystem \(preflight\.min_free_disk_gb 0\.001\)$/m,
    );
  } finally {
    a.cleanup();
    b.cleanup();
  }
});

test('best/eval.json names the evaluated checkpoint relative to the checkpoint dir', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-best-eval-'));
  try {
    const ck = path.join(dir, 'checkpoints');
    const step = path.join(ck, 'step_00002');
    fs.mkdirSync(step, { recursive: true });
    fs.writeFileSync(path.join(step, 'model.bin'), 'weights');
    const cb = shadowEvalCallback({
      every: 1,
      totalSteps: 2,
      checkpointDir: ck,
      emit: () => {},
      log: () => {},
      evaluate: async (d, s) => ({
        step: s,
        reward: 0.5,
        success: 0.5,
        overclar_rate: 0.1,
        avg_turns: 2,
        episodes: 4,
        dir: d,
        details: { n: 4 },
      }),
    });
    await cb.onCheckpoint!({ step: 2, dir: step, meta: { step: 2, files: {}, config_hash: 'x' } } as never);
    const text = fs.readFileSync(path.join(ck, 'best', 'eval.json'), 'utf8');
    assert.ok(!text.includes(dir), text);
    assert.equal(JSON.parse(text).result.dir, 'step_00002');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
