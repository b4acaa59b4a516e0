// Per-group Gram sums for resampling whole groups: XᵀX, Xᵀy, yᵀy and the row count of each group's
// rows (each row counted with its weight), packed in one Float64Array per group, so a resample's
// Gram statistics are Σ (times the group was drawn) × (its packed sums) — no matrix is rebuilt.
import { matrix, type Gram, type Matrix } from './matrix.ts';

/** Per-group Gram sums (row-weighted), packed: xtx (d·d), xty (d), yty, n. */
export function groupGrams(
  X: Matrix,
  y: ArrayLike<number>,
  members: readonly Int32Array[],
  weight: (r: number) => number,
): Float64Array[] {
  const d = X.cols;
  return members.map((rows) => {
    const g = new Float64Array(d * d + d + 2);
    for (const r of rows) {
      const m = weight(r);
      const o = r * d;
      for (let j = 0; j < d; j++) {
        const xj = X.data[o + j]!;
        for (let k = 0; k < d; k++) g[j * d + k] = g[j * d + k]! + m * xj * X.data[o + k]!;
        g[d * d + j] = g[d * d + j]! + m * xj * y[r]!;
      }
      g[d * d + d] = g[d * d + d]! + m * y[r]! * y[r]!;
      g[d * d + d + 1] = g[d * d + d + 1]! + m;
    }
    return g;
  });
}

/** The Gram of a packed sum. */
export const unpackGram = (g: Float64Array, d: number): Gram => ({
  xtx: matrix(d, d, g.slice(0, d * d)),
  xty: g.slice(d * d, d * d + d),
  yty: g[d * d + d]!,
  n: g[d * d + d + 1]!,
});
