// Aggregation of an item's K samples (seeds Phase 1 item 2): the median per dimension is the
// item's score; the population variance per dimension (Σ(x − mean)² / K) is recorded. The ITEM
// VARIANCE is the largest of the seven per-dimension variances: an item is as unstable as its
// least stable dimension. item variance > unstable_variance (config, 0.08) marks it unstable;
// an unstable item's weight is unstable_weight (config, 0.5: later targets count it half),
// a stable item's weight is 1. With an even K the median is the mean of the two middle values.
import { DIMENSIONS, type Dimension, type DimScores } from './types.ts';

export interface AggregateOptions {
  unstableVariance: number;
  unstableWeight: number;
}

export interface Aggregate {
  median: DimScores;
  variance: DimScores;
  /** max over dimensions of the population variance. */
  itemVariance: number;
  /** The dimension with the largest variance (first in DIMENSIONS order on ties). */
  worstDimension: Dimension;
  unstable: boolean;
  weight: number;
}

/** Rounded to 6 decimals, so records read cleanly and compare exactly. */
const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('internal error: median of no samples; please report');
  const s = Float64Array.from(xs).sort();
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function populationVariance(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('internal error: variance of no samples; please report');
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length;
}

/** The aggregate of one item's samples (at least one). */
export function aggregateSamples(samples: readonly DimScores[], o: AggregateOptions): Aggregate {
  const med = {} as DimScores;
  const vari = {} as DimScores;
  let itemVariance = -1;
  let worstDimension: Dimension = DIMENSIONS[0];
  const xs: number[] = new Array<number>(samples.length);
  for (const d of DIMENSIONS) {
    for (let i = 0; i < samples.length; i++) xs[i] = samples[i]![d];
    med[d] = r6(median(xs));
    vari[d] = r6(populationVariance(xs));
    if (vari[d] > itemVariance) {
      itemVariance = vari[d];
      worstDimension = d;
    }
  }
  const unstable = itemVariance > o.unstableVariance;
  return {
    median: med,
    variance: vari,
    itemVariance,
    worstDimension,
    unstable,
    weight: unstable ? o.unstableWeight : 1,
  };
}
