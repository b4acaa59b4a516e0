// Dense row-major matrices and the small linear algebra the weight solvers need: the Gram
// matrix XᵀX and vector Xᵀy over a multiset of rows (a fold, a bootstrap resample, where a row
// drawn twice counts twice, exactly as if the resampled matrix had been built), X·w, and a
// Cholesky solve for the symmetric positive definite systems of the active-set methods.

/** An m × n matrix, row-major: entry (i, j) is data[i·cols + j]. */
export interface Matrix {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

/** A rows × cols matrix over data (zeros when omitted); data is used, not copied. */
export function matrix(rows: number, cols: number, data?: Float64Array): Matrix {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 0 || cols < 0) {
    throw new RangeError(`matrix: rows and cols must be non-negative integers, got ${rows} × ${cols}`);
  }
  const d = data ?? new Float64Array(rows * cols);
  if (d.length !== rows * cols)
    throw new RangeError(`matrix: ${rows} × ${cols} needs ${rows * cols} values, got ${d.length}`);
  return { rows, cols, data: d };
}

/** A matrix from an array of equal-length rows. */
export function matrixFromRows(rows: readonly (readonly number[])[]): Matrix {
  const cols = rows[0]?.length ?? 0;
  const data = new Float64Array(rows.length * cols);
  rows.forEach((r, i) => {
    if (r.length !== cols) throw new RangeError(`matrixFromRows: row ${i} has ${r.length} values, row 0 has ${cols}`);
    data.set(r, i * cols);
  });
  return matrix(rows.length, cols, data);
}

/** The sufficient statistics of least squares over a multiset of rows of (X, y). */
export interface Gram {
  /** XᵀX, d × d. */
  readonly xtx: Matrix;
  /** Xᵀy, length d. */
  readonly xty: Float64Array;
  /** yᵀy, so objectives can be reported exactly. */
  readonly yty: number;
  /** Number of rows summed (with multiplicity). */
  readonly n: number;
}

/**
 * XᵀX, Xᵀy and yᵀy over the given rows (all rows when omitted). A row listed twice counts
 * twice: gram(X, y, resample) equals the Gram matrix of the resampled matrix, without building it.
 */
export function gram(X: Matrix, y: ArrayLike<number>, rows?: ArrayLike<number>): Gram {
  if (y.length !== X.rows) throw new RangeError(`gram: X has ${X.rows} rows but y has ${y.length} values`);
  const d = X.cols;
  const a = X.data;
  const xtx = new Float64Array(d * d);
  const xty = new Float64Array(d);
  let yty = 0;
  const n = rows ? rows.length : X.rows;
  for (let t = 0; t < n; t++) {
    const r = rows ? rows[t]! : t;
    const o = r * d;
    const yr = y[r]!;
    yty += yr * yr;
    for (let j = 0; j < d; j++) {
      const xj = a[o + j]!;
      xty[j] = xty[j]! + xj * yr;
      const jd = j * d;
      for (let k = j; k < d; k++) xtx[jd + k] = xtx[jd + k]! + xj * a[o + k]!;
    }
  }
  for (let j = 0; j < d; j++) for (let k = 0; k < j; k++) xtx[j * d + k] = xtx[k * d + j]!;
  return { xtx: matrix(d, d, xtx), xty, yty, n };
}

/**
 * XᵀX, Xᵀy and yᵀy with row r counted counts[r] times: the same sums as gram() over a list in
 * which r appears counts[r] times, visited in row order and skipping rows drawn zero times (a
 * bootstrap resample leaves out about 37 % of them), which is faster than following the list.
 */
export function gramCounts(X: Matrix, y: ArrayLike<number>, counts: ArrayLike<number>): Gram {
  if (y.length !== X.rows || counts.length !== X.rows) {
    throw new RangeError(`gramCounts: X has ${X.rows} rows but y has ${y.length} values and counts ${counts.length}`);
  }
  const d = X.cols;
  const a = X.data;
  const xtx = new Float64Array(d * d);
  const xty = new Float64Array(d);
  let yty = 0;
  let n = 0;
  for (let r = 0; r < X.rows; r++) {
    const m = counts[r]!;
    if (m === 0) continue;
    n += m;
    const o = r * d;
    const my = m * y[r]!;
    yty += my * y[r]!;
    for (let j = 0; j < d; j++) {
      const xj = a[o + j]!;
      xty[j] = xty[j]! + xj * my;
      const mxj = m * xj;
      const jd = j * d;
      for (let k = j; k < d; k++) xtx[jd + k] = xtx[jd + k]! + mxj * a[o + k]!;
    }
  }
  for (let j = 0; j < d; j++) for (let k = 0; k < j; k++) xtx[j * d + k] = xtx[k * d + j]!;
  return { xtx: matrix(d, d, xtx), xty, yty, n };
}

/** X·w for the given rows (all rows when omitted), one value per listed row. */
export function matVec(X: Matrix, w: ArrayLike<number>, rows?: ArrayLike<number>): Float64Array {
  if (w.length !== X.cols) throw new RangeError(`matVec: X has ${X.cols} columns but w has ${w.length} values`);
  const d = X.cols;
  const a = X.data;
  const n = rows ? rows.length : X.rows;
  const out = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const o = (rows ? rows[t]! : t) * d;
    let s = 0;
    for (let j = 0; j < d; j++) s += a[o + j]! * w[j]!;
    out[t] = s;
  }
  return out;
}

/**
 * Cholesky factor in place of the symmetric positive definite n × n matrix a (row-major; the
 * lower triangle becomes L with a = LLᵀ). False when a pivot is not positive relative to the
 * diagonal's scale, i.e. the matrix is singular or indefinite to working precision.
 */
export function choleskyInPlace(a: Float64Array, n: number): boolean {
  let scale = 0;
  for (let i = 0; i < n; i++) scale = Math.max(scale, Math.abs(a[i * n + i]!));
  const floor = scale * 1e-14;
  for (let j = 0; j < n; j++) {
    let s = a[j * n + j]!;
    for (let k = 0; k < j; k++) s -= a[j * n + k]! ** 2;
    if (!(s > floor)) return false;
    const ljj = Math.sqrt(s);
    a[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let t = a[i * n + j]!;
      for (let k = 0; k < j; k++) t -= a[i * n + k]! * a[j * n + k]!;
      a[i * n + j] = t / ljj;
    }
  }
  return true;
}

/** Solves LLᵀx = b in place of b, L the lower triangle left by choleskyInPlace. */
export function choleskySolveInPlace(l: Float64Array, n: number, b: Float64Array): void {
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[i * n + k]! * b[k]!;
    b[i] = s / l[i * n + i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = b[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k * n + i]! * b[k]!;
    b[i] = s / l[i * n + i]!;
  }
}

/** The principal submatrix of the square matrix a on the given indices, as a packed array. */
export function principalSubmatrix(a: Matrix, idx: ArrayLike<number>): Float64Array {
  const m = idx.length;
  const out = new Float64Array(m * m);
  for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) out[i * m + j] = a.data[idx[i]! * a.cols + idx[j]!]!;
  return out;
}
