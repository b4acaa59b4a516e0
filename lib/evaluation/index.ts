// The evaluation half of RC1 (issue 5), imported by rules as 'rc1-build/evaluation': the reward
// definitions (old score, new reward, over-clarification penalty, difficulty factor), scored
// rollouts, the weights file, and the computations of the gates shadow_run, weights,
// overclar_ablation, preflight_checks, round1 and round2_pass. Pure functions over parsed data,
// except the readers (items.ts, shadow-buckets.ts, weights-file.ts) and freeDiskGiB.
export * from './config.ts';
export * from './items.ts';
export * from './reward.ts';
export * from './weights-file.ts';
export * from './shadow-buckets.ts';
export * from './calibration.ts';
export * from './shadow-run.ts';
export * from './ablation.ts';
export * from './preflight.ts';
export * from './rounds.ts';
/** The seven reward dimensions (lib/scoring/types.ts DIMENSIONS), in their fixed order. */
export { DIMENSIONS as SCORE_DIMENSIONS } from '../scoring/types.ts';
/** The difficulty band schemas the shadow run validates its params with (re-exported so its rule's code closure stays narrow). */
export { bandsSchema, dimensionsSchema } from '../difficulty/bands.ts';
