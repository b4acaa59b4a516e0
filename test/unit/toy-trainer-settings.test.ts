// The reference trainer (examples/trainers/toy_trainer.py) honours the settings the command
// contract requires of a trainer: train.seed (the same seed gives the same weights, another seed
// other weights) and train.ppo.target_kl (an update never takes the batch's KL to the reference
// above 1.5 x target_kl; the adaptive coefficient moves toward the target). Driven through
// the command engine directly, as the engine runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { trainConfigSchema, type TrainConfig } from '../../lib/train/config.ts';
import { commandEngine } from '../../lib/train/engines/command.ts';
import { REPO } from '../helpers/rig.ts';
import { makeContext, trainConfig } from '../helpers/command-fixtures.ts';

const TOY = path.join(REPO, 'examples/trainers/toy_trainer.py');

async function toy(
  over: (c: TrainConfig) => object,
): Promise<{ weights: string; kl: number[]; coef: number[]; log: string[] }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-toy-'));
  try {
    const base = trainConfig(8, ['python3', TOY], 8);
    const run = makeContext(root, trainConfigSchema.parse({ ...base, ...over(base) }));
    const res = await commandEngine.run(run.ctx);
    assert.equal(res.finalStep, 8);
    return {
      weights: fs.readFileSync(path.join(res.finalCheckpoint!, 'weights.json'), 'utf8'),
      kl: run.steps.map((m) => m.kl ?? NaN),
      coef: run.steps.map((m) => m.kl_coef ?? NaN),
      log: run.log,
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

test('the toy trainer seeds its run from train.seed: the same seed gives the same weights, another seed other weights', async () => {
  const a = await toy((c) => ({ seed: c.seed }));
  const b = await toy((c) => ({ seed: c.seed }));
  const other = await toy((c) => ({ seed: c.seed + 1 }));
  assert.equal(a.weights, b.weights);
  assert.notEqual(a.weights, other.weights);
  assert.match(a.log.join('\n'), /toy_trainer: fresh start, seed 7 /);
  assert.match(a.log.join('\n'), /toy_trainer: ignores ppo\.base_model, ppo\.finetune/);
});

test('the toy trainer holds KL to the reference near train.ppo.target_kl: a tight target keeps it within 2 x target (1.5 x on the batch each update is checked on) while a loose one grows', async () => {
  const ppo = (c: TrainConfig, target: number) => ({
    ppo: { ...c.ppo, target_kl: target, adaptive_kl: true, kl_horizon: 16 },
  });
  const loose = await toy((c) => ppo(c, 1));
  const tight = await toy((c) => ppo(c, 0.002));
  assert.ok(Math.max(...loose.kl) > 0.01, `the loose run's KL grows (${loose.kl.join(', ')})`);
  assert.ok(Math.max(...tight.kl) <= 2 * 0.002, `the tight run's KL stays near its target (${tight.kl.join(', ')})`);
  // The coefficient moves toward the target: up after a step whose KL was above it, down after one below.
  for (const r of [tight, loose]) {
    const target = r === tight ? 0.002 : 1;
    for (let i = 1; i < r.coef.length; i++) {
      assert.equal(
        Math.sign(r.coef[i]! - r.coef[i - 1]!),
        Math.sign(r.kl[i - 1]! - target),
        `step ${i + 1}: kl ${r.kl[i - 1]} vs target ${target}, coefficient ${r.coef[i - 1]} → ${r.coef[i]}`,
      );
    }
  }
});
