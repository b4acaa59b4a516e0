// Text statistics: the one tokenisation (tokenize.ts) and what is computed from it: n-grams,
// Jaccard, distinct-n, TTR, n-gram KL divergence, Zipf slope, label coverage, normalisation for
// duplicate detection, and their written definitions. Rules import this as 'rc1-build/text'.
export * from './tokenize.ts';
export { corpusOf, countNgrams, ngramTotal, type Corpus } from './corpus.ts';
export { distinctN, distinctNBatched, typeTokenRatio, type BatchedDistinct } from './distinct.ts';
export { klFromCounts, ngramKl } from './kl-divergence.ts';
export { zipfSlope } from './zipf-slope.ts';
export { corpusStats, type CorpusStats, type CorpusStatsOptions } from './corpus-stats.ts';
export { coverage, type Coverage } from './coverage.ts';
export { normalizeText } from './normalize.ts';
export { TEXT_STAT_DEFINITIONS } from './definitions.ts';
