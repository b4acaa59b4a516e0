// shadow_run (docs/rc1.md): the old score vs the new reward on
// the shadow set's scored rollouts, per scenario (lib/evaluation/shadow-run.ts: unit, figures,
// gates; reward.ts: the definitions). Split by task and by difficulty; the shadow scenarios'
// buckets come from the band rules over their difficulty metrics (shadow-buckets.ts). The
// splits are gated when shadow_run.gate_splits is true, else reported only.
// Args: tag (round1 | pre_run_check | …: names the report), reward_from: 'reward' (default:
// β = reward.beta, penalty on) or 'ppo' (the reward as the PPO run will use it: β =
// ppo.reward.beta, penalty iff ppo.use_overclar_penalty; declare the `ppo` param then).
// Input groups: rollouts (the shadow set's rollouts JSONL), scores (scores.jsonl), weights
// (configs/weights.json), metrics (the shadow set's difficulty metrics JSONL).
// Output [0]: the report, reports/shadow_run_<tag>.json.
import { relative } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import {
  REWARD_DEFINITIONS,
  bandsSchema,
  bucketsFromMetrics,
  dimensionsSchema,
  normalise,
  overclarSchema,
  ppoSchema,
  readItems,
  readWeights,
  rewardSchema,
  shadowRunSchema,
  shadowRun,
  statisticsSchema,
  waiveInconclusiveAgreement,
  withBuckets,
  type RewardSettings,
} from '../lib/evaluation/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'shadow_run',
  version: 2,
  params: z.object({
    reward: rewardSchema,
    overclar: overclarSchema,
    shadow_run: shadowRunSchema,
    statistics: statisticsSchema,
    difficulty: z.object({ bands: bandsSchema, dimensions: dimensionsSchema }).strict(),
    ppo: ppoSchema.optional(),
  }),
  async run(ctx) {
    const tag = ctx.args.tag;
    const from = ctx.args.reward_from ?? 'reward';
    if (typeof tag !== 'string' || tag === '')
      throw new RuleError(`${ctx.target}: args.tag must name the run (round1, pre_run_check, …)`);
    if (from !== 'reward' && from !== 'ppo')
      throw new RuleError(`${ctx.target}: args.reward_from must be 'reward' or 'ppo', got ${JSON.stringify(from)}`);
    const { reward, overclar, shadow_run: cfg, statistics, difficulty, ppo } = ctx.params;
    if (from === 'ppo' && !ppo)
      throw new RuleError(`${ctx.target}: args.reward_from is 'ppo': declare the param 'ppo' (configs/ppo_scale.yaml)`);

    const rollouts = ctx.inputs('rollouts');
    const scores = ctx.input('scores');
    const weightsFile = ctx.input('weights');
    const metrics = [ctx.input('metrics')];
    if (rollouts.length === 0)
      throw new RuleError(`${ctx.target}: the rollouts input group is empty (declare the shadow set's rollouts JSONL)`);
    const { items: raw, failed } = await readItems(rollouts, scores, ctx.root);
    const buckets = await bucketsFromMetrics(metrics[0]!, ctx.root, difficulty.bands, difficulty.dimensions);
    const items = withBuckets(raw, buckets);
    ctx.progress(1, 2, 'steps');

    const penaltyOn = from === 'ppo' ? ppo!.use_overclar_penalty : true;
    const settings: RewardSettings = {
      weights: readWeights(weightsFile, relative(ctx.root, weightsFile)),
      penalty: penaltyOn ? { alpha: overclar.alpha, cap: overclar.cap } : null,
      beta: from === 'ppo' ? ppo!.reward.beta : reward.beta,
    };
    const old = normalise(reward.old_weights);
    const res = shadowRun(items, old, settings, cfg, statistics);
    ctx.progress(2, 2, 'steps');
    // Outside prod, an inconclusive agreement check is waived visibly (see waiveInconclusiveAgreement).
    const checks = res.checks.map((c) => waiveInconclusiveAgreement(c, ctx.profile));
    const overall = res.report.overall as {
      spearman_old_new: number;
      success: { rank_corr_gain: number; new: { spearman: number } };
    };
    return {
      checks,
      report: {
        tag,
        reward_from:
          from === 'ppo'
            ? 'ppo (configs/ppo_scale.yaml: reward.beta, use_overclar_penalty)'
            : 'reward (configs/evaluation.yaml)',
        definitions: REWARD_DEFINITIONS,
        old_weights: old,
        new_weights: settings.weights,
        penalty: settings.penalty,
        beta: settings.beta,
        failed_scores: failed.length,
        ...res.report,
      },
      summary: `${tag}: ${String(res.report.scenarios)} scenarios, ρ(old, new) ${overall.spearman_old_new.toFixed(3)}, ρ(new, success) ${overall.success.new.spearman.toFixed(3)}, gain ${(100 * overall.success.rank_corr_gain).toFixed(1)} %`,
    };
  },
});
