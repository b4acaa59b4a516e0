// Non-negative least squares, min ‖Ax − b‖² subject to x ≥ 0, by the Lawson–Hanson active-set
// algorithm (Solving Least Squares Problems, 1974, ch. 23, algorithm NNLS), in the normal-
// equation form of Bro & de Jong (1997): it needs only AᵀA and Aᵀb, so a fold or a bootstrap
// resample costs one Gram pass and the solve is independent of the number of rows. The price is
// that the passive-set systems have condition number cond(A)²; fine for the handful of well-
// scaled score dimensions this is for, not a general-purpose replacement for a QR-based NNLS.
import { choleskyInPlace, choleskySolveInPlace, gram, matVec, principalSubmatrix, type Matrix } from './matrix.ts';

export interface NnlsResult {
  /** The solution, x ≥ 0 exactly. */
  x: Float64Array;
  /**
   * The dual vector Aᵀ(b − Ax) (the negative half-gradient). At the optimum it is ≈ 0 where
   * x > 0 and ≤ 0 where x = 0: the KKT conditions of the problem.
   */
  dual: Float64Array;
  /** Passive-set least-squares solves performed. */
  iterations: number;
}

export interface NnlsOptions {
  /** A variable enters only if its dual exceeds this; default 1e-10 × the scale of AᵀA and Aᵀb. */
  tolerance?: number;
}

function maxAbs(xs: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < xs.length; i++) m = Math.max(m, Math.abs(xs[i]!));
  return m;
}

/** Lawson–Hanson NNLS from the normal equations: minimises xᵀ(AᵀA)x − 2xᵀ(Aᵀb) over x ≥ 0. */
export function nnlsGram(g: { xtx: Matrix; xty: ArrayLike<number> }, options: NnlsOptions = {}): NnlsResult {
  const n = g.xtx.cols;
  if (g.xtx.rows !== n || g.xty.length !== n)
    throw new RangeError(`nnlsGram: AᵀA is ${g.xtx.rows} × ${n} but Aᵀb has ${g.xty.length} values`);
  const q = g.xtx.data;
  const c = g.xty;
  const tol = options.tolerance ?? 1e-10 * Math.max(maxAbs(c), maxAbs(q), Number.MIN_VALUE);
  const x = new Float64Array(n);
  const s = new Float64Array(n);
  const dual = new Float64Array(n);
  const passive = new Uint8Array(n);
  // A variable whose entry failed for rounding reasons sits out until x next changes.
  const blocked = new Uint8Array(n);
  const maxIterations = 30 * (n + 1);
  let iterations = 0;

  const computeDual = (): void => {
    for (let j = 0; j < n; j++) {
      let t = c[j]!;
      for (let k = 0; k < n; k++) t -= q[j * n + k]! * x[k]!;
      dual[j] = t;
    }
  };
  /** s = the unconstrained least-squares solution on the passive set, 0 elsewhere. */
  const solvePassive = (): void => {
    const idx: number[] = [];
    for (let j = 0; j < n; j++) if (passive[j]) idx.push(j);
    const l = principalSubmatrix(g.xtx, idx);
    if (!choleskyInPlace(l, idx.length)) {
      throw new Error('internal error: nnls passive-set system is singular (please report with the data)');
    }
    const rhs = Float64Array.from(idx, (j) => c[j]!);
    choleskySolveInPlace(l, idx.length, rhs);
    s.fill(0);
    idx.forEach((j, i) => (s[j] = rhs[i]!));
  };

  computeDual();
  for (;;) {
    // Step 2–4 of algorithm NNLS: the variable whose dual is largest enters the passive set.
    let t = -1;
    let best = tol;
    for (let j = 0; j < n; j++) {
      if (!passive[j] && !blocked[j] && dual[j]! > best) {
        best = dual[j]!;
        t = j;
      }
    }
    if (t < 0) break;
    passive[t] = 1;
    let first = true;
    let accepted = false;
    // Steps 6–11, the inner loop: step back towards x until the passive solution is positive.
    for (;;) {
      if (++iterations > maxIterations)
        throw new Error('internal error: nnls did not converge (please report with the data)');
      solvePassive();
      let allPositive = true;
      for (let j = 0; j < n; j++) if (passive[j] && !(s[j]! > 0)) allPositive = false;
      if (allPositive) {
        x.set(s);
        accepted = true;
        break;
      }
      if (first && !(s[t]! > 0)) {
        // In exact arithmetic the entering variable is positive; rounding said otherwise.
        passive[t] = 0;
        blocked[t] = 1;
        break;
      }
      first = false;
      let alpha = Infinity;
      let leave = -1;
      for (let j = 0; j < n; j++) {
        if (passive[j] && !(s[j]! > 0)) {
          const a = x[j]! / (x[j]! - s[j]!);
          if (a < alpha) {
            alpha = a;
            leave = j;
          }
        }
      }
      for (let j = 0; j < n; j++) if (passive[j]) x[j] = x[j]! + alpha * (s[j]! - x[j]!);
      for (let j = 0; j < n; j++) {
        if (passive[j] && (j === leave || x[j]! <= 0)) {
          passive[j] = 0;
          x[j] = 0;
        }
      }
    }
    if (accepted) {
      blocked.fill(0);
      computeDual();
    }
  }
  computeDual();
  return { x, dual, iterations };
}

/** Lawson–Hanson NNLS of A (m × n) and b: the x ≥ 0 minimising ‖Ax − b‖, and that residual norm. */
export function nnls(
  A: Matrix,
  b: ArrayLike<number>,
  options: NnlsOptions = {},
): NnlsResult & { residualNorm: number } {
  const r = nnlsGram(gram(A, b), options);
  const ax = matVec(A, r.x);
  let ss = 0;
  for (let i = 0; i < A.rows; i++) ss += (ax[i]! - b[i]!) ** 2;
  return { ...r, residualNorm: Math.sqrt(ss) };
}
