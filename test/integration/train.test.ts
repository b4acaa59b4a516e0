// The train target through the CLI, in a workspace that declares only `train` (plain-file inputs,
// the repository's rule and configs, small sizes in the dev profile):
//   reports/preflight/round2_pass.json + balanced pool + configs/weights.json --> train
//     --> checkpoints/rc1/seed_<seed>/{step_XXXXX, latest, best, initial} (one run per seed), logs/train.log,
//         reports/metrics.jsonl, reports/config_effective.yaml
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROUND2_FAIL, SMALL, trainWorkspace } from '../helpers/train-fixtures.ts';

const sha = (p: string): string => createHash('sha256').update(fs.readFileSync(p)).digest('hex');

test('train refuses to start when round2_pass.json says pass: false, and when it is missing', () => {
  const failing = trainWorkspace(ROUND2_FAIL);
  const missing = trainWorkspace(null);
  try {
    const r = failing.run(['train']);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout + r.stderr,
      /train refuses to start: reports\/preflight\/round2_pass\.json says "pass": false \(failed: not_simulated\.cache_hit_rate\)/,
    );
    assert.equal(failing.exists('.rc1/state/train/checkpoints'), false);
    const m = missing.run(['train']);
    assert.equal(m.code, 1);
    assert.match(m.stdout + m.stderr, /reports\/preflight\/round2_pass\.json/);
    assert.equal(missing.exists('checkpoints/rc1'), false);
  } finally {
    failing.cleanup();
    missing.cleanup();
  }
});

test('a dev build trains and writes checkpoints, the log, every-field metrics and an effective config with secrets redacted', () => {
  const rig = trainWorkspace();
  const secret = 'sk-very-secret-123';
  try {
    rig.write(
      'configs/profiles/dev.yaml',
      JSON.stringify({
        ...SMALL,
        train: {
          ...SMALL.train,
          command: {
            argv: ['python3', 'trainer.py'],
            cwd: '.',
            env: { HF_TOKEN: 'hf_abcdefgh12345', NOTE: `uses ${secret} inside` },
            grace_s: 5,
            poll_ms: 500,
          },
        },
      }),
    );
    const r = rig.run(['train'], { TRAIN_SECRET_TOKEN: secret });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /trained to step 6 \(tfjs\/wasm, ppo\)/);
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/seed_11/latest')), 'step_00006');
    assert.equal(
      fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/latest')),
      'seed_11/latest',
      "the first seed's latest, for export_gguf",
    );
    for (const d of ['latest', 'best', 'initial', 'step_00004'])
      assert.ok(rig.exists(`checkpoints/rc1/seed_11/${d}/model.bin`), d);
    assert.equal(rig.exists('checkpoints/rc1/seed_11/step_00002'), false, 'keep_last 2 rotated step_00002 away');
    const meta = JSON.parse(rig.read('checkpoints/rc1/latest/checkpoint.json'));
    assert.equal(meta.step, 6);
    assert.deepEqual(Object.keys(meta.files).sort(), ['model.bin', 'model.json', 'optimizer.bin', 'reference.bin']);
    const lines = rig
      .read('reports/metrics.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.step),
      [1, 2, 3, 4, 5, 6],
    );
    for (const l of lines)
      assert.deepEqual(Object.keys(l).sort(), [
        'backend',
        'engine',
        'entropy',
        'env',
        'episode_len',
        'kl',
        'kl_coef',
        'kl_engaged',
        'kl_rollout',
        'loss',
        'lr',
        'reward',
        'seed',
        'seed_ratio',
        'step',
        'strategy',
        'success',
        'throughput',
        'time',
        'updates_per_s',
      ]);
    assert.match(rig.read('logs/train.log'), /env simulated-dialogue-v3 \(a simulation built from the data\)/);
    const eff = rig.read('reports/config_effective.yaml');
    assert.match(eff, /HF_TOKEN: "\*\*\*"/);
    assert.match(eff, /NOTE: uses \*\*\* inside/);
    assert.match(eff, /steps: 6/);
    for (const f of ['reports/config_effective.yaml', 'logs/train.log', 'reports/metrics.jsonl'])
      assert.equal(rig.read(f).includes(secret), false, f);
    assert.equal(rig.read('reports/config_effective.yaml').includes('hf_abcdefgh12345'), false);
    const again = rig.run(['train'], { TRAIN_SECRET_TOKEN: 'another-rotated-secret' });
    assert.equal(again.code, 0);
    assert.match(again.stdout, /0 ran/);
  } finally {
    rig.cleanup();
  }
});

test('three seeds: SIGKILL during the second seed, then a rebuild keeps the first, resumes the second from its latest and trains the third, each byte-identical to an uninterrupted run', async () => {
  const SEEDS = [11, 12, 13];
  const sizes = {
    ...SMALL,
    ppo: { ...SMALL.ppo, steps: 10, seeds: SEEDS },
    train: { ...SMALL.train, checkpoint: { every: 2, keep_last: 2 } },
  };
  const straight = trainWorkspace();
  const killed = trainWorkspace();
  try {
    for (const rig of [straight, killed]) rig.write('configs/profiles/dev.yaml', JSON.stringify(sizes));
    assert.equal(straight.run(['train']).code, 0);
    const child = killed.spawn(['train']);
    const metrics = path.join(killed.dir, '.rc1/state/train/seed_12/metrics.jsonl');
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const n = fs.existsSync(metrics) ? fs.readFileSync(metrics, 'utf8').split('\n').filter(Boolean).length : 0;
      if (n >= 3) break; // seven steps left before the seed ends: room for a slow kill
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const latest = fs.readlinkSync(path.join(killed.dir, '.rc1/state/train/seed_12/checkpoints/rc1/latest'));
    assert.ok(Number(latest.slice(5)) >= 2 && Number(latest.slice(5)) < 10, latest);
    assert.equal(
      fs.existsSync(path.join(killed.dir, '.rc1/state/train/seed_13')),
      false,
      'the third seed had not started',
    );
    const r = killed.run(['train', '-v']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\[seed 11\] the run in .* already completed/);
    assert.match(r.stdout, new RegExp(`\\[seed 12\\] resuming the interrupted run from .*${latest}`));
    const steps = killed
      .read('reports/metrics.jsonl')
      .trim()
      .split('\n')
      .map((l) => {
        const m = JSON.parse(l) as { seed: number; step: number };
        return `${m.seed}:${m.step}`;
      });
    assert.deepEqual(
      steps,
      SEEDS.flatMap((s) => Array.from({ length: 10 }, (_, i) => `${s}:${i + 1}`)),
    );
    for (const s of SEEDS) {
      for (const f of ['model.bin', 'optimizer.bin'])
        assert.equal(
          sha(path.join(killed.dir, `checkpoints/rc1/seed_${s}/latest`, f)),
          sha(path.join(straight.dir, `checkpoints/rc1/seed_${s}/latest`, f)),
          `seed ${s} ${f}`,
        );
    }
    assert.notEqual(
      sha(path.join(straight.dir, 'checkpoints/rc1/seed_11/latest/model.bin')),
      sha(path.join(straight.dir, 'checkpoints/rc1/seed_12/latest/model.bin')),
      'the seeds are different runs',
    );
  } finally {
    straight.cleanup();
    killed.cleanup();
  }
});

test('the prod profile refuses the built-in engine: it trains in a simulated environment', () => {
  const rig = trainWorkspace();
  try {
    const r = rig.run(['train'], { RUN_MODE: 'prod' });
    assert.equal(r.code, 1);
    assert.match(
      r.stdout + r.stderr,
      /the built-in tfjs engine trains in a simulated dialogue environment.*set train\.engine: command/,
    );
  } finally {
    rig.cleanup();
  }
});
