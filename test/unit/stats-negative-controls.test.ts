// Negative controls and scenario-level resampling (lib/stats/permutation.ts, cluster-bootstrap.ts,
// folds.ts groupKFolds, decisions.ts): within-group permutations keep each group's labels, the
// null of an uninformative score sits around 0 and a real signal clears its 95th percentile,
// cluster resamples draw whole clusters (within strata), grouped folds never split a group, and
// the interval decision says pass / inconclusive / fail with a sample-size estimate.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  binaryRankCorrelations,
  binaryRankCorrelationsSorted,
  calibrateWeights,
  clusterBootstrap,
  clusterRowMap,
  clustersOf,
  groupKFolds,
  matrix,
  groupMembers,
  intervalCheck,
  mean,
  moreClustersNeeded,
  nullCheck,
  permutationNull,
  permuteWithinGroups,
  rankCorrelations,
  spearman,
} from '../../lib/stats/index.ts';

test("a within-group permutation keeps every group's multiset of labels and is the same for the same seed", () => {
  const labels = [1, 0, 0, 1, 1, 1, 0, 0, 0, 1];
  const groups = ['a', 'a', 'a', 'b', 'b', 'b', 'b', 'c', 'c', 'c'];
  const members = groupMembers(groups, labels.length);
  const p1 = permuteWithinGroups(labels, members, createRng(7));
  const p2 = permuteWithinGroups(labels, members, createRng(7));
  assert.deepEqual(p1, p2);
  for (const g of ['a', 'b', 'c']) {
    const idx = groups.flatMap((x, i) => (x === g ? [i] : []));
    assert.deepEqual(idx.map((i) => p1[i]).sort(), idx.map((i) => labels[i]).sort(), `group ${g}`);
  }
});

test('the permutation null of an informative score sits near 0 and the real statistic exceeds its 95th percentile', () => {
  const rng = createRng(3);
  const n = 300;
  const score = Float64Array.from({ length: n }, () => rng.next());
  const success = Float64Array.from(score, (s) => (rng.next() < s ? 1 : 0));
  const p = permutationNull(success, { permutations: 200, seed: 11, permuted: 'success' }, (lab) =>
    spearman(score, lab),
  );
  assert.ok(p.real > 0.3, `real ρ ${p.real}`);
  assert.ok(Math.abs(p.quantiles.p50) < 0.05, `null median ${p.quantiles.p50}`);
  assert.ok(p.quantiles.p95 > 0.05 && p.quantiles.p95 < 0.15, `null p95 ${p.quantiles.p95}`);
  assert.equal(p.exceeds_p95, true);
  assert.ok(p.p_value <= 1 / 201 + 1e-12, 'no permutation reaches the real value: p = 1/(N + 1)');
  assert.equal(nullCheck('rho', p).status, 'pass');
});

test('with labels unrelated to the score the real statistic fails its negative control for most seeds', () => {
  let failed = 0;
  for (let seed = 1; seed <= 20; seed++) {
    const rng = createRng(seed);
    const score = Float64Array.from({ length: 200 }, () => rng.next());
    const success = Float64Array.from({ length: 200 }, () => (rng.next() < 0.5 ? 1 : 0));
    const p = permutationNull(success, { permutations: 200, seed: seed + 1000 }, (lab) => spearman(score, lab));
    if (nullCheck('rho', p).status === 'fail') failed++;
  }
  assert.ok(failed >= 17, `${failed} of 20 noise data sets failed (expected about 19)`);
});

test('permuting within groups removes only the within-group signal: a score that only knows the group fails', () => {
  let across = 0;
  let within = 0;
  for (let seed = 1; seed <= 10; seed++) {
    const rng = createRng(seed);
    const groups = Array.from({ length: 400 }, (_, i) => (i < 200 ? 'easy' : 'hard'));
    const success = Float64Array.from(groups, (g) => (rng.next() < (g === 'easy' ? 0.8 : 0.2) ? 1 : 0));
    const score = Float64Array.from(groups, (g) => (g === 'easy' ? 1 : 0) + 0.01 * rng.next());
    if (permutationNull(success, { permutations: 200, seed: seed + 1000 }, (lab) => spearman(score, lab)).exceeds_p95)
      across++;
    if (
      permutationNull(success, { permutations: 200, seed: seed + 1000, groups }, (lab) => spearman(score, lab))
        .exceeds_p95
    )
      within++;
  }
  assert.equal(across, 10, 'against a global shuffle the group effect looks like signal');
  assert.ok(
    within <= 2,
    `shuffled within the group the null keeps the group effect: ${within} of 10 exceed (about 0.5 expected)`,
  );
});

test('a cluster resample draws whole clusters, as many as there are, within their strata', () => {
  const keys = ['s1', 's1', 's1', 's2', 's2', 's2', 's3', 's3', 's3', 's4', 's4', 's4'];
  const cl = clustersOf(keys);
  assert.equal(cl.members.length, 4);
  const strata = ['t1', 't1', 't2', 't2'];
  const seen: number[][] = [];
  const res = clusterBootstrap(cl, { resamples: 50, seed: 9, strata }, (items, drawn) => {
    assert.equal(items.length, 12);
    for (let j = 0; j < 4; j++)
      assert.deepEqual(Array.from(items.subarray(3 * j, 3 * j + 3)), Array.from(cl.members[drawn[j]!]!));
    const ds = Array.from(drawn);
    assert.equal(ds.filter((c) => c < 2).length, 2, 'two draws from stratum t1');
    seen.push(ds);
    return { m: mean(Float64Array.from(items)) };
  });
  assert.equal(res.replicates.length, 50);
  assert.ok(new Set(seen.map((s) => s.join())).size > 3, 'resamples differ');
  const again = clusterBootstrap(cl, { resamples: 50, seed: 9, strata }, (items) => ({
    m: mean(Float64Array.from(items)),
  }));
  assert.deepEqual(again.intervals, res.intervals);
});

test('a cluster bootstrap of clustered data gives a wider interval than resampling rows, about √(cluster size) wider', () => {
  const rng = createRng(21);
  const C = 200;
  const m = 8;
  const keys: number[] = [];
  const x: number[] = [];
  for (let c = 0; c < C; c++) {
    const effect = rng.next();
    for (let j = 0; j < m; j++) {
      keys.push(c);
      x.push(effect + 0.05 * rng.next());
    }
  }
  const xs = Float64Array.from(x);
  const width = (keysOf: number[]): number => {
    const r = clusterBootstrap(clustersOf(keysOf), { resamples: 400, seed: 2 }, (items) => ({
      m: mean(Float64Array.from(items, (i) => xs[i]!)),
    }));
    return r.intervals.m.hi - r.intervals.m.lo;
  };
  const byCluster = width(keys);
  const byRow = width(keys.map((_, i) => i));
  assert.ok(byCluster / byRow > 2 && byCluster / byRow < 4, `ratio ${byCluster / byRow} (√8 ≈ 2.83)`);
});

test('grouped folds never put one group on both sides and keep every item held out once', () => {
  const groups = Array.from({ length: 240 }, (_, i) => `s${Math.floor(i / 4)}`);
  const strata = groups.map((g) => (Number(g.slice(1)) % 3 === 0 ? 'gsm8k' : 'hotpotqa'));
  const folds = groupKFolds(groups, 5, 42, strata);
  const held = new Array<number>(240).fill(0);
  for (const f of folds) {
    const train = new Set(Array.from(f.train, (i) => groups[i]));
    for (const i of f.test) {
      held[i]!++;
      assert.ok(!train.has(groups[i]), `${groups[i]} is on both sides of fold ${f.index}`);
    }
  }
  assert.ok(held.every((h) => h === 1));
  assert.deepEqual(
    folds.map((f) => f.test.length),
    [48, 48, 48, 48, 48],
  );
  assert.deepEqual(groupKFolds(groups, 5, 42, strata), folds);
  assert.throws(() => groupKFolds(['a', 'a', 'b'], 5, 1), /at least k = 5 groups/);
});

test('an interval decision passes when the lower bound clears, is inconclusive with a sample-size hint when only the estimate does, fails otherwise', () => {
  const iv = (lo: number, hi: number) => ({ lo, median: (lo + hi) / 2, hi, level: 0.95 });
  const pass = intervalCheck('rho', { estimate: 0.8, interval: iv(0.77, 0.83), clusters: 245 }, '>=', 0.75, 'h');
  assert.deepEqual([pass.status, pass.verdict, pass.value], ['pass', 'pass', 0.77]);
  const inc = intervalCheck('rho', { estimate: 0.78, interval: iv(0.72, 0.84), clusters: 245 }, '>=', 0.75, 'h');
  assert.deepEqual([inc.status, inc.verdict], ['fail', 'inconclusive']);
  assert.equal(inc.more_needed, moreClustersNeeded(0.78, 0.72, 0.75, 245));
  assert.equal(inc.more_needed, Math.ceil(245 * 4) - 245);
  assert.match(inc.hint!, /inconclusive: .* about 735 more scenarios would be needed/);
  const fail = intervalCheck('rho', { estimate: 0.7, interval: iv(0.65, 0.75), clusters: 245 }, '>=', 0.75, 'h');
  assert.deepEqual([fail.status, fail.verdict, fail.hint], ['fail', 'fail', 'h']);
  const upper = intervalCheck('mae', { estimate: -0.1, interval: iv(-0.2, -0.02), clusters: 100 }, '<=', -0.05, 'h');
  assert.deepEqual([upper.verdict, upper.value], ['inconclusive', -0.02]);
  assert.ok(upper.more_needed! > 0);
  assert.ok(
    Number.isNaN(moreClustersNeeded(0.7, 0.65, 0.75, 245)),
    'more data cannot rescue an estimate below the threshold',
  );
});

test("the one-sort rank correlations with a 0/1 variable equal Spearman's ρ and Kendall's τ-b, ties included", () => {
  for (const seed of [1, 2, 3]) {
    const rng = createRng(seed);
    const x = Float64Array.from({ length: 500 }, () => Math.round(rng.next() * 20) / 20);
    const s = Float64Array.from(x, (v) => (rng.next() < v ? 1 : 0));
    const fast = binaryRankCorrelations(x, s);
    const slow = rankCorrelations(x, s);
    assert.ok(Math.abs(fast.spearman - slow.spearman) < 1e-12, `ρ ${fast.spearman} vs ${slow.spearman}`);
    assert.ok(Math.abs(fast.kendall - slow.kendall) < 1e-12, `τ-b ${fast.kendall} vs ${slow.kendall}`);
  }
  assert.ok(Number.isNaN(binaryRankCorrelations([1, 2, 3], [1, 1, 1]).spearman));
  assert.ok(Number.isNaN(binaryRankCorrelations([2, 2, 2], [0, 1, 1]).kendall));
});

test('the counted walk over pre-sorted items equals the rank correlations of the items repeated by their counts', () => {
  const rng = createRng(8);
  const x = Float64Array.from({ length: 300 }, () => Math.round(rng.next() * 30) / 30).sort();
  const s = Float64Array.from(x, (v) => (rng.next() < v ? 1 : 0));
  const counts = Float64Array.from(x, () => rng.int(3));
  const rx: number[] = [];
  const rs: number[] = [];
  x.forEach((v, i) => {
    for (let k = 0; k < counts[i]!; k++) {
      rx.push(v);
      rs.push(s[i]!);
    }
  });
  const fast = binaryRankCorrelationsSorted(x, s, counts);
  const slow = rankCorrelations(rx, rs);
  assert.ok(
    Math.abs(fast.spearman - slow.spearman) < 1e-12 && Math.abs(fast.kendall - slow.kendall) < 1e-12,
    `${JSON.stringify(fast)} vs ${JSON.stringify(slow)}`,
  );
});

test('a cluster-level permutation moves whole label vectors: row j of a cluster takes row j (mod size) of the cluster it was dealt', () => {
  const clusters = clustersOf(['a', 'a', 'b', 'b', 'b', 'c']);
  const out = clusterRowMap(clusters.members, [1, 2, 0], new Int32Array(6));
  assert.deepEqual([...out], [2, 3, 5, 5, 5, 0]);
  assert.deepEqual(
    [...clusterRowMap(clusters.members, [0, 1, 2], new Int32Array(6))],
    [0, 1, 2, 3, 4, 5],
    'the identity maps every row to itself',
  );
});

test('the calibration negative control permutes whole groups: with labels shared inside groups its null is wider than a null that shuffles rows', () => {
  // 60 groups of 8 rows; each group's rows share one success label and one noise score per dimension.
  const rng = createRng(3);
  const G = 60;
  const m = 8;
  const n = G * m;
  const X = matrix(n, 3);
  const y = new Float64Array(n);
  const groups: number[] = [];
  for (let g = 0; g < G; g++) {
    const s = rng.next() < 0.5 ? 1 : 0;
    const x = [rng.next(), rng.next(), rng.next()];
    for (let j = 0; j < m; j++) {
      const r = g * m + j;
      for (let k = 0; k < 3; k++) X.data[r * 3 + k] = x[k]! + 0.01 * rng.next();
      y[r] = s;
      groups.push(g);
    }
  }
  const base = { X, y, success: y, prior: [1 / 3, 1 / 3, 1 / 3], names: ['a', 'b', 'c'] };
  const o = { folds: 5, resamples: 1, seed: 5, l2: 0.1, upper: 1, permutations: 100 };
  const byGroup = calibrateWeights({ ...base, groups }, o).null!;
  const byRow = calibrateWeights({ ...base, groups: groups.map((_, i) => i) }, o).null!;
  assert.match(byGroup.permuted, /between groups/);
  const width = (p: typeof byGroup): number => p.quantiles.p95 - p.quantiles.p05;
  assert.ok(
    width(byGroup) > 1.5 * width(byRow),
    `group-level null width ${width(byGroup)} vs row-level ${width(byRow)}`,
  );
});

test('a cluster bootstrap counts undefined resamples per statistic and leaves the interval undefined above 5 %, so the check is inconclusive and says why', () => {
  const clusters = clustersOf(Array.from({ length: 40 }, (_, i) => i));
  let r = 0;
  const boot = clusterBootstrap(clusters, { resamples: 100, seed: 1 }, () => {
    r++;
    return { few: r % 50 === 0 ? NaN : 1, many: r % 10 === 0 ? NaN : 1 };
  });
  assert.deepEqual([boot.intervals.few.undefined, boot.intervals.few.lo], [2, 1]);
  assert.equal(boot.intervals.many.undefined, 10);
  assert.ok(Number.isNaN(boot.intervals.many.lo) && Number.isNaN(boot.intervals.many.hi));
  const c = intervalCheck('many', { estimate: 1, interval: boot.intervals.many, clusters: 40 }, '>=', 0.5, 'h');
  assert.deepEqual([c.status, c.verdict, c.pass], ['fail', 'inconclusive', false]);
  assert.match(c.hint!, /10 bootstrap resamples gave no value/);
});
