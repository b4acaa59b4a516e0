// Lawson–Hanson NNLS (lib/stats/nnls.ts): published examples, the KKT conditions on seeded random
// problems, and agreement with a brute-force search over every passive set on small ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { gram, matrix, matrixFromRows, nnls, nnlsGram, type Matrix } from '../../lib/stats/index.ts';

const close = (a: number, b: number, tol: number): void =>
  assert.ok(Math.abs(a - b) <= tol, `${a} is not within ${tol} of ${b}`);

function randomProblem(seed: number): { A: Matrix; b: Float64Array } {
  const rng = createRng(seed);
  const n = 1 + rng.int(8);
  const m = n + rng.int(30);
  const A = matrix(
    m,
    n,
    Float64Array.from({ length: m * n }, () => rng.next() * 2 - 1),
  );
  const b = Float64Array.from({ length: m }, () => rng.next() * 4 - 2);
  return { A, b };
}

/** ‖Ax − b‖² directly from the rows. */
function sse(A: Matrix, b: ArrayLike<number>, x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < A.rows; i++) {
    let r = -b[i]!;
    for (let j = 0; j < A.cols; j++) r += A.data[i * A.cols + j]! * x[j]!;
    s += r * r;
  }
  return s;
}

/** Gaussian elimination with partial pivoting: an independent solver for the brute force. */
function solve(a: number[][], rhs: number[]): number[] | null {
  const n = rhs.length;
  const m = a.map((row, i) => [...row, rhs[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    if (Math.abs(m[p]![c]!) < 1e-12) return null;
    [m[c], m[p]] = [m[p]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k <= n; k++) m[r]![k] = m[r]![k]! - f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/** The best x ≥ 0 among the least-squares solutions on every subset of columns (2ⁿ of them). */
function bruteForceNnls(A: Matrix, b: Float64Array): number {
  const n = A.cols;
  const g = gram(A, b);
  let best = sse(A, b, new Float64Array(n));
  for (let mask = 1; mask < 1 << n; mask++) {
    const idx = [...Array(n).keys()].filter((j) => mask & (1 << j));
    const sol = solve(
      idx.map((i) => idx.map((j) => g.xtx.data[i * n + j]!)),
      idx.map((i) => g.xty[i]!),
    );
    if (!sol || sol.some((v) => v < 0)) continue;
    const x = new Float64Array(n);
    idx.forEach((j, k) => (x[j] = sol[k]!));
    best = Math.min(best, sse(A, b, x));
  }
  return best;
}

test('NNLS reproduces the scipy.optimize.nnls documentation example', () => {
  // A = [[1, 0], [1, 0], [0, 1]], b = [2, 1, 1]: x₁ fits the mean of 2 and 1, x₂ = 1 exactly;
  // x = [1.5, 1], residual √(0.5² + 0.5²) = 0.7071067811865476.
  const r = nnls(
    matrixFromRows([
      [1, 0],
      [1, 0],
      [0, 1],
    ]),
    [2, 1, 1],
  );
  close(r.x[0]!, 1.5, 1e-15);
  close(r.x[1]!, 1, 1e-15);
  close(r.residualNorm, Math.SQRT1_2, 1e-15);
  // b = [−1, −1, −1]: every column correlates negatively with b, so x = 0 and the residual is √3.
  const z = nnls(
    matrixFromRows([
      [1, 0],
      [1, 0],
      [0, 1],
    ]),
    [-1, -1, -1],
  );
  assert.deepEqual(Array.from(z.x), [0, 0]);
  close(z.residualNorm, Math.sqrt(3), 1e-15);
});

test('NNLS reproduces the MATLAB lsqnonneg documentation example, where plain least squares goes negative', () => {
  // Unconstrained least squares gives [−2.5627, 3.1108]; lsqnonneg gives [0, 0.6929].
  const C = matrixFromRows([
    [0.0372, 0.2869],
    [0.6861, Math.SQRT1_2],
    [0.6233, 0.6245],
    [0.6344, 0.617],
  ]);
  const d = [0.8587, 0.1781, 0.0747, 0.8405];
  const r = nnls(C, d);
  assert.equal(r.x[0], 0);
  close(r.x[1]!, 0.6929, 5e-5);
  close(r.residualNorm, 0.9118, 5e-5);
});

test('NNLS satisfies the KKT conditions on 200 seeded random problems', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const { A, b } = randomProblem(seed);
    const r = nnls(A, b);
    const g = gram(A, b);
    const scale = Math.max(...Array.from(g.xty, Math.abs), ...Array.from(g.xtx.data, Math.abs));
    const tol = 1e-9 * scale;
    for (let j = 0; j < A.cols; j++) {
      // Dual w = Aᵀ(b − Ax) computed here, not taken from the solver.
      let w = g.xty[j]!;
      for (let k = 0; k < A.cols; k++) w -= g.xtx.data[j * A.cols + k]! * r.x[k]!;
      assert.ok(r.x[j]! >= 0, `seed ${seed}: primal feasibility x_${j} = ${r.x[j]}`);
      assert.ok(w <= tol, `seed ${seed}: dual feasibility w_${j} = ${w}`);
      assert.ok(
        Math.abs(r.x[j]! * w) <= tol * Math.max(1, r.x[j]!),
        `seed ${seed}: complementary slackness x·w = ${r.x[j]! * w}`,
      );
      if (r.x[j]! > 0) close(w, 0, tol);
      close(r.dual[j]!, w, tol);
    }
  }
});

test('NNLS attains the minimum of a brute-force search over every passive set', () => {
  for (let seed = 1; seed <= 80; seed++) {
    const { A, b } = randomProblem(1000 + seed);
    if (A.cols > 6) continue;
    const r = nnls(A, b);
    const got = sse(A, b, r.x);
    const best = bruteForceNnls(A, b);
    assert.ok(got <= best + 1e-9 * Math.max(1, best), `seed ${seed}: ${got} > ${best}`);
  }
});

test('NNLS on the normal equations gives the same x as on the rows', () => {
  const { A, b } = randomProblem(5);
  assert.deepEqual(nnlsGram(gram(A, b)).x, nnls(A, b).x);
});

test('NNLS returns the unconstrained solution when it is already positive', () => {
  // y = 2·a₁ + 3·a₂ exactly: the least-squares solution [2, 3] is feasible.
  const A = matrixFromRows([
    [1, 0],
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  const r = nnls(A, [2, 3, 5, 7]);
  close(r.x[0]!, 2, 1e-12);
  close(r.x[1]!, 3, 1e-12);
  close(r.residualNorm, 0, 1e-12);
});
