// The ppo_eval gate through the CLI, after a real built-in (tfjs PPO) training run:
//   data/raw/** --> shadow_set --+
//   scenarios, weights --> train --+--> ppo_eval (gate) --> reports/ppo_eval.json, reports/learning_curve.png
// A trained policy passes, with the comparison by task and by difficulty; a "trained" policy that
// is the untrained one (one step at lr 1e-12) fails on exactly the gains it does not have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { ppoEvalRig } from './ppo-eval-rig.ts';

interface Check { name: string; value: number | null; pass: boolean; status: string }
interface Report { pass: boolean; checks: Check[]; by_task: Record<string, unknown>; by_difficulty: Record<string, unknown>; eval_set: { scenarios: number; notes: string[] }; policies: { trained: { step: number }; reference: { checkpoint: string; step: number } } }

test('ppo_eval passes on a real dev-profile training run, reports by task and difficulty, and draws the learning curve', async () => {
  const rig = await ppoEvalRig({});
  try {
    const r = rig.run(['ppo_eval']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /gate +ppo_eval ok: 6 passed/);
    const rep = JSON.parse(rig.read('reports/ppo_eval.json')) as Report;
    assert.equal(rep.pass, true);
    assert.deepEqual(rep.checks.map((c) => c.name), [
      'needs_clarification_success_gain_pp', 'overclar_rate_relative_change', 'avg_turns_change', 'hard_qa_success_gain_pp', 'needs_clarification_items', 'hard_qa_items',
    ]);
    const v = (n: string): number => rep.checks.find((c) => c.name === n)!.value!;
    assert.ok(v('needs_clarification_success_gain_pp') >= 5 && v('hard_qa_success_gain_pp') >= 5);
    assert.ok(v('overclar_rate_relative_change') <= -0.2 && v('avg_turns_change') <= 0);
    assert.deepEqual(Object.keys(rep.by_task), ['gsm8k', 'hotpotqa', 'strategyqa']);
    assert.deepEqual(Object.keys(rep.by_difficulty).sort(), ['easy', 'hard', 'medium']);
    assert.equal(rep.eval_set.scenarios, 490, '245 shadow scenarios + 245 under-specified twins');
    assert.equal(v('needs_clarification_items'), 245, 'every twin, counted once however many episodes it had');
    assert.equal(rep.policies.trained.step, 200, 'the dev profile\'s ppo.steps');
    assert.deepEqual([rep.policies.reference.checkpoint, rep.policies.reference.step], ['initial', 0]);
    const png = PNG.sync.read(fs.readFileSync(path.join(rig.dir, 'reports/learning_curve.png')));
    assert.equal(png.width, 960);
    assert.ok(png.height > 800);
  } finally { rig.cleanup(); }
});

test('ppo_eval fails on the missing gains when the "trained" policy is the untrained one', async () => {
  const rig = await ppoEvalRig({ steps: 1, lr: 1e-12 });
  try {
    const r = rig.run(['ppo_eval']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /GATE FAILED ppo_eval/);
    const rep = JSON.parse(rig.read('reports/ppo_eval.json')) as Report;
    assert.equal(rep.pass, false);
    const failed = rep.checks.filter((c) => !c.pass);
    assert.deepEqual(failed.map((c) => [c.name, c.value]), [
      ['needs_clarification_success_gain_pp', 0], ['overclar_rate_relative_change', 0], ['hard_qa_success_gain_pp', 0],
    ]);
    assert.equal(rep.checks.find((c) => c.name === 'avg_turns_change')!.pass, true, 'turns did not go up either');
  } finally { rig.cleanup(); }
});
