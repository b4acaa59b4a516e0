// overclar_ablation (docs/rc1.md): best-of-N selection over each pool scenario's
// candidate rollouts by the new reward with and without the over-clarification penalty
// α·min(c, cap) (lib/evaluation/ablation.ts: definitions and gates). On the POOL's scored
// rollouts (their scenarios have difficulty buckets from the balanced pool); the weights are the
// calibrated ones, β = reward.beta.
// Input groups: rollouts (the pool's rollouts JSONL), scores (scores.jsonl), weights
// (configs/weights.json). Output [0]: the report, reports/overclar_ablation.json.
import { relative } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import {
  REWARD_DEFINITIONS,
  overclarAblation,
  overclarSchema,
  readItems,
  readWeights,
  rewardSchema,
  statisticsSchema,
} from '../lib/evaluation/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'overclar_ablation',
  version: 2,
  params: z.object({
    reward: rewardSchema.pick({ beta: true }),
    overclar: overclarSchema,
    statistics: statisticsSchema,
  }),
  async run(ctx) {
    const rollouts = ctx.inputs('rollouts');
    const scores = ctx.input('scores');
    const weightsFile = ctx.input('weights');
    if (rollouts.length === 0)
      throw new RuleError(`${ctx.target}: the rollouts input group is empty (declare the pool's rollouts JSONL)`);
    const { items, failed } = await readItems(rollouts, scores, ctx.root);
    const unbucketed = items.filter((it) => it.difficulty === null).length;
    if (unbucketed > 0)
      throw new RuleError(
        `${ctx.target}: ${unbucketed} rollouts have no difficulty bucket: the ablation reads the balanced pool's rollouts`,
      );
    const { alpha, cap } = ctx.params.overclar;
    const res = overclarAblation(
      items,
      {
        weights: readWeights(weightsFile, relative(ctx.root, weightsFile)),
        penalty: { alpha, cap },
        beta: ctx.params.reward.beta,
      },
      ctx.params.overclar,
      ctx.params.statistics,
    );
    ctx.progress(1, 1);
    const r = res.report as {
      with_penalty: { overclar_rate: number };
      without_penalty: { overclar_rate: number };
      scenarios?: number;
    };
    return {
      checks: res.checks,
      report: { definitions_reward: REWARD_DEFINITIONS, failed_scores: failed.length, ...res.report },
      summary: `over-clarification rate ${r.without_penalty.overclar_rate.toFixed(4)} → ${r.with_penalty.overclar_rate.toFixed(4)} with the penalty`,
    };
  },
});
