// The constrained weight fit (lib/stats/simplex-nnls.ts, box-simplex-qp.ts): minimise
// L‖Xw − y‖² + λ‖w − w₀‖² with w ≥ 0, Σw = 1, w_i ≤ u. Checked by the KKT conditions on
// seeded random problems (Q and c rebuilt here from the rows, not taken from the solver), by a
// brute-force search over every free/lower/upper pattern on small ones, and on edge cases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  boxSimplexKkt,
  gram,
  matrix,
  matrixFromRows,
  priorLeastSquares,
  simplexNnls,
  type Matrix,
} from '../../lib/stats/index.ts';

const close = (a: number, b: number, tol: number): void =>
  assert.ok(Math.abs(a - b) <= tol, `${a} is not within ${tol} of ${b}`);

interface Problem {
  X: Matrix;
  y: Float64Array;
  prior: Float64Array;
  l2: number;
  upper: number;
  loss: 'sum' | 'mean';
}

function randomProblem(seed: number, d = 2 + (seed % 6)): Problem {
  const rng = createRng(seed);
  const m = d + 5 + rng.int(150);
  const X = matrix(
    m,
    d,
    Float64Array.from({ length: m * d }, () => rng.next()),
  );
  // True weights of either sign and any size, so every kind of bound ends up binding somewhere.
  const truth = Float64Array.from({ length: d }, () => rng.next() * 1.6 - 0.5);
  const y = Float64Array.from({ length: m }, (_, i) => {
    let s = (rng.next() - 0.5) * 0.3;
    for (let j = 0; j < d; j++) s += X.data[i * d + j]! * truth[j]!;
    return s;
  });
  const raw = Float64Array.from({ length: d }, () => rng.next());
  const total = raw.reduce((a, b) => a + b, 0);
  const prior = raw.map((v) => v / total);
  const l2 = [0, 0.01, 0.1, 1, 10, 1000][rng.int(6)]!;
  const upper = d === 2 ? 0.5 + rng.int(2) * 0.25 : [0.5, 0.5, 0.4, 1][rng.int(4)]!;
  return { X, y, prior, l2, upper, loss: rng.int(3) === 0 ? 'mean' : 'sum' };
}

/** L‖Xw − y‖² + λ‖w − w₀‖², straight from the rows. */
function objective(p: Problem, w: ArrayLike<number>): number {
  const { X, y } = p;
  let sse = 0;
  for (let i = 0; i < X.rows; i++) {
    let r = -y[i]!;
    for (let j = 0; j < X.cols; j++) r += X.data[i * X.cols + j]! * w[j]!;
    sse += r * r;
  }
  let pen = 0;
  for (let j = 0; j < X.cols; j++) pen += (w[j]! - p.prior[j]!) ** 2;
  return (p.loss === 'mean' ? sse / X.rows : sse) + p.l2 * pen;
}

/** Q = L·XᵀX + λI and c = L·Xᵀy + λw₀ from the rows. */
function qp(p: Problem): { Q: Matrix; c: Float64Array } {
  const { X, y } = p;
  const d = X.cols;
  const L = p.loss === 'mean' ? 1 / X.rows : 1;
  const Q = new Float64Array(d * d);
  const c = new Float64Array(d);
  for (let i = 0; i < X.rows; i++) {
    for (let j = 0; j < d; j++) {
      c[j] = c[j]! + L * X.data[i * d + j]! * y[i]!;
      for (let k = 0; k < d; k++) Q[j * d + k] = Q[j * d + k]! + L * X.data[i * d + j]! * X.data[i * d + k]!;
    }
  }
  for (let j = 0; j < d; j++) {
    Q[j * d + j] = Q[j * d + j]! + p.l2;
    c[j] = c[j]! + p.l2 * p.prior[j]!;
  }
  return { Q: matrix(d, d, Q), c };
}

const fit = (p: Problem) => simplexNnls(gram(p.X, p.y), { l2: p.l2, prior: p.prior, upper: p.upper, loss: p.loss });

/** Solves the bordered system [Q_FF 1; 1ᵀ 0][z; ν] = [r; s] by Gaussian elimination (independent of src). */
function solveBordered(
  Q: Matrix,
  c: Float64Array,
  free: number[],
  fixed: Map<number, number>,
  u: number,
): number[] | null {
  const m = free.length;
  const a = free.map((i) => [...free.map((j) => Q.data[i * Q.cols + j]!), 1]);
  a.push([...free.map(() => 1), 0]);
  let held = 0;
  for (const v of fixed.values()) held += v;
  const rhs = [
    ...free.map((i) => c[i]! - [...fixed].reduce((s, [k, v]) => s + Q.data[i * Q.cols + k]! * v, 0)),
    1 - held,
  ];
  const M = a.map((row, i) => [...row, rhs[i]!]);
  for (let col = 0; col <= m; col++) {
    let p = col;
    for (let r = col + 1; r <= m; r++) if (Math.abs(M[r]![col]!) > Math.abs(M[p]![col]!)) p = r;
    if (Math.abs(M[p]![col]!) < 1e-14) return null;
    [M[col], M[p]] = [M[p]!, M[col]!];
    for (let r = 0; r <= m; r++) {
      if (r === col) continue;
      const f = M[r]![col]! / M[col]![col]!;
      for (let k = col; k <= m + 1; k++) M[r]![k] = M[r]![k]! - f * M[col]![k]!;
    }
  }
  const z = free.map((_, i) => M[i]![m + 1]! / M[i]![i]!);
  return z.every((v) => v >= -1e-12 && v <= u + 1e-12) ? z : null;
}

/** The minimum over all 3^d patterns (each weight free, at 0 or at u) of the face's feasible optimum. */
function bruteForce(p: Problem): { w: Float64Array; value: number } {
  const d = p.X.cols;
  const { Q, c } = qp(p);
  let best: { w: Float64Array; value: number } = { w: new Float64Array(d), value: Infinity };
  for (let code = 0; code < 3 ** d; code++) {
    const free: number[] = [];
    const fixed = new Map<number, number>();
    for (let i = 0, t = code; i < d; i++, t = Math.floor(t / 3)) {
      if (t % 3 === 0) free.push(i);
      else fixed.set(i, t % 3 === 1 ? 0 : p.upper);
    }
    let w: Float64Array | null = null;
    if (free.length === 0) {
      const sum = [...fixed.values()].reduce((a, b) => a + b, 0);
      if (Math.abs(sum - 1) < 1e-12) w = Float64Array.from({ length: d }, (_, i) => fixed.get(i)!);
    } else {
      const z = solveBordered(Q, c, free, fixed, p.upper);
      if (z) {
        w = new Float64Array(d);
        for (const [k, v] of fixed) w[k] = v;
        free.forEach((i, r) => (w![i] = z[r]!));
      }
    }
    if (w) {
      const value = objective(p, w);
      if (value < best.value) best = { w, value };
    }
  }
  return best;
}

test('the constrained fit satisfies every KKT condition on 500 seeded random problems', () => {
  for (let seed = 1; seed <= 500; seed++) {
    const p = randomProblem(seed);
    const r = fit(p);
    const { Q, c } = qp(p);
    const scale = Math.max(...Array.from(Q.data, Math.abs), ...Array.from(c, Math.abs));
    const k = boxSimplexKkt(Q, c, p.upper, r);
    const tol = 1e-9 * scale;
    assert.ok(k.stationarity <= tol, `seed ${seed}: stationarity ${k.stationarity} (scale ${scale})`);
    assert.ok(k.dual <= tol, `seed ${seed}: a bound multiplier is negative: ${k.dual}`);
    assert.ok(k.complementarity <= tol, `seed ${seed}: complementary slackness ${k.complementarity}`);
    assert.ok(k.primal <= 1e-12, `seed ${seed}: primal feasibility ${k.primal}`);
  }
});

test('the constraints are never violated: w ≥ 0 and w_i ≤ u exactly, Σw = 1 within 1e-9', () => {
  for (let seed = 1; seed <= 500; seed++) {
    const p = randomProblem(seed, 7);
    const { w } = fit(p);
    assert.equal(w.length, 7);
    for (const wi of w) assert.ok(wi >= 0 && wi <= p.upper, `seed ${seed}: weight ${wi} outside [0, ${p.upper}]`);
    close(
      w.reduce((a, b) => a + b, 0),
      1,
      1e-9,
    );
  }
});

test('the constrained fit equals a brute-force search over every free/lower/upper pattern', () => {
  for (let seed = 1; seed <= 150; seed++) {
    const p = randomProblem(5000 + seed, 2 + (seed % 4));
    if (p.l2 === 0 && p.X.rows < 3 * p.X.cols) continue;
    const r = fit(p);
    const best = bruteForce(p);
    const got = objective(p, r.w);
    assert.ok(got <= best.value + 1e-9 * Math.max(1, best.value), `seed ${seed}: ${got} > brute force ${best.value}`);
    for (let i = 0; i < r.w.length; i++) close(r.w[i]!, best.w[i]!, 1e-6);
    close(r.loss, got, 1e-8 * Math.max(1, got));
  }
});

test('the solver does not clip: clipping the unconstrained fit breaks a constraint, the KKT point does not', () => {
  // Truth 0.9, 0.3, −0.2: the unconstrained fit (0.873, 0.302, −0.177) breaks both bounds.
  // Clipping it to [0, .5] leaves a sum of 0.802; rescaling that to 1 pushes w₀ to 0.623 > .5.
  const rows = [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
    [1, 1, 0],
    [0, 1, 1],
    [1, 0, 1],
    [1, 1, 1],
    [0.5, 0.2, 0.9],
  ];
  const X = matrixFromRows(rows);
  const y = Float64Array.from(rows, (r) => 0.9 * r[0]! + 0.3 * r[1]! - 0.2 * r[2]!);
  const p: Problem = { X, y, prior: Float64Array.of(1 / 3, 1 / 3, 1 / 3), l2: 0.1, upper: 0.5, loss: 'sum' };
  const ls = priorLeastSquares(gram(X, y), p);
  assert.ok(ls[0]! > 0.5 && ls[2]! < 0, `the unconstrained fit ${Array.from(ls)} should break the bounds`);
  const clipped = Array.from(ls, (v) => Math.min(0.5, Math.max(0, v)));
  const sum = clipped.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - 1) > 0.1, 'clipping alone breaks the sum');
  assert.ok(clipped[0]! / sum > 0.5, 'clipping then rescaling breaks the cap');
  const r = fit(p);
  // The optimum holds w₀ at the cap and keeps a little of w₂, which clipping would have zeroed.
  assert.equal(r.w[0], 0.5);
  assert.ok(r.w[2]! > 0.005 && r.w[2]! < 0.01);
  close(r.w[0]! + r.w[1]! + r.w[2]!, 1, 1e-15);
  const k = boxSimplexKkt(r.Q, r.c, 0.5, r);
  assert.ok(k.stationarity < 1e-12 && k.dual <= 0 && k.complementarity < 1e-12);
  assert.ok(r.upper[0]! > 0, 'the cap on w₀ carries a positive multiplier');
});

test('a vertex optimum with no weight strictly between its bounds is found and certified', () => {
  // d = 4, u = .5: y rewards dimensions 0 and 1 only, so the optimum is (.5, .5, 0, 0).
  const rng = createRng(3);
  const X = matrix(
    60,
    4,
    Float64Array.from({ length: 240 }, () => rng.next()),
  );
  const y = Float64Array.from(
    { length: 60 },
    (_, i) => 2 * X.data[i * 4]! + 2 * X.data[i * 4 + 1]! - X.data[i * 4 + 2]!,
  );
  const p: Problem = { X, y, prior: Float64Array.of(0.25, 0.25, 0.25, 0.25), l2: 0.1, upper: 0.5, loss: 'sum' };
  const r = fit(p);
  assert.deepEqual(Array.from(r.w), [0.5, 0.5, 0, 0]);
  const { Q, c } = qp(p);
  const k = boxSimplexKkt(Q, c, 0.5, r);
  assert.ok(k.stationarity < 1e-9 && k.dual <= 0 && k.complementarity < 1e-9);
});

test('a feasible truth with the prior at the truth is recovered exactly, as the unconstrained fit is', () => {
  const rng = createRng(8);
  const truth = Float64Array.of(0.3, 0.25, 0.2, 0.1, 0.08, 0.05, 0.02);
  const X = matrix(
    100,
    7,
    Float64Array.from({ length: 700 }, () => rng.next()),
  );
  const y = Float64Array.from({ length: 100 }, (_, i) => truth.reduce((s, t, j) => s + t * X.data[i * 7 + j]!, 0));
  const o = { l2: 0.1, prior: truth, upper: 0.5 };
  const r = simplexNnls(gram(X, y), o);
  const ls = priorLeastSquares(gram(X, y), o);
  for (let j = 0; j < 7; j++) {
    close(r.w[j]!, truth[j]!, 1e-10);
    close(ls[j]!, truth[j]!, 1e-10);
  }
});

test('a strong prior pulls the fit to the old weights when they are feasible', () => {
  const p = { ...randomProblem(42, 7), l2: 1e9, upper: 0.5 };
  const r = fit(p);
  for (let j = 0; j < 7; j++) close(r.w[j]!, p.prior[j]!, 1e-6);
});

test('two weights capped at .5 leave exactly one feasible point, (.5, .5)', () => {
  const p = { ...randomProblem(9, 2), upper: 0.5 };
  assert.deepEqual(Array.from(fit(p).w), [0.5, 0.5]);
});

test('the fit is deterministic: the same problem gives bit-identical weights', () => {
  const p = randomProblem(77, 7);
  assert.deepEqual(fit(p).w, fit(p).w);
});

test('impossible constraints and a non-convex problem are refused', () => {
  const p = randomProblem(4, 3);
  assert.throws(
    () => simplexNnls(gram(p.X, p.y), { l2: 0.1, prior: p.prior, upper: 0.3 }),
    /3 weights each ≤ 0.3 cannot sum to 1/,
  );
  // Two identical columns and no prior: XᵀX is singular, the minimiser is not unique.
  const X = matrixFromRows([
    [1, 1, 0],
    [2, 2, 1],
    [0, 0, 1],
    [3, 3, 2],
  ]);
  assert.throws(
    () => simplexNnls(gram(X, [1, 2, 3, 4]), { l2: 0, prior: [0.3, 0.3, 0.4], upper: 1 }),
    /not positive definite/,
  );
  assert.throws(() => simplexNnls(gram(X, [1, 2, 3, 4]), { l2: -1, prior: [0.3, 0.3, 0.4] }), /l2 must be ≥ 0/);
  assert.throws(
    () => simplexNnls(gram(X, [1, 2, 3, 4]), { l2: 0.1, prior: [0.5, 0.5] }),
    /3 dimensions but 2 prior weights/,
  );
});
