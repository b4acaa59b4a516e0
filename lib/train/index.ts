// The trainer, imported by rules as 'rc1-build/train': the trainer API (api.ts), the `train:`
// config schema, the one entry the train rule calls (runTraining), checkpoints, callbacks, the
// built-in policy's loading and evaluation (no tfjs needed), the RC1 reward, the simulated
// dialogue environment, and benchmarkTraining. See README.md beside this file for what the
// built-in policy is and is not.
export * from './api.ts';
export * from './config.ts';
export { runTraining, loadEngine, type RunTrainingOptions } from './run-training.ts';
export * from './checkpoints.ts';
export * from './callbacks.ts';
export * from './policy.ts';
export * from './eval-summary.ts';
export * from './data.ts';
export * from './effective-config.ts';
export * from './env/reward.ts';
export {
  ACTIONS,
  ANSWER,
  ASK,
  CALC,
  WIKI,
  N_ACTIONS,
  newState,
  stepEnv,
  gathered,
  type EnvNoise,
  type VisibleEvent,
  type ActionName,
  type DialogueState,
  type EnvOptions,
  type EpisodeOutcome,
} from './env/dialogue-env.ts';
export {
  FEATURE_NAMES,
  OBS_DIM,
  PLACEHOLDER_CUES,
  agentView,
  observe,
  observeState,
  staticFeatures,
  type AgentView,
} from './env/features.ts';
export { scenarioSpec, scenarioSpecs, type EnvScenario } from './env/scenario-spec.ts';
export { ScenarioSampler, capShares } from './env/sampler.ts';
export { paramSpecs, initParams, type NetShape, type Params, type ParamSpec } from './mlp.ts';
export { TrainRng } from './rng.ts';
export { gae, clippedObjective, adaptKlCoef, normalize } from './strategies/ppo-math.ts';
export { benchmarkTraining, type BenchmarkOptions, type BenchmarkRow } from './bench.ts';
// The ppo_eval gate's pieces (written beside the trainer by the gate's author).
export * from './checkpoint-input.ts';
export * from './eval-report.ts';
export * from './eval-sets.ts';
export * from './learning-curve.ts';
export { BASELINE_NAMES, baselineActor, type BaselineName } from './baselines.ts';
export { runSft, trainSft, expertAction, demonstrations, type SftResult, type SftEpoch } from './sft.ts';
export * from './eval-compare.ts';
