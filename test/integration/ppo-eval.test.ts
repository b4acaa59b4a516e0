// The ppo_eval gate through the CLI, after real built-in runs (SFT, then tfjs PPO per seed):
//   data/raw/** --> shadow_set ------------------------------+
//   scenarios, weights --> sft --> train (3 seeds) ----------+--> ppo_eval (gate) --> reports/ppo_eval.json, reports/learning_curve.png
// A short run reports the table (SFT, each seed, the mean, four scripted baselines, the negative
// control), intervals, the KL curves, and a gate outcome that follows its checks; "PPO" runs that
// did not move from SFT (one step at lr 1e-12) fail on exactly the gains they do not have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { SHARED_RUN, trainedPpoRig } from './ppo-eval-rig.ts';

interface Check {
  name: string;
  value: number | null;
  pass: boolean;
  status: string;
}
interface Report {
  pass: boolean;
  checks: Check[];
  table: { policy: string }[];
  table_markdown: string;
  eval_set: { scenarios: number; items: { needs_clarification: number; clusters: number } };
  policies: { seeds: { seed: number; step: number }[]; baselines: string[] };
  kl: {
    curves: { seed: number; points: { step: number; kl_rollout: number; kl_post_update: number }[] }[];
    per_seed: { train_rollout_max: number; train_post_update_max: number }[];
  };
  negative_control: { needs_clarification_gain: { p_value: number } };
}

const NAMES = [
  'needs_clarification_success_gain_pp',
  'needs_clarification_success_gain_pp.vs_null_p95',
  'overclar_rate_relative_change',
  'avg_turns_change',
  'hard_qa_success_gain_pp',
  'kl_rollout_max_over_target',
  'kl_eval_over_target',
  'ppo_minus_best_baseline_success_pp',
  'needs_clarification_items',
  'seeds',
];

test('ppo_eval reports SFT, each seed, their mean, the scripted baselines and the negative control, with a gate that follows its checks', async () => {
  const rig = await trainedPpoRig(SHARED_RUN);
  try {
    const r = rig.run(['ppo_eval']);
    const rep = JSON.parse(rig.read('reports/ppo_eval.json')) as Report;
    const failed = rep.checks.filter((c) => c.status === 'fail');
    assert.equal(r.code, failed.length === 0 ? 0 : 2, r.stdout + r.stderr);
    assert.equal(rep.pass, failed.length === 0);
    for (const n of NAMES.filter((x) => x !== 'hard_qa_success_gain_pp'))
      assert.ok(
        rep.checks.some((c) => c.name === n),
        n,
      );
    assert.deepEqual(
      rep.table.map((t) => t.policy),
      [
        'SFT (reference)',
        'PPO seed 20250820',
        'PPO seed 20250821',
        'PPO seed 20250822',
        'PPO mean of 3 seeds',
        'baseline: always-answer',
        'baseline: tools-then-answer',
        'baseline: ask-first',
        'baseline: hand-rule',
      ],
    );
    assert.match(rep.table_markdown, /negative control/);
    assert.equal(rep.eval_set.scenarios, 490, '245 shadow scenarios + 245 under-specified twins');
    // The shadow set is stratified by the need for clarification: 73 of its 245 are under-specified renderings, beside the 245 twins.
    assert.equal(rep.eval_set.items.needs_clarification, 245 + 73);
    assert.ok(rep.eval_set.items.clusters <= 245, 'a shadow item and its twin share one source question');
    assert.deepEqual(
      rep.policies.seeds.map((s) => s.step),
      [12, 12, 12],
    );
    assert.deepEqual(
      rep.kl.curves.map((c) => c.points.length),
      [12, 12, 12],
    );
    // Step 1's batch comes from the SFT policy itself: rollout KL 0 (up to float32 rounding); the gate reads the largest rollout KL.
    for (const c of rep.kl.curves) assert.ok(c.points[0]!.kl_rollout < 1e-6, String(c.points[0]!.kl_rollout));
    const maxRollout = Math.max(...rep.kl.curves.flatMap((c) => c.points.map((p) => p.kl_rollout)));
    assert.ok(
      Math.abs(rep.checks.find((c) => c.name === 'kl_rollout_max_over_target')!.value! - maxRollout / 0.03) < 1e-5,
    );
    const png = PNG.sync.read(fs.readFileSync(path.join(rig.dir, 'reports/learning_curve.png')));
    assert.equal(png.width, 960);
    const hard = rep.checks.find((c) => c.name === 'hard_qa_success_gain_pp')!;
    assert.ok(hard.status === 'n/a' || hard.status === 'pass' || hard.status === 'fail');

    // PPO that never moved from SFT: nothing gained, and the negative control cannot tell it from SFT.
    rig.write(
      'configs/profiles/dev.yaml',
      rig
        .read('configs/profiles/dev.yaml')
        .replace(`steps: ${SHARED_RUN.steps}`, 'steps: 1')
        .replace(/lr: [0-9.e-]+/, 'lr: 1.0e-12'),
    );
    const same = rig.run(['ppo_eval']);
    assert.equal(same.code, 2, same.stdout + same.stderr);
    const rep2 = JSON.parse(rig.read('reports/ppo_eval.json')) as Report;
    const v = (n: string): Check => rep2.checks.find((c) => c.name === n)!;
    assert.ok(
      Math.abs(v('needs_clarification_success_gain_pp').value!) < 1,
      String(v('needs_clarification_success_gain_pp').value),
    );
    assert.equal(v('needs_clarification_success_gain_pp').pass, false);
    assert.equal(v('needs_clarification_success_gain_pp.vs_null_p95').pass, false);
    assert.ok(v('kl_rollout_max_over_target').value! < 0.01);
  } finally {
    rig.cleanup();
  }
});
