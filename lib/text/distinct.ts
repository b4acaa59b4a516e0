// Lexical diversity: distinct-n and the type-token ratio (definitions in TEXT_STAT_DEFINITIONS).
//   distinct-n = |distinct n-grams| / |n-grams|, n-grams inside segments only; 0 for no n-grams.
//   TTR        = |distinct tokens| / |tokens| (= distinct-1).
// Both fall as a corpus grows (a fixed vocabulary repeats), so a gate compares them only on
// samples of one fixed size: distinctNBatched draws `batches` disjoint seeded batches of `size`.
import type { Rng } from 'rc1-build';
import { countNgrams, ngramTotal, type Corpus } from './corpus.ts';

export function distinctN(corpus: Corpus, n: number): number {
  const total = ngramTotal(corpus, n);
  return total === 0 ? 0 : countNgrams(corpus, n).size / total;
}

export function typeTokenRatio(corpus: Corpus): number {
  return distinctN(corpus, 1);
}

export interface BatchedDistinct {
  /** Mean distinct-n over the batches (the gated value). */
  mean: number;
  min: number;
  max: number;
  /** Batches measured and their size (the last items are left out when they do not fill a batch). */
  batches: number;
  size: number;
}

/**
 * distinct-n measured per batch of `size` documents and averaged, so that the value means the
 * same whatever the number of documents. Documents are shuffled with `rng`, then cut into
 * consecutive batches; at most `maxBatches` are used. A document is a list of segments.
 * With fewer documents than one batch, the single (short) batch of all of them is measured.
 */
export function distinctNBatched(
  docs: readonly Corpus[],
  n: number,
  size: number,
  maxBatches: number,
  rng: Rng,
): BatchedDistinct {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`batch size must be a positive integer, got ${size}`);
  const order = rng.shuffle(docs.map((_, i) => i));
  const count = Math.max(1, Math.min(maxBatches, Math.floor(order.length / size)));
  const values: number[] = [];
  for (let b = 0; b < count; b++) {
    const batch: (readonly string[])[] = [];
    for (const i of order.slice(b * size, (b + 1) * size)) batch.push(...docs[i]!);
    values.push(distinctN(batch, n));
  }
  return {
    mean: values.reduce((s, v) => s + v, 0) / values.length,
    min: Math.min(...values),
    max: Math.max(...values),
    batches: values.length,
    size: Math.min(size, order.length),
  };
}
