// The cluster (block) bootstrap: resample the independent UNIT — the scenario, whose N candidate
// rollouts share a question, a judge context and a success rate — not the rows inside it.
// Resampling rows treats the N rollouts of one scenario as N independent observations and gives
// intervals about √N too narrow (Cameron, Gelbach & Miller 2008; Field & Welsh 2007). A resample
// draws C clusters with replacement from the C clusters (within each stratum, when strata are
// given: a stratum of c clusters gets c draws, so a task-stratified sample keeps its task counts)
// and hands the statistic the item indices of every drawn cluster, repeats included. Seeded
// (mulberry32 via createRng): resample r is the same for the same seed on every machine.
// Intervals: the percentile bootstrap (bootstrap.ts percentileInterval). Resamples where a
// statistic is undefined (NaN: e.g. no eligible scenario drawn) are counted per statistic
// (interval.undefined) and left out; when more than MAX_UNDEFINED_SHARE of them are, the interval
// is undefined (NaN bounds): an interval over the resamples that happened to be defined would be
// conditioned on the draw, and no check built on it passes (intervalCheck says why).
// moreClustersNeeded: when an interval straddles a threshold, the rough number of additional
// clusters that would make it clear the threshold if the estimate stayed where it is, from the
// √C scaling of a bootstrap interval's half-width: C' = C·((estimate − bound)/(estimate − threshold))².
import { createRng } from 'rc1-build';
import { percentileInterval, type Interval } from './bootstrap.ts';
import { groupMembers } from './permutation.ts';

export interface Clusters {
  /** The cluster number of each item (0..C−1, in first-appearance order of the keys). */
  of: Int32Array;
  /** The item indices of each cluster, ascending. */
  members: Int32Array[];
  /** The key of each cluster. */
  keys: string[];
}

/** Clusters from one key per item (e.g. the scenario id of each rollout). */
export function clustersOf(keys: ArrayLike<string | number>): Clusters {
  const n = keys.length;
  const index = new Map<string, number>();
  const of = new Int32Array(n);
  const lists: number[][] = [];
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = String(keys[i]);
    let c = index.get(k);
    if (c === undefined) {
      c = lists.length;
      index.set(k, c);
      lists.push([]);
      names.push(k);
    }
    of[i] = c;
    lists[c]!.push(i);
  }
  return { of, members: lists.map((l) => Int32Array.from(l)), keys: names };
}

/** Above this share of undefined (NaN) resamples a statistic's interval is undefined. */
export const MAX_UNDEFINED_SHARE = 0.05;

export interface ClusterBootstrapOptions {
  /** Number of resamples B. */
  resamples: number;
  seed: number;
  /** Interval level, default .95. */
  level?: number;
  /** One stratum key per CLUSTER (e.g. the task of each scenario): clusters are drawn within strata. */
  strata?: ArrayLike<string | number>;
}

export interface ClusterBootstrapResult<K extends string> {
  /** One record of statistics per resample, in resample order. */
  replicates: Record<K, number>[];
  /** The percentile interval of each statistic with its count of NaN replicates (left out; NaN bounds when more than MAX_UNDEFINED_SHARE are). */
  intervals: Record<K, Interval>;
  clusters: number;
  resamples: number;
}

/**
 * Runs statistic on B cluster resamples. `items` holds the item indices of the drawn clusters,
 * concatenated (a cluster drawn twice appears twice); `drawn` the drawn cluster numbers. Both
 * arrays are reused between calls: copy them to keep them.
 */
export function clusterBootstrap<K extends string>(
  clusters: Pick<Clusters, 'members'>,
  options: ClusterBootstrapOptions,
  statistic: (items: Int32Array, drawn: Int32Array) => Record<K, number>,
): ClusterBootstrapResult<K> {
  const C = clusters.members.length;
  if (!Number.isInteger(options.resamples) || options.resamples < 1) {
    throw new RangeError(`clusterBootstrap: resamples must be a positive integer, got ${options.resamples}`);
  }
  if (C === 0) throw new RangeError('clusterBootstrap: no clusters to resample');
  const strata = groupMembers(options.strata, C);
  const rng = createRng(options.seed);
  const drawn = new Int32Array(C);
  let maxItems = 0;
  for (const m of clusters.members) maxItems = Math.max(maxItems, m.length);
  const buf = new Int32Array(C * maxItems);
  const replicates: Record<K, number>[] = [];
  for (let r = 0; r < options.resamples; r++) {
    let d = 0;
    for (const s of strata) for (let j = 0; j < s.length; j++) drawn[d++] = s[rng.int(s.length)]!;
    let t = 0;
    for (let j = 0; j < C; j++) {
      const m = clusters.members[drawn[j]!]!;
      buf.set(m, t);
      t += m.length;
    }
    replicates.push(statistic(buf.subarray(0, t), drawn));
  }
  const intervals = {} as Record<K, Interval>;
  for (const key of Object.keys(replicates[0]!) as K[]) {
    const vals = replicates.map((rep) => rep[key]).filter((v) => !Number.isNaN(v));
    const undef = replicates.length - vals.length;
    intervals[key] =
      vals.length === 0 || undef > MAX_UNDEFINED_SHARE * replicates.length
        ? { lo: NaN, median: NaN, hi: NaN, level: options.level ?? 0.95, undefined: undef }
        : { ...percentileInterval(vals, options.level), undefined: undef };
  }
  return { replicates, intervals, clusters: C, resamples: options.resamples };
}

/**
 * How many more clusters an inconclusive interval would need (see the module comment): for a
 * lower-bound test (estimate ≥ threshold wanted) pass bound = the interval's lo; for an
 * upper-bound test (estimate ≤ threshold) bound = hi. 0 when the bound already clears the
 * threshold; NaN when the estimate itself does not clear it (more data would not help).
 */
export function moreClustersNeeded(estimate: number, bound: number, threshold: number, clusters: number): number {
  if (![estimate, bound, threshold].every(Number.isFinite) || !(clusters > 0)) return NaN;
  const lower = bound <= estimate;
  const margin = lower ? estimate - threshold : threshold - estimate;
  const half = lower ? estimate - bound : bound - estimate;
  if (!(margin > 0)) return NaN;
  if (half <= margin) return 0;
  return Math.max(1, Math.ceil(clusters * (half / margin) ** 2) - clusters);
}
