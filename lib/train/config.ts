// The train config. Two shapes:
//   TrainConfig      the EFFECTIVE config an engine gets (trainConfigSchema; reports/
//                    config_effective.yaml shows it): every knob of a run in one frozen tree
//   the sections it is resolved from (resolveTrainConfig), so that no value has two homes:
//     ppo:           configs/ppo_scale.yaml (lib/evaluation ppoSchema) — what the preflight
//                    vouches for: steps, lr, clip, kl_coef, target_kl, batch, rollout_len, seeds
//                    (one run per seed), use_overclar_penalty, priority_sampling, reward.beta
//     overclar:      configs/evaluation.yaml alpha, cap — the penalty the ablation evaluated
//     train:         configs/train.yaml (trainSectionSchema) — everything else: engine, strategy,
//                    the PPO internals (epochs, GAE, value / entropy coefficients, KL controller),
//                    dpo, env, model, tfjs backend, checkpoints, eval, the command engine
// configHash is the sha256 of the effective config's canonical JSON; every checkpoint records it
// so a resume under a different config is refused.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ppoSchema as ppoSectionSchema, type PpoConfig } from '../evaluation/config.ts';
import { canonicalJson } from 'rc1-build';

const unit = z.number().min(0).max(1);
const posInt = z.number().int().positive();

export const ENGINE_NAMES = ['tfjs', 'command'] as const;
export const STRATEGY_NAMES = ['ppo', 'dpo'] as const;
export const BACKEND_CHOICES = ['auto', 'wasm', 'cpu', 'tfjs-node', 'tfjs-node-gpu'] as const;

const ppoSchema = z
  .object({
    /** PPO clip range ε of the clipped surrogate. */
    clip: z.number().positive(),
    /** Initial coefficient β of the KL penalty to the frozen reference policy. */
    kl_coef: z.number().nonnegative(),
    /** The adaptive controller moves β so the measured KL approaches this. */
    target_kl: z.number().positive(),
    adaptive_kl: z.boolean(),
    /** Horizon of the adaptive KL controller (Ziegler et al. 2019), in transitions. */
    kl_horizon: posInt,
    /** Minibatch size (transitions) of each gradient update. */
    batch: posInt,
    /** Environment steps collected per PPO iteration (whole episodes, at least this many steps). */
    rollout_len: posInt,
    /** Passes over each iteration's rollout. */
    epochs: posInt,
    gamma: unit,
    /** GAE λ. */
    lam: unit,
    vf_coef: z.number().nonnegative(),
    ent_coef: z.number().nonnegative(),
    /** The bound: the policy that generates a batch must stay within kl_stop × target_kl of the reference (ppo_eval gates it; a command-engine trainer stops its update there). */
    kl_stop: z.number().gt(1),
    /** The built-in controller's setpoint, below the bound: a minibatch that takes KL(π ‖ π_ref) on the replay states above kl_hold × target_kl is undone and the step's update ends; a policy over it at a step's start is projected back to it. */
    kl_hold: z.number().positive(),
    /** Batches (the current one and the ones before it) whose states make the replay sample the controller measures KL on. */
    kl_replay: posInt,
    /** The adaptive KL coefficient moves so the replay KL of the policy that generated a batch approaches kl_coef_target × target_kl (below kl_hold: the penalty, not the stop, holds the KL). */
    kl_coef_target: z.number().positive(),
    /** Upper limit of the adaptive KL coefficient (no wind-up). */
    kl_coef_max: z.number().positive(),
  })
  .strict();

const dpoSchema = z
  .object({
    /** DPO temperature β. */
    beta: z.number().positive(),
    /** Preference pairs per update. */
    batch: posInt,
  })
  .strict();

const sampleSchema = z
  .object({
    /** ppo.priority_sampling.enable: false draws every episode uniformly from the training scenarios. */
    enabled: z.boolean(),
    /** Difficulty-aware sampling weights of the seed draws. */
    by_difficulty: z
      .object({ easy: z.number().nonnegative(), medium: z.number().nonnegative(), hard: z.number().nonnegative() })
      .strict(),
    /** Per step boundary: the share of episodes drawn from the seed pool by difficulty (the rest are priority draws). */
    seed_ratio_schedule: z.array(z.object({ step: z.number().int().nonnegative(), ratio: unit }).strict()).min(1),
    /** Priority draws weight a (task, difficulty) bucket by its failure rate; no bucket gets more than this share of them. */
    low_perf_cap: z.number().gt(0).max(1),
    /** Smoothing of the per-bucket success estimate the priority draws use. */
    success_ema: z.number().gt(0).max(1),
  })
  .strict();

const rewardSchema = z
  .object({
    use_overclar_penalty: z.boolean(),
    /** Over-clarification penalty α·min(c, cap) on items that need no clarification. */
    alpha: z.number().nonnegative(),
    cap: z.number().int().nonnegative(),
    /** Difficulty factor 1 + β(I[hard] − I[easy]). */
    beta: z.number().min(0).max(1),
  })
  .strict();

const envSchema = z
  .object({
    /** Assistant actions per episode before the episode ends without an answer. */
    max_turns: posInt,
    /** Share of the balanced pool's source questions held out from training for the held-out eval that picks best (by a hash of the source id; not the shadow set, which ppo_eval uses). */
    holdout: z.number().min(0).lt(1),
    /** Rates of the environment's stochastic events (env/dialogue-env.ts). */
    noise: z
      .object({
        tool_failure: z.number().min(0).lt(1),
        search_miss: z.number().min(0).lt(1),
        vague_reply: z.number().min(0).lt(1),
      })
      .strict(),
  })
  .strict();

/** Behaviour cloning of the pool's reference trajectories: the `sft` target, the initial policy and KL reference of PPO. */
const sftSchema = z
  .object({
    /** Expert episodes played per training scenario (each with its own environment draws). */
    episodes: posInt,
    epochs: posInt,
    lr: z.number().positive(),
    /** Minibatch size (transitions). */
    batch: posInt,
  })
  .strict();

const modelSchema = z
  .object({
    /** Hidden layer widths of the policy and value MLPs (tanh). */
    hidden: z.array(posInt).min(1).max(4),
  })
  .strict();

const scheduleSchema = z
  .object({
    kind: z.enum(['constant', 'linear', 'cosine']),
    warmup_steps: z.number().int().nonnegative(),
    /** Final lr as a share of lr (linear and cosine). */
    min_ratio: unit,
  })
  .strict();

const commandSchema = z
  .object({
    /** The trainer's command line (argv[0] is looked up on PATH); see lib/train/README.md for the contract. */
    argv: z.array(z.string().min(1)).min(1),
    /** Working directory, relative to the workspace root. */
    cwd: z.string(),
    /** Extra environment variables for the trainer (secrets go through the target's `secrets`). */
    env: z.record(z.string(), z.string()),
    /** After SIGTERM, seconds before SIGKILL. */
    grace_s: z.number().positive(),
    /** How often new checkpoints and metrics lines are looked for. */
    poll_ms: posInt,
  })
  .strict();

export const trainConfigSchema = z
  .object({
    engine: z.enum(ENGINE_NAMES),
    strategy: z.enum(STRATEGY_NAMES),
    seed: z.number().int().nonnegative(),
    /** Optimisation steps (PPO iterations / DPO updates); the step count keeps increasing across resumes. */
    steps: posInt,
    lr: z.number().positive(),
    lr_schedule: scheduleSchema,
    adam: z.object({ beta1: unit, beta2: unit, eps: z.number().positive() }).strict(),
    /** Global gradient-norm clip (0: off). */
    max_grad_norm: z.number().nonnegative(),
    ppo: ppoSchema,
    dpo: dpoSchema,
    sampling: sampleSchema,
    reward: rewardSchema,
    env: envSchema,
    model: modelSchema,
    tfjs: z.object({ backend: z.enum(BACKEND_CHOICES) }).strict(),
    checkpoint: z.object({ every: posInt, keep_last: posInt }).strict(),
    /** Shadow eval of the held-out scenarios every N steps (and at the end); best/ follows its mean reward. */
    eval: z.object({ every: posInt, max_episodes: posInt }).strict(),
    sft: sftSchema,
    command: commandSchema.optional(),
  })
  .strict();

export type TrainConfig = z.infer<typeof trainConfigSchema>;

/** configs/train.yaml `train:`: the keys that configs/ppo_scale.yaml and configs/evaluation.yaml do not already hold. */
export const trainSectionSchema = z
  .object({
    engine: z.enum(ENGINE_NAMES),
    strategy: z.enum(STRATEGY_NAMES),
    lr_schedule: scheduleSchema,
    adam: z.object({ beta1: unit, beta2: unit, eps: z.number().positive() }).strict(),
    max_grad_norm: z.number().nonnegative(),
    ppo: ppoSchema
      .pick({
        adaptive_kl: true,
        kl_horizon: true,
        epochs: true,
        gamma: true,
        lam: true,
        vf_coef: true,
        ent_coef: true,
        kl_stop: true,
        kl_hold: true,
        kl_coef_target: true,
        kl_replay: true,
        kl_coef_max: true,
      })
      .strict()
      .refine((p) => p.kl_hold < p.kl_stop, {
        message: 'kl_hold must be below kl_stop: the setpoint leaves room under the bound for the next batch',
        path: ['kl_hold'],
      }),
    dpo: dpoSchema,
    sampling: sampleSchema.pick({ success_ema: true }).strict(),
    env: envSchema,
    model: modelSchema,
    tfjs: z.object({ backend: z.enum(BACKEND_CHOICES) }).strict(),
    checkpoint: z.object({ every: posInt, keep_last: posInt }).strict(),
    eval: z.object({ every: posInt, max_episodes: posInt }).strict(),
    sft: sftSchema,
    command: commandSchema.optional(),
    // How runs are kept, not how one trains: these stay out of TrainConfig and its hash, so changing
    // them never makes an interrupted run unresumable (run-training.ts reads them from here).
    /** Resume an interrupted run (adopt a completed one) although the trainer's code changed; logged as a warning. */
    resume_across_code_change: z.boolean().optional(),
    /** Old runs (previous-* dirs of the work dir) kept when a run starts over; the oldest are removed first. */
    keep_previous_runs: z.number().int().nonnegative().optional(),
  })
  .strict();
export type TrainSection = z.infer<typeof trainSectionSchema>;

/** overclar.alpha and overclar.cap (configs/evaluation.yaml), as declared by `params: ['overclar.alpha', 'overclar.cap']`. */
export const overclarPenaltySchema = z.object({ alpha: z.number().min(0), cap: z.number().int().positive() }).strict();

/**
 * The params a rule that needs the train config declares — `params: ['train', 'ppo',
 * 'overclar.alpha', 'overclar.cap']` — as zod fields to spread into its params schema; then
 * `resolveTrainConfig(ctx.params)` gives the effective TrainConfig.
 */
export const TRAIN_PARAMS = {
  train: trainSectionSchema,
  ppo: ppoSectionSchema,
  overclar: overclarPenaltySchema,
} as const;
export const TRAIN_PARAM_KEYS = ['train', 'ppo', 'overclar.alpha', 'overclar.cap'] as const;

/** The train rule's params: the three sections the effective config is resolved from. */
export interface TrainParams {
  train: TrainSection;
  ppo: PpoConfig;
  overclar: { alpha: number; cap: number };
}

/** The effective config of one run (see the head of this file), validated once more as a whole: the run of `seed` (default ppo.seeds[0]). */
export function resolveTrainConfig(p: TrainParams, runSeed?: number): TrainConfig {
  const t = p.train;
  const ps = p.ppo.priority_sampling;
  const seed = runSeed ?? p.ppo.seeds[0];
  if (seed === undefined) throw new Error('ppo.seeds is empty: list at least one seed (configs/ppo_scale.yaml)');
  if (!p.ppo.seeds.includes(seed))
    throw new Error(`internal error: seed ${seed} is not one of ppo.seeds; please report this`);
  return trainConfigSchema.parse({
    engine: t.engine,
    strategy: t.strategy,
    seed,
    steps: p.ppo.steps,
    lr: p.ppo.lr,
    lr_schedule: t.lr_schedule,
    adam: t.adam,
    max_grad_norm: t.max_grad_norm,
    ppo: {
      clip: p.ppo.clip,
      kl_coef: p.ppo.kl_coef,
      target_kl: p.ppo.target_kl,
      batch: p.ppo.batch,
      rollout_len: p.ppo.rollout_len,
      ...t.ppo,
    },
    dpo: t.dpo,
    sampling: {
      enabled: ps.enable,
      by_difficulty: ps.by_difficulty,
      seed_ratio_schedule: ps.seed_ratio_schedule,
      low_perf_cap: ps.low_perf_cap,
      success_ema: t.sampling.success_ema,
    },
    reward: {
      use_overclar_penalty: p.ppo.use_overclar_penalty,
      alpha: p.overclar.alpha,
      cap: p.overclar.cap,
      beta: p.ppo.reward.beta,
    },
    env: t.env,
    model: t.model,
    tfjs: t.tfjs,
    checkpoint: t.checkpoint,
    eval: t.eval,
    sft: t.sft,
    ...(t.command ? { command: t.command } : {}),
  });
}
export type EngineName = (typeof ENGINE_NAMES)[number];
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** sha256 of the canonical JSON of the train config: recorded in every checkpoint, checked on resume. */
export function configHash(config: TrainConfig): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex');
}

/** Freezes a config tree (TrainContext.config is frozen: nothing may change it mid-run). */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value as object)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The seed-pool share at a step: the last schedule entry whose step is <= step. */
export function seedRatioAt(schedule: TrainConfig['sampling']['seed_ratio_schedule'], step: number): number {
  let ratio = schedule[0]!.ratio;
  for (const e of [...schedule].sort((a, b) => a.step - b.step)) if (e.step <= step) ratio = e.ratio;
  return ratio;
}

/** The learning rate at a step (0-based) under the configured schedule. */
export function lrAt(config: Pick<TrainConfig, 'lr' | 'lr_schedule' | 'steps'>, step: number): number {
  const { kind, warmup_steps: warm, min_ratio: floor } = config.lr_schedule;
  if (warm > 0 && step < warm) return (config.lr * (step + 1)) / warm;
  const span = Math.max(1, config.steps - warm);
  const t = Math.min(1, Math.max(0, (step - warm) / span));
  switch (kind) {
    case 'constant':
      return config.lr;
    case 'linear':
      return config.lr * (1 - (1 - floor) * t);
    case 'cosine':
      return config.lr * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * t)));
  }
}
