// Scoring, imported by rules as 'rc1-build/scoring': the contract (types.ts), the rubric and judge
// prompt, the providers, K-sample aggregation, the scoring driver and its records, the score
// cache and the rate limiter. One `export *` line per module.
export * from './types.ts';
export * from './rubric.ts';
export * from './judge-prompt.ts';
export * from './heuristic-provider.ts';
export * from './aggregate.ts';
export * from './score-items.ts';
export * from './memory-score-cache.ts';
export * from './score-record.ts';
export * from './scoring-config.ts';
export * from './provider-factory.ts';
export * from './presets.ts';
export * from './openai-provider.ts';
export * from './rate-limiter.ts';
export * from './score-cache.ts';
export * from './cache-filter.ts';
export * from './parse-retry-after.ts';
export * from './judge-spec.ts';
