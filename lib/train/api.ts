// The trainer API: what the `train` rule (through run-training.ts) hands an engine, what an engine
// hands back, and the callbacks both talk through. Engines (how training runs: the built-in tfjs
// engine, the `command` engine that drives the team's own trainer) are separate from strategies
// (how a batch becomes a loss and an update: ppo, dpo); callbacks (logging, checkpoint, shadow
// eval) see every step, checkpoint, eval and the end. Small on purpose: an engine needs nothing
// from rc1-build beyond this file, checkpoints.ts and config.ts.
//
// Paths: training state lives in a persistent work dir (`.rc1/state/train/`), not in the rule's
// temporary outputs, so a killed build leaves resumable checkpoints; run-training.ts copies the
// final state into the declared outputs when the engine returns.
import type { JsonValue } from 'rc1-build';
import type { EngineName, StrategyName, TrainConfig } from './config.ts';

export type { EngineName, StrategyName, TrainConfig } from './config.ts';

/** Every record of the built-in engine says where its episodes come from: a simulation built from the data. */
export const ENV_NAME = 'simulated-dialogue-v3';

/** Where the run reads and writes (absolute paths). */
export interface TrainPaths {
  root: string;
  /** Persistent work dir of this run: `<root>/.rc1/state/train`. */
  workDir: string;
  /** Persistent checkpoint dir: `<workDir>/checkpoints/rc1` (step_XXXXX/, latest, best_XXXXX/, best, initial/). */
  checkpointDir: string;
  /** The complete step dir to resume from (`latest` resolved), or null for a fresh start. */
  resumeFrom: string | null;
  /** Persistent metrics file (one JSON line per step); copied to reports/metrics.jsonl at the end. */
  metricsFile: string;
  /** Persistent log file of the run (`<workDir>/train.log`: .rc1/state/train/train.log), kept across resumes. */
  logFile: string;
  /** The effective config (secrets redacted), already written: reports/config_effective.yaml. */
  effectiveConfig: string;
}

/** What an engine gets. */
export interface TrainContext {
  /** The effective `train:` config (validated, frozen). */
  readonly config: Readonly<TrainConfig>;
  /** sha256 of the config's canonical JSON (config.ts configHash): every checkpoint records it. */
  readonly configHash: string;
  /**
   * The config sections the effective config was resolved from, as configured: `ppo` (seeds,
   * target_kl, base_model, finetune with its LoRA / QLoRA settings, …) and `overclar`. The
   * built-in engine needs nothing beyond `config`; the command engine hands these to the trainer
   * (RC1_CONFIG_JSON), and they are part of a command run's identity.
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  readonly profile: string;
  readonly paths: Readonly<TrainPaths>;
  /** The train target's named input groups (absolute paths): scenarios, weights, rollouts, scores, shadow… */
  readonly inputs: Readonly<Record<string, readonly string[]>>;
  /** The target's declared env vars and secrets (for the command engine's child process). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C / SIGTERM of the build: stop at the next step boundary, checkpoint, return. */
  readonly signal: AbortSignal;
  /** The run's seed (config.seed): all randomness derives from it. */
  readonly seed: number;
  /** The step to start from: 0, or the resumed checkpoint's step. */
  readonly startStep: number;
  progress(done: number, total: number): void;
  /** One line to the run's log and the build's rule log (logs/train.log). */
  log(line: string): void;
  /** The callbacks (logging, checkpoint, shadow eval), composed: the engine calls these. */
  readonly callbacks: Required<Omit<Callback, 'name'>>;
}

export interface TrainResult {
  /** The last step trained (equal to config.steps unless interrupted). */
  finalStep: number;
  /** The checkpoint dir of the final step (in the work dir). */
  finalCheckpoint: string | null;
  /** e.g. "wasm", "cpu", "tfjs-node", "tfjs-node-gpu", "external". */
  backend: string;
  /** Metrics lines written by this run (resumed runs: since the resume). */
  metricsLines: number;
  /** The best shadow eval, if any ran. */
  bestEval: EvalResult | null;
  /** True when the run stopped early because the build was interrupted (a checkpoint was written). */
  interrupted: boolean;
}

export interface Engine {
  readonly name: EngineName;
  run(ctx: TrainContext): Promise<TrainResult>;
}

/** One line of reports/metrics.jsonl: every field is present on every line (null where not defined). */
export interface MetricsLine {
  step: number;
  loss: { policy: number; value: number; entropy: number; kl: number; total: number };
  /** Mean episode reward (RC1 reward) of the step's rollouts; DPO: mean implicit reward margin. */
  reward: number;
  /** Mean KL(policy ‖ reference) over the step's states, after the step's update (PPO: the controller holds the KL on its replay of recent states at kl_hold × target_kl, docs/kl-control.md). */
  kl: number;
  /** PPO: mean KL(policy ‖ reference) over the step's states of the policy that generated them, before any projection or update (what ppo_eval gates); null where not measured (DPO, the command engine). */
  kl_rollout: number | null;
  kl_coef: number;
  /** PPO: whether the KL controller engaged in the step (the policy was projected toward the reference, or a minibatch's update was undone by the early stop); null where not measured (DPO, the command engine). */
  kl_engaged: boolean | null;
  entropy: number;
  lr: number;
  /** Environment steps per second over the step (collection + update time). */
  throughput: number;
  /** Gradient updates per second over the step. */
  updates_per_s: number;
  /** Task success rate of the step's episodes (null for DPO). */
  success: number | null;
  /** Mean assistant actions per episode (null for DPO). */
  episode_len: number | null;
  /** Share of the step's episodes drawn from the seed pool by difficulty (the rest: priority draws). */
  seed_ratio: number | null;
  backend: string;
  engine: EngineName;
  strategy: StrategyName | 'external';
  /** Where the episodes come from (ENV_NAME for the built-in engine). */
  env: string;
  /** Wall-clock time of the line (ISO 8601). */
  time: string;
}

/** Written inside every step dir as `checkpoint.json`; a step dir without it is incomplete. */
export interface CheckpointMeta {
  format: 'rc1-train-checkpoint-v1' | 'external';
  step: number;
  config_hash: string;
  engine: EngineName;
  strategy: StrategyName | 'external';
  backend: string;
  /** sha256 per file of the step dir (relative path → hex), checkpoint.json excluded. */
  files: Record<string, string>;
  /** Engine state that is not a tensor: RNG state, scheduler, KL controller, sampler statistics… */
  state: JsonValue;
  time: string;
}

export interface CheckpointInfo {
  step: number;
  /** The complete step dir (`<checkpointDir>/step_XXXXX`). */
  dir: string;
  meta: CheckpointMeta;
}

/** A shadow eval: the greedy policy on the held-out scenarios (policy.ts evaluatePolicy). */
export interface EvalResult {
  step: number;
  /** Mean RC1 reward: what `best` follows. */
  reward: number;
  success: number;
  overclar_rate: number;
  avg_turns: number;
  episodes: number;
  /** The checkpoint evaluated. */
  dir: string;
}

export interface StartInfo {
  startStep: number;
  totalSteps: number;
  resumedFrom: string | null;
  engine: EngineName;
  strategy: StrategyName | 'external';
  backend: string;
}

export interface Callback {
  readonly name: string;
  onStart?(info: StartInfo): Promise<void> | void;
  onStep?(metrics: MetricsLine): Promise<void> | void;
  /** After a complete step dir exists: the checkpoint callback swaps `latest` and rotates. */
  onCheckpoint?(info: CheckpointInfo): Promise<void> | void;
  onEval?(result: EvalResult): Promise<void> | void;
  onEnd?(result: TrainResult): Promise<void> | void;
}

/**
 * A strategy: how a batch becomes a loss and an update, independent of the engine that runs it.
 * `M` is the engine's model handle, `B` the batch type; state() / restore() carry what must survive
 * a resume (the PPO KL coefficient, DPO's pair order) as JSON.
 */
export interface Strategy<M = unknown, B = unknown> {
  readonly name: StrategyName;
  /** Gathers the data of one step (PPO: on-policy episodes; DPO: a minibatch of preference pairs). */
  collect(step: number, model: M): Promise<B> | B;
  /** Runs the step's gradient updates on the batch; returns the step's metrics (without the engine fields). */
  update(step: number, model: M, batch: B, lr: number): Promise<StepStats> | StepStats;
  state(): JsonValue;
  restore(state: JsonValue): void;
}

/** What a strategy reports for one step; the engine adds lr, throughput, backend, names and time. */
export interface StepStats {
  loss: MetricsLine['loss'];
  reward: number;
  kl: number;
  kl_rollout: number | null;
  kl_coef: number;
  kl_engaged: boolean | null;
  entropy: number;
  updates: number;
  envSteps: number;
  success: number | null;
  episode_len: number | null;
  seed_ratio: number | null;
}
