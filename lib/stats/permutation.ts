// Negative controls by permutation: the distribution a gate's statistic takes when the labels it
// correlates with (success, needs_clarification…) carry no information about the scores. Each
// replicate shuffles the labels WITHIN their group (e.g. success within task, so a task that
// succeeds more often keeps its base rate and the null does not reward "knows the task") and
// recomputes the statistic. Replicate r of a run is the same for the same seed on every machine
// (mulberry32, createRng from the public API; one generator, groups shuffled in sorted key order).
// The decision rule used by the RC1 gates: the real statistic must EXCEED the null's 95th
// percentile (type-7 quantile) — a one-sided test at about the 5 % level. p-value: the add-one
// estimate (1 + #{null ≥ real}) / (N + 1) (Phipson & Smyth 2010), never 0.
// Replicates where the statistic is undefined (NaN: e.g. a correlation of a constant) are left
// out of the quantiles and counted; when every replicate is NaN the quantiles are NaN and no
// check built on them passes.
import { createRng, type Rng } from 'rc1-build';
import { quantileSorted } from './summary.ts';

/** The items of each group (groups in sorted key order; members ascending), for permuteWithinGroups. */
export function groupMembers(groups: ArrayLike<string | number> | undefined, n: number): Int32Array[] {
  if (groups && groups.length !== n) throw new RangeError(`groupMembers: ${n} items but ${groups.length} group keys`);
  const by = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const key = groups ? `${typeof groups[i]}:${String(groups[i])}` : '';
    let g = by.get(key);
    if (!g) by.set(key, (g = []));
    g.push(i);
  }
  return [...by.keys()].sort().map((k) => Int32Array.from(by.get(k)!));
}

/**
 * Writes into out a copy of labels shuffled within each group of members (Fisher–Yates per
 * group). Items not in any group keep their label. Returns out.
 */
export function permuteWithinGroups(
  labels: ArrayLike<number>,
  members: readonly Int32Array[],
  rng: Rng,
  out?: Float64Array,
): Float64Array {
  const o = out ?? new Float64Array(labels.length);
  if (o.length !== labels.length)
    throw new RangeError(`permuteWithinGroups: out has ${o.length} slots for ${labels.length} labels`);
  for (let i = 0; i < labels.length; i++) o[i] = labels[i]!;
  for (const g of members) {
    for (let j = g.length - 1; j > 0; j--) {
      const k = rng.int(j + 1);
      const a = g[j]!;
      const b = g[k]!;
      const t = o[a]!;
      o[a] = o[b]!;
      o[b] = t;
    }
  }
  return o;
}

/**
 * The row map of a permutation of whole clusters (for a null at the cluster level: rows of one
 * cluster are correlated, so shuffling single rows gives a null that is too narrow): row j of
 * cluster c takes the label of row j of cluster perm[c] — row j mod its size where the two sizes
 * differ. Pass a permutation of the cluster numbers (permutationNull over 0..C−1 within strata).
 */
export function clusterRowMap(members: readonly Int32Array[], perm: ArrayLike<number>, out: Int32Array): Int32Array {
  if (perm.length !== members.length)
    throw new RangeError(`clusterRowMap: ${members.length} clusters but ${perm.length} permuted`);
  for (let c = 0; c < members.length; c++) {
    const to = members[c]!;
    const from = members[perm[c]!]!;
    for (let j = 0; j < to.length; j++) out[to[j]!] = from[j % from.length]!;
  }
  return out;
}

/** Quantiles of the permutation null shown beside the real value in every report. */
export interface NullQuantiles {
  p05: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
}

export interface PermutationNull {
  /** The statistic on the real labels. */
  real: number;
  /** Number of permutations run. */
  permutations: number;
  /** Permutations whose statistic was undefined (NaN), left out of the quantiles. */
  undefined: number;
  quantiles: NullQuantiles;
  /** (1 + #{null ≥ real}) / (N + 1), one-sided; NaN when real is NaN. */
  p_value: number;
  /** real > quantiles.p95: the real labels carry signal the shuffled ones do not. */
  exceeds_p95: boolean;
  seed: number;
  /** What was permuted, in words (for the report). */
  permuted: string;
  /** True when no group holds two different labels: every permutation is the identity, so the control cannot apply. */
  degenerate: boolean;
}

export interface PermutationOptions {
  /** Number of permutations N (RC1 config: negative_controls.permutations, default 200). */
  permutations: number;
  seed: number;
  /** The group of each item: labels are shuffled only among items of one group. Omit: one group. */
  groups?: ArrayLike<string | number>;
  /** What is permuted, e.g. "success within task" (for the report). */
  permuted?: string;
}

/** The null's quantiles of replicates (NaN left out). */
export function nullQuantiles(replicates: ArrayLike<number>): NullQuantiles {
  const sorted = Float64Array.from(
    Array.prototype.filter.call(replicates, (v: number) => !Number.isNaN(v)) as number[],
  ).sort();
  const q = (p: number): number => quantileSorted(sorted, p);
  return { p05: q(0.05), p50: q(0.5), p90: q(0.9), p95: q(0.95), p99: q(0.99) };
}

/**
 * Runs statistic on the real labels and on N seeded within-group permutations of them. The
 * permuted array passed to statistic is reused between calls: copy it to keep it.
 */
export function permutationNull(
  labels: ArrayLike<number>,
  options: PermutationOptions,
  statistic: (labels: Float64Array) => number,
): PermutationNull & { replicates: Float64Array } {
  const n = labels.length;
  if (!Number.isInteger(options.permutations) || options.permutations < 1) {
    throw new RangeError(`permutationNull: permutations must be a positive integer, got ${options.permutations}`);
  }
  const members = groupMembers(options.groups, n);
  const degenerate = members.every((g) => g.every((i) => labels[i] === labels[g[0]!]));
  const real = statistic(Float64Array.from(labels));
  const rng = createRng(options.seed);
  const buf = new Float64Array(n);
  const replicates = new Float64Array(options.permutations);
  let undef = 0;
  let atLeast = 0;
  for (let r = 0; r < options.permutations; r++) {
    const v = statistic(permuteWithinGroups(labels, members, rng, buf));
    replicates[r] = v;
    if (Number.isNaN(v)) undef++;
    else if (v >= real) atLeast++;
  }
  const quantiles = nullQuantiles(replicates);
  return {
    real,
    permutations: options.permutations,
    undefined: undef,
    quantiles,
    p_value: Number.isNaN(real) ? NaN : (1 + atLeast) / (1 + options.permutations - undef),
    exceeds_p95: real > quantiles.p95,
    seed: options.seed,
    permuted: options.permuted ?? 'labels',
    degenerate,
    replicates,
  };
}

/** The report form of a null: everything but the raw replicates. */
export function nullSummary(p: PermutationNull): PermutationNull {
  const { real, permutations, undefined: u, quantiles, p_value, exceeds_p95, seed, permuted, degenerate } = p;
  return { real, permutations, undefined: u, quantiles, p_value, exceeds_p95, seed, permuted, degenerate };
}
