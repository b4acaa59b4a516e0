// Text statistics: tokenisation and n-gram helpers (and, with the data half, distinct-n, TTR,
// n-gram KL, Zipf slope and coverage). Rules import this as 'rc1-build/text'.
export * from './tokenize.ts';
