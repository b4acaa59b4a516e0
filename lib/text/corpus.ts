// A corpus for text statistics: a list of token sequences ("segments"). N-grams are taken inside
// a segment and never across a boundary, so a statistic over rendered templates can cut the text
// at slot values (they are not the template's prose) and a statistic over scenarios can keep one
// user turn from running into the next. Every statistic in this module family takes a Corpus.
import { tokenize } from './tokenize.ts';

export type Corpus = readonly (readonly string[])[];

/** One segment per text, each tokenised with `tokenize`. */
export function corpusOf(texts: Iterable<string>): string[][] {
  const out: string[][] = [];
  for (const t of texts) out.push(tokenize(t));
  return out;
}

/** Counts of every n-gram (tokens joined by one space) inside the segments of a corpus. */
export function countNgrams(corpus: Corpus, n: number): Map<string, number> {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n-gram order must be a positive integer, got ${n}`);
  const counts = new Map<string, number>();
  for (const seg of corpus) {
    for (let i = 0; i + n <= seg.length; i++) {
      // seg.slice(i, i + n).join(' '), without the array
      let g = seg[i]!;
      for (let k = 1; k < n; k++) g += ` ${seg[i + k]!}`;
      counts.set(g, (counts.get(g) ?? 0) + 1);
    }
  }
  return counts;
}

/** Total number of n-grams in a corpus (sum over segments of max(0, length − n + 1)). */
export function ngramTotal(corpus: Corpus, n: number): number {
  let total = 0;
  for (const seg of corpus) total += Math.max(0, seg.length - n + 1);
  return total;
}
