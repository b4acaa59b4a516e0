// Correlation coefficients: Pearson's r, Spearman's ρ (Pearson on average ranks, so ties are
// handled the way scipy.stats.spearmanr and R's cor(method = "spearman") handle them) and the
// point-biserial correlation of a score with a binary success variable. Kendall's τ-b has its
// own module (kendall-tau-b.ts). Each returns NaN when a variable is constant or n < 2: the
// coefficient is undefined there, and NaN never passes a gate check.
import { rankAverage } from './rank-average.ts';
import { sameLength } from './summary.ts';

/** Pearson's product-moment correlation, computed two-pass (centred sums) for precision. */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = sameLength(x, y, 'pearson');
  if (n < 2) return NaN;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx;
    const dy = y[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return NaN;
  const r = sxy / Math.sqrt(sxx * syy);
  // Rounding can carry |r| a hair past 1 for exactly collinear data.
  return Math.max(-1, Math.min(1, r));
}

/** Spearman's ρ: Pearson's r of the average ranks (ties share the mean of their positions). */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number {
  sameLength(x, y, 'spearman');
  return pearson(rankAverage(x), rankAverage(y));
}

/** Reads a binary variable: each value must be 0, 1, false or true. Returns 0/1 codes. */
export function binaryCodes(success: ArrayLike<number | boolean>, what: string): Uint8Array {
  const out = new Uint8Array(success.length);
  for (let i = 0; i < success.length; i++) {
    const v = success[i];
    if (v === 1 || v === true) out[i] = 1;
    else if (v !== 0 && v !== false)
      throw new RangeError(`${what}: success ${i} is ${String(v)}; expected 0, 1, false or true`);
  }
  return out;
}

/**
 * Point-biserial correlation of a score x with a binary success s:
 *   r_pb = (M₁ − M₀) / σ · √(n₁n₀ / n²),
 * M₁, M₀ the mean scores of successes and failures, σ the population (divisor n) standard
 * deviation of all scores. It is algebraically Pearson's r with success coded 0/1 (the tests
 * check both agree); the closed form just says what the number means: a standardised gap
 * between the two groups' means. NaN when every item succeeded, none did, or x is constant.
 */
export function pointBiserial(x: ArrayLike<number>, success: ArrayLike<number | boolean>): number {
  const n = sameLength(x, success as ArrayLike<number>, 'pointBiserial');
  const s = binaryCodes(success, 'pointBiserial');
  let n1 = 0;
  let sum1 = 0;
  let sum0 = 0;
  for (let i = 0; i < n; i++) {
    if (s[i] === 1) {
      n1++;
      sum1 += x[i]!;
    } else sum0 += x[i]!;
  }
  const n0 = n - n1;
  if (n1 === 0 || n0 === 0) return NaN;
  const m = (sum1 + sum0) / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (x[i]! - m) ** 2;
  if (ss === 0) return NaN;
  const sigma = Math.sqrt(ss / n);
  const r = ((sum1 / n1 - sum0 / n0) / sigma) * Math.sqrt((n1 * n0) / (n * n));
  return Math.max(-1, Math.min(1, r));
}
