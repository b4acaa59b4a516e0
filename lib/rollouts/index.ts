// Rollouts, imported by rules as 'rc1-build/rollouts': the rollout record and its success
// metrics, and the three rollout sources (synthetic perturbations of the reference, a real
// model run read from JSONL, an OpenAI-compatible endpoint serving the policy).
export * from './rollout.ts';
export * from './success.ts';
export * from './schemas.ts';
export * from './config.ts';
export * from './read-scenarios.ts';
export * from './synthetic.ts';
export * from './file-source.ts';
export * from './calc.ts';
export * from './policy-client.ts';
export * from './openai-source.ts';
