// Weight calibration as a constrained least-squares problem: minimise
//   L·‖Xw − y‖² + λ‖w − w₀‖²  subject to  w ≥ 0, Σw = 1, w_i ≤ u,
// with L = 1 ('sum' loss, the default) or 1/n ('mean' loss, which keeps λ's pull toward the old
// weights w₀ the same whatever the number of rows). Expanded, that is ½wᵀQw − cᵀw (times 2, plus
// a constant) with Q = L·XᵀX + λI and c = L·Xᵀy + λw₀, solved exactly by boxSimplexQp; the
// constraints hold because the solver never leaves the feasible set, not by clipping afterwards.
// Also the unconstrained ridge-toward-w₀ fit, the baseline the constrained one is compared with.
import { boxSimplexQp, type BoxSimplexQpResult } from './box-simplex-qp.ts';
import { choleskyInPlace, choleskySolveInPlace, matrix, type Gram, type Matrix } from './matrix.ts';

export interface PriorFitOptions {
  /** λ ≥ 0, the weight of the prior term λ‖w − w₀‖² (RC1 config: weights.l2, .1). */
  l2: number;
  /** w₀, the old weights the fit is pulled toward. */
  prior: ArrayLike<number>;
  /** 'sum': L = 1, the objective exactly as written; 'mean': L = 1/n. Default 'sum'. */
  loss?: 'sum' | 'mean';
}

export interface SimplexNnlsOptions extends PriorFitOptions {
  /** Cap u on each weight (RC1: .5); needs d·u ≥ 1. Default 1, the plain probability simplex. */
  upper?: number;
}

export interface SimplexNnlsResult extends BoxSimplexQpResult {
  /** L·‖Xw − y‖² + λ‖w − w₀‖² at w (the QP's objective is the halved form without constants). */
  loss: number;
  /** The QP's data, for boxSimplexKkt: Q = L·XᵀX + λI, c = L·Xᵀy + λw₀. */
  Q: Matrix;
  c: Float64Array;
}

/** Q = L·XᵀX + λI and c = L·Xᵀy + λw₀, and L itself. */
export function priorQp(g: Gram, o: PriorFitOptions): { Q: Matrix; c: Float64Array; scale: number } {
  const d = g.xtx.cols;
  if (o.prior.length !== d) throw new RangeError(`prior fit: ${d} dimensions but ${o.prior.length} prior weights`);
  if (!(o.l2 >= 0)) throw new RangeError(`prior fit: l2 must be ≥ 0, got ${o.l2}`);
  const scale = (o.loss ?? 'sum') === 'mean' ? 1 / Math.max(1, g.n) : 1;
  const q = Float64Array.from(g.xtx.data, (v) => v * scale);
  const c = Float64Array.from(g.xty, (v, i) => v * scale + o.l2 * o.prior[i]!);
  for (let i = 0; i < d; i++) q[i * d + i] = q[i * d + i]! + o.l2;
  return { Q: matrix(d, d, q), c, scale };
}

/** L·‖Xw − y‖² + λ‖w − w₀‖² from the Gram statistics, without touching X again. */
export function priorLoss(g: Gram, o: PriorFitOptions, w: ArrayLike<number>): number {
  const d = g.xtx.cols;
  const scale = (o.loss ?? 'sum') === 'mean' ? 1 / Math.max(1, g.n) : 1;
  let quad = 0;
  let lin = 0;
  let prior = 0;
  for (let i = 0; i < d; i++) {
    for (let k = 0; k < d; k++) quad += w[i]! * g.xtx.data[i * d + k]! * w[k]!;
    lin += w[i]! * g.xty[i]!;
    prior += (w[i]! - o.prior[i]!) ** 2;
  }
  return scale * (quad - 2 * lin + g.yty) + o.l2 * prior;
}

/** The constrained fit: w ≥ 0, Σw = 1, w_i ≤ u, exact (see box-simplex-qp.ts for the method). */
export function simplexNnls(g: Gram, o: SimplexNnlsOptions): SimplexNnlsResult {
  const { Q, c } = priorQp(g, o);
  const r = boxSimplexQp(Q, c, o.upper ?? 1);
  return { ...r, loss: priorLoss(g, o, r.w), Q, c };
}

/**
 * The unconstrained fit (L·XᵀX + λI)w = L·Xᵀy + λw₀: ridge regression toward w₀. For comparison
 * only; its weights may be negative, exceed u, and need not sum to 1.
 */
export function priorLeastSquares(g: Gram, o: PriorFitOptions): Float64Array {
  const { Q, c } = priorQp(g, o);
  const d = Q.cols;
  const l = Q.data.slice();
  if (!choleskyInPlace(l, d))
    throw new RangeError('priorLeastSquares: XᵀX + λI is singular (use l2 > 0 or full-rank data)');
  choleskySolveInPlace(l, d, c);
  return c;
}
