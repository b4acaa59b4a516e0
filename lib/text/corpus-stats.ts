// The lexical statistics a diversity gate reports for one corpus of documents (a document is a
// list of segments): token count, distinct-1 and distinct-2 measured per fixed-size batch and
// averaged (distinctNBatched), and TTR and Zipf slope over the whole corpus. Both gates call
// this, so a pack and a pool are described by the same numbers with the same definitions.
import type { Rng } from 'rc1-build';
import type { Corpus } from './corpus.ts';
import { distinctNBatched, typeTokenRatio, type BatchedDistinct } from './distinct.ts';
import { zipfSlope } from './zipf-slope.ts';

export interface CorpusStatsOptions {
  /** Documents per batch for distinct-n. */
  batchSize: number;
  /** At most this many batches. */
  maxBatches: number;
  zipfMaxRank: number;
  /** Shuffles documents into batches. */
  rng: Rng;
}

export interface CorpusStats {
  documents: number;
  tokens: number;
  distinct_1: BatchedDistinct;
  distinct_2: BatchedDistinct;
  ttr: number;
  zipf_slope: number | null;
}

/** Keeps the order: batches are consecutive documents of an already shuffled list. */
const IN_ORDER: Rng = { next: () => 0, int: () => 0, shuffle: <T>(xs: readonly T[]): T[] => xs.slice() };

export function corpusStats(docs: readonly Corpus[], o: CorpusStatsOptions): CorpusStats {
  const flat: (readonly string[])[] = [];
  for (const d of docs) flat.push(...d);
  let tokens = 0;
  for (const seg of flat) tokens += seg.length;
  // One shuffle, so distinct-1 and distinct-2 are measured on the same batches.
  const order = o.rng.shuffle(docs);
  return {
    documents: docs.length,
    tokens,
    distinct_1: distinctNBatched(order, 1, o.batchSize, o.maxBatches, IN_ORDER),
    distinct_2: distinctNBatched(order, 2, o.batchSize, o.maxBatches, IN_ORDER),
    ttr: typeTokenRatio(flat),
    zipf_slope: zipfSlope(flat, o.zipfMaxRank),
  };
}
