// The exact solver behind the calibrated weights: minimise ½wᵀQw − cᵀw subject to Σw = 1 and
// 0 ≤ w_i ≤ u, Q symmetric positive definite. Method: the primal active-set method for convex
// QP (Nocedal & Wright, Numerical Optimization, 2nd ed., alg. 16.3), which is Lawson–Hanson's
// NNLS scheme generalised to two-sided bounds (as BVLS, Stark & Parker 1995, does) plus the
// always-active equality Σw = 1 carried by a multiplier ν:
//   - each weight is free, or held at 0, or held at u; at least one is free;
//   - on the free set F, solve the equality-constrained problem exactly (a Cholesky solve of
//     Q_FF for the (|F| + 1)-dimensional KKT system);
//   - if that point breaks a bound, step from the current feasible point towards it as far as
//     feasibility allows and hold the weight that hit its bound (Lawson–Hanson's inner loop);
//   - else move there and compute the bound multipliers; if one is negative, free the most
//     negative (Lawson–Hanson's outer loop), otherwise stop.
// Why it is exact: every iterate is feasible, so the bounds and the sum hold by construction,
// never by clipping; the objective falls strictly at every non-zero step, so no free set repeats
// and the method terminates; and it stops only at a point that satisfies all the KKT conditions,
// which for a strictly convex QP identify the unique global minimiser. The answer is the exact
// minimiser up to the rounding of one small linear solve; boxSimplexKkt measures how far.
import { choleskyInPlace, choleskySolveInPlace, principalSubmatrix, type Matrix } from './matrix.ts';

const FREE = 0;
const AT_LOWER = 1;
const AT_UPPER = 2;

export interface BoxSimplexQpResult {
  /** The minimiser: Σw = 1 (to rounding), 0 ≤ w_i ≤ u exactly. */
  w: Float64Array;
  /** Multiplier ν of Σw = 1. */
  nu: number;
  /** Multipliers α_i ≥ 0 of w_i ≥ 0 (0 where w_i > 0). */
  lower: Float64Array;
  /** Multipliers β_i ≥ 0 of w_i ≤ u (0 where w_i < u). */
  upper: Float64Array;
  /** ½wᵀQw − cᵀw at w. */
  objective: number;
  /** Equality-constrained solves performed. */
  iterations: number;
}

/** The active-set QP described in the module comment. Throws a RangeError for an infeasible or non-convex problem. */
export function boxSimplexQp(Q: Matrix, c: ArrayLike<number>, u: number): BoxSimplexQpResult {
  const d = Q.rows;
  if (Q.cols !== d || c.length !== d)
    throw new RangeError(`boxSimplexQp: Q is ${Q.rows} × ${Q.cols} but c has ${c.length} values`);
  if (d === 0) throw new RangeError('boxSimplexQp: no weights to fit');
  if (!(u > 0) || d * u < 1 - 1e-12) throw new RangeError(`boxSimplexQp: ${d} weights each ≤ ${u} cannot sum to 1`);
  const q = Q.data;
  let scale = Number.MIN_VALUE;
  for (let i = 0; i < q.length; i++) scale = Math.max(scale, Math.abs(q[i]!));
  for (let i = 0; i < d; i++) scale = Math.max(scale, Math.abs(c[i]!));
  // A bound is released only for a multiplier clearly below zero, not rounding noise.
  const tol = 1e-11 * scale;
  const state = new Uint8Array(d);
  const w = new Float64Array(d).fill(Math.min(1 / d, u));
  const g = new Float64Array(d);
  const maxIterations = 50 * (d + 2);
  let nu = 0;
  let iterations = 0;

  const gradient = (): void => {
    for (let i = 0; i < d; i++) {
      let t = -c[i]!;
      for (let k = 0; k < d; k++) t += q[i * d + k]! * w[k]!;
      g[i] = t;
    }
  };

  for (;;) {
    if (++iterations > maxIterations)
      throw new Error('internal error: boxSimplexQp did not converge (please report with Q and c)');
    const free: number[] = [];
    let held = 0;
    for (let i = 0; i < d; i++) {
      if (state[i] === FREE) free.push(i);
      else held += w[i]!;
    }
    const m = free.length;
    // Equality-constrained subproblem on F: Q_FF z + ν1 = c_F − Q_FW w_W, Σz = 1 − Σw_W.
    const l = principalSubmatrix(Q, free);
    if (!choleskyInPlace(l, m))
      throw new RangeError('boxSimplexQp: Q is not positive definite (use an L2 prior > 0 or full-rank data)');
    const a = new Float64Array(m);
    const b = new Float64Array(m).fill(1);
    free.forEach((i, r) => {
      let t = c[i]!;
      for (let k = 0; k < d; k++) if (state[k] !== FREE) t -= q[i * d + k]! * w[k]!;
      a[r] = t;
    });
    choleskySolveInPlace(l, m, a);
    choleskySolveInPlace(l, m, b);
    let sa = 0;
    let sb = 0;
    for (let r = 0; r < m; r++) {
      sa += a[r]!;
      sb += b[r]!;
    }
    const target = 1 - held;
    nu = (sa - target) / sb;
    const z = Float64Array.from(a, (ar, r) => ar - nu * b[r]!);
    if (m === 1) {
      // One free weight is forced by Σw = 1; the feasible iterates keep it in [0, u] up to rounding.
      if (target < -1e-9 || target > u + 1e-9)
        throw new Error(`internal error: boxSimplexQp lost feasibility (${target}); please report`);
      z[0] = Math.min(u, Math.max(0, target));
    }

    // Inner loop: the longest feasible step towards z, holding the first weight that hits a bound.
    let step = 1;
    let blocker = -1;
    let blockAt = AT_LOWER;
    free.forEach((i, r) => {
      const zi = z[r]!;
      const wi = w[i]!;
      if (zi < 0) {
        const t = wi / (wi - zi);
        if (t < step) [step, blocker, blockAt] = [t, i, AT_LOWER];
      } else if (zi > u) {
        const t = (u - wi) / (zi - wi);
        if (t < step) [step, blocker, blockAt] = [t, i, AT_UPPER];
      }
    });
    if (blocker >= 0) {
      free.forEach((i, r) => (w[i] = Math.min(u, Math.max(0, w[i]! + step * (z[r]! - w[i]!)))));
      w[blocker] = blockAt === AT_LOWER ? 0 : u;
      state[blocker] = blockAt;
      continue;
    }
    // z is feasible (every z_i lies in [0, u] by the test above): move there.
    free.forEach((i, r) => (w[i] = z[r]!));
    // Outer loop: multipliers of the held bounds; free the most negative one, if any.
    gradient();
    let release = -1;
    let worst = -tol;
    for (let i = 0; i < d; i++) {
      const mult = state[i] === AT_LOWER ? g[i]! + nu : state[i] === AT_UPPER ? -(g[i]! + nu) : 0;
      if (mult < worst) {
        worst = mult;
        release = i;
      }
    }
    if (release < 0) break;
    state[release] = FREE;
  }

  const lower = new Float64Array(d);
  const upper = new Float64Array(d);
  let objective = 0;
  for (let i = 0; i < d; i++) {
    if (state[i] === AT_LOWER) lower[i] = g[i]! + nu;
    if (state[i] === AT_UPPER) upper[i] = -(g[i]! + nu);
    objective += 0.5 * w[i]! * (g[i]! + c[i]!) - c[i]! * w[i]!;
  }
  return { w, nu, lower, upper, objective, iterations };
}

/** The largest violation of each KKT condition of the box-simplex QP at a solution. */
export interface KktResiduals {
  /** max_i |(Qw − c)_i + ν − α_i + β_i|. */
  stationarity: number;
  /** max of −w_i, w_i − u and |Σw − 1|. */
  primal: number;
  /** max of −α_i and −β_i (0 when every multiplier is ≥ 0). */
  dual: number;
  /** max of |α_i·w_i| and |β_i·(u − w_i)|. */
  complementarity: number;
}

/** Measures the KKT conditions at (w, ν, α, β); all four near 0 certify the global minimum. */
export function boxSimplexKkt(
  Q: Matrix,
  c: ArrayLike<number>,
  u: number,
  s: Pick<BoxSimplexQpResult, 'w' | 'nu' | 'lower' | 'upper'>,
): KktResiduals {
  const d = Q.rows;
  let stationarity = 0;
  let primal = 0;
  let dual = 0;
  let complementarity = 0;
  let sum = 0;
  for (let i = 0; i < d; i++) {
    let gi = -c[i]!;
    for (let k = 0; k < d; k++) gi += Q.data[i * d + k]! * s.w[k]!;
    const wi = s.w[i]!;
    const al = s.lower[i]!;
    const be = s.upper[i]!;
    stationarity = Math.max(stationarity, Math.abs(gi + s.nu - al + be));
    primal = Math.max(primal, -wi, wi - u);
    dual = Math.max(dual, -al, -be);
    complementarity = Math.max(complementarity, Math.abs(al * wi), Math.abs(be * (u - wi)));
    sum += wi;
  }
  primal = Math.max(primal, Math.abs(sum - 1));
  return { stationarity, primal, dual, complementarity };
}
