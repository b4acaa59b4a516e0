// The schemas of configs/evaluation.yaml (top-level keys reward, overclar, shadow_run,
// calibration, preflight) and of configs/ppo_scale.yaml (ppo). Each evaluation rule declares
// only the keys it reads and validates them with these; unknown keys are errors. Value checks
// that a gate reports (steps ≥ 50 000, simulate false…) are NOT schema rules: a bad value there
// is a failed check with its value in the report, not a configuration error.
import { z } from 'zod';
import { DIMENSIONS } from '../scoring/types.ts';

const share = z.number().min(0).max(1);
const weightsByDimension = z
  .object(
    Object.fromEntries(DIMENSIONS.map((d) => [d, z.number().min(0)])) as Record<
      (typeof DIMENSIONS)[number],
      z.ZodNumber
    >,
  )
  .strict()
  .refine((w) => Object.values(w).some((v) => v > 0), { message: 'at least one weight must be positive' });

/** reward: the old score's fixed weights (normalised by their sum) and the difficulty factor's β. */
export const rewardSchema = z
  .object({
    old_weights: weightsByDimension,
    beta: z.number().min(0).max(1),
  })
  .strict();

/** overclar: the over-clarification penalty α·min(c, cap) and the ablation's thresholds. */
export const overclarSchema = z
  .object({
    alpha: z.number().min(0),
    cap: z.number().int().positive(),
    ablation: z
      .object({
        min_relative_drop: share,
        max_turns_increase: z.number().min(0),
        max_success_drop_pp: z.number().min(0),
        min_absolute_drop_pp: z.number().min(0),
      })
      .strict(),
  })
  .strict();

/** shadow_run: the thresholds of the shadow comparison, and which splits are gated. */
export const shadowRunSchema = z
  .object({
    min_spearman_old_new: z.number().min(-1).max(1),
    top_overlap: z.object({ fraction: z.number().gt(0).max(1), min: share }).strict(),
    top_overlap_reported: z.array(z.number().gt(0).max(1)),
    min_success_rank_corr_gain: z.number(),
    min_success_rank_corr: z.number().min(-1).max(1),
    gate_splits: z.boolean(),
  })
  .strict();

/**
 * statistics: the negative controls and intervals every comparison gate shares (shadow_run,
 * weights, overclar_ablation, ppo_eval): N seeded permutations of the labels (default 200; the real
 * statistic must exceed the null's 95th percentile), scenario-level bootstrap resamples and level.
 */
export const statisticsSchema = z
  .object({
    permutations: z.number().int().min(20).default(200),
    bootstrap_resamples: z.number().int().min(50).default(1000),
    level: z.number().gt(0).lt(1).default(0.95),
    seed: z.number().int(),
  })
  .strict();

/** calibration: the weights protocol (calibrateWeights options) and its gate thresholds. */
export const calibrationSchema = z
  .object({
    folds: z.number().int().min(2),
    resamples: z.number().int().positive(),
    seed: z.number().int(),
    l2: z.number().min(0),
    loss: z.enum(['sum', 'mean']),
    max_weight: z.number().gt(0).max(1),
    level: z.number().gt(0).lt(1),
    min_rank_corr_gain: z.number(),
    max_mae_change: z.number(),
    min_rank_corr: z.number().min(-1).max(1),
    max_single_dimension_agreement: share,
  })
  .strict()
  .refine((c) => c.max_weight * DIMENSIONS.length >= 1, {
    message: `max_weight × ${DIMENSIONS.length} dimensions must be ≥ 1`,
  });

/** preflight: thresholds of preflight_checks, and the gates each round must vouch for. */
export const preflightSchema = z
  .object({
    weights: z.object({ sum_tolerance: z.number().positive(), max_weight: z.number().gt(0).max(1) }).strict(),
    ppo: z
      .object({
        min_steps: z.number().int().positive(),
        target_kl: z.tuple([z.number(), z.number()]),
        min_seeds: z.number().int().positive(),
        finetune_method: z.string(),
      })
      .strict(),
    min_free_disk_gb: z.number().min(0),
    rounds: z.object({ round1: z.array(z.string()).min(1), round2: z.array(z.string()).min(1) }).strict(),
  })
  .strict();

const schedulePoint = z.object({ step: z.number().int().min(0), ratio: share }).strict();

/** ppo: the PPO run (docs/rc1.md, target preflight_checks and train). */
export const ppoSchema = z
  .object({
    simulate: z.boolean(),
    live_mode: z.boolean(),
    base_model: z.string(),
    seed_pool: z.string(),
    datasets: z.record(z.string(), share),
    steps: z.number().int().positive(),
    target_kl: z.number().positive(),
    seeds: z.array(z.number().int()),
    finetune: z
      .object({
        method: z.string(),
        /** The LoRA adapter an external trainer fits (method lora or qlora): rank, scaling, dropout, adapted modules. */
        lora: z
          .object({
            r: z.number().int().positive(),
            alpha: z.number().positive(),
            dropout: z.number().min(0).lt(1),
            target_modules: z.array(z.string().min(1)).min(1),
          })
          .strict()
          .optional(),
        /** QLoRA's quantisation of the frozen base model (bitsandbytes): bits, quant type, double quantisation, compute dtype. */
        qlora: z
          .object({
            bits: z.union([z.literal(4), z.literal(8)]),
            quant_type: z.enum(['nf4', 'fp4']),
            double_quant: z.boolean(),
            compute_dtype: z.enum(['bfloat16', 'float16', 'float32']),
          })
          .strict()
          .optional(),
      })
      .strict(),
    use_overclar_penalty: z.boolean(),
    lr: z.number().positive(),
    clip: z.number().positive(),
    kl_coef: z.number().min(0),
    batch: z.number().int().positive(),
    rollout_len: z.number().int().positive(),
    priority_sampling: z
      .object({
        enable: z.boolean(),
        by_difficulty: z.object({ easy: share, medium: share, hard: share }).strict(),
        low_perf_cap: share,
        seed_ratio_schedule: z
          .array(schedulePoint)
          .min(1)
          .refine((s) => s[0]!.step === 0 && s.every((p, i) => i === 0 || p.step > s[i - 1]!.step), {
            message: 'steps must start at 0 and increase',
          }),
      })
      .strict(),
    reward: z.object({ beta: z.number().min(0).max(1) }).strict(),
  })
  .strict();

export type RewardConfig = z.infer<typeof rewardSchema>;
export type OverclarConfig = z.infer<typeof overclarSchema>;
export type ShadowRunConfig = z.infer<typeof shadowRunSchema>;
export type StatisticsConfig = z.infer<typeof statisticsSchema>;
export type CalibrationConfig = z.infer<typeof calibrationSchema>;
export type PreflightConfig = z.infer<typeof preflightSchema>;
export type PpoConfig = z.infer<typeof ppoSchema>;
