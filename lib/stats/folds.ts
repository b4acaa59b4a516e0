// Deterministic k-fold assignment for cross-validation. The items are shuffled with mulberry32
// (createRng from the public API) seeded by the caller, then dealt round-robin: item perm[j]
// goes to fold j mod k, so fold sizes differ by at most one. Stratified: the strata are taken
// in sorted key order, each stratum's members are shuffled (one generator, in that order) and
// dealt on from where the previous stratum stopped, so every stratum is spread over the folds
// within one item and the folds stay within one item of each other in size. The same
// (n, k, seed, strata) always gives the same folds, whatever machine runs it.
import { createRng } from 'rc1-build';

export interface Fold {
  /** 0-based fold number. */
  index: number;
  /** Indices of the items trained on (every other fold), ascending. */
  train: Int32Array;
  /** Indices of the held-out items, ascending. */
  test: Int32Array;
}

/** The fold number of each item. strata, if given, has one key per item. */
export function foldAssignment(n: number, k: number, seed: number, strata?: ArrayLike<string | number>): Int32Array {
  if (!Number.isInteger(k) || k < 2) throw new RangeError(`kFolds: k must be an integer ≥ 2, got ${k}`);
  if (!Number.isInteger(n) || n < k) throw new RangeError(`kFolds: need at least k = ${k} items, got ${n}`);
  if (strata && strata.length !== n) throw new RangeError(`kFolds: ${n} items but ${strata.length} strata keys`);
  const rng = createRng(seed);
  const fold = new Int32Array(n);
  const groups = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const key = strata ? `${typeof strata[i]}:${String(strata[i])}` : '';
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(i);
  }
  let dealt = 0;
  for (const key of [...groups.keys()].sort()) {
    for (const i of rng.shuffle(groups.get(key)!)) fold[i] = dealt++ % k;
  }
  return fold;
}

/** k folds of n items (see the module comment); seed any 32-bit integer. */
export function kFolds(n: number, k: number, seed: number, strata?: ArrayLike<string | number>): Fold[] {
  return foldsOf(foldAssignment(n, k, seed, strata), k);
}

/**
 * k folds of n items that keep every GROUP (e.g. the rollouts of one scenario) on one side: no
 * group is both trained on and held out, so a held-out item never has a sibling in training.
 * The groups are shuffled (seeded) within their stratum (groupStrata: one key per item, read from
 * each group's first item — e.g. the task) and dealt round-robin as in kFolds, so folds differ by
 * at most one group per stratum. Throws when there are fewer groups than folds.
 */
export function groupKFolds(
  groups: ArrayLike<string | number>,
  k: number,
  seed: number,
  groupStrata?: ArrayLike<string | number>,
): Fold[] {
  const n = groups.length;
  if (groupStrata && groupStrata.length !== n)
    throw new RangeError(`groupKFolds: ${n} items but ${groupStrata.length} strata keys`);
  const ids = new Map<string, number>();
  const first: number[] = [];
  const groupOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const key = String(groups[i]);
    let g = ids.get(key);
    if (g === undefined) {
      g = first.length;
      ids.set(key, g);
      first.push(i);
    }
    groupOf[i] = g;
  }
  if (first.length < k) throw new RangeError(`groupKFolds: need at least k = ${k} groups, got ${first.length}`);
  const groupFold = foldAssignment(first.length, k, seed, groupStrata ? first.map((i) => groupStrata[i]!) : undefined);
  const fold = Int32Array.from(groupOf, (g) => groupFold[g]!);
  return foldsOf(fold, k);
}

/** The folds of a fold assignment (fold[i] = the fold of item i). */
export function foldsOf(fold: Int32Array, k: number): Fold[] {
  const n = fold.length;
  const sizes = new Int32Array(k);
  for (let i = 0; i < n; i++) sizes[fold[i]!]!++;
  return Array.from({ length: k }, (_, f) => {
    const test = new Int32Array(sizes[f]!);
    const train = new Int32Array(n - sizes[f]!);
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) {
      if (fold[i] === f) test[a++] = i;
      else train[b++] = i;
    }
    return { index: f, train, test };
  });
}
