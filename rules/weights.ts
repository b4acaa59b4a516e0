// weights (docs/rc1.md): calibrates the reward weights on the pool's scored
// rollouts (lib/evaluation/calibration.ts states the objective, the loss scale and the gates) and
// writes them. Input groups: `rollouts` (the pool's rollouts JSONL: which scored items are the
// pool's), `scores` (the scores target: its scores.jsonl is read). Never the shadow set.
// Outputs, in order: [0] configs/weights.json (weights-file.ts format), [1] the gate's report,
// reports/calibration_report.json (per-fold metrics, bootstrap intervals, definitions).
// Params: reward.old_weights (the prior and baseline), calibration.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import {
  SCORE_DIMENSIONS,
  WEIGHTS_FILE_VERSION,
  calibrate,
  calibrationSchema,
  formatWeightsFile,
  normalise,
  readItems,
  rewardSchema,
  sha256File,
  statisticsSchema,
} from '../lib/evaluation/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'weights',
  version: 2,
  params: z.object({
    reward: rewardSchema.pick({ old_weights: true }),
    calibration: calibrationSchema,
    statistics: statisticsSchema,
  }),
  async run(ctx) {
    const rollouts = ctx.inputs('rollouts');
    const [scores, ...more] = ctx.inputs('scores');
    if (rollouts.length === 0 || !scores || more.length)
      throw new RuleError(
        `${ctx.target}: needs the pool's rollouts JSONL (group rollouts) and one scores.jsonl (group scores: target('scores', 'scores'))`,
      );
    const { items, failed } = await readItems(rollouts, scores, ctx.root);
    ctx.progress(1, 3, 'steps');
    const cfg = ctx.params.calibration;
    if (items.length < cfg.folds)
      throw new RuleError(
        `${ctx.target}: ${items.length} scored pool rollouts (${failed.length} failed), fewer than calibration.folds = ${cfg.folds}: build rollouts_pool and scores`,
      );
    const old = normalise(ctx.params.reward.old_weights);
    const t0 = performance.now();
    const out = calibrate(items, old, cfg, ctx.params.statistics, ctx.profile);
    ctx.log(
      `calibrated on ${items.length} pool rollouts (${failed.length} failed scores left out) in ${Math.round(performance.now() - t0)} ms`,
    );
    ctx.progress(2, 3, 'steps');

    const inputs = [...rollouts, scores].map((f) => [relative(ctx.root, f), sha256File(f)] as const);
    const path = ctx.output('weights');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(
      path,
      formatWeightsFile({
        version: WEIGHTS_FILE_VERSION,
        dimensions: [...SCORE_DIMENSIONS],
        weights: out.calibration.weights,
        old_weights: old,
        method: {
          solver: 'simplex-nnls (box-simplex QP) with an L2 prior toward old_weights',
          target: 'success (0/1)',
          row_weights: 'item weight',
          ...cfg,
        },
        n_items: items.length,
        sha256_of_inputs: Object.fromEntries(inputs),
      }),
    );
    ctx.progress(3, 3, 'steps');
    const w = out.calibration.weights;
    return {
      checks: out.checks,
      report: { ...out.report, failed_scores: failed.length, weights_file: ctx.outputPath('weights') },
      summary: `${items.length} pool rollouts; weights ${SCORE_DIMENSIONS.map((d) => `${d} ${w[d]!.toFixed(3)}`).join(', ')}`,
    };
  },
});
