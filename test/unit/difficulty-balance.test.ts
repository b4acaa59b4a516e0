// Balancing over both axes: per task and clarification stratum, downsampling to the target bucket
// shares — the size the scarcest bucket allows, quotas rounded toward the harder buckets (never a
// quota past its bucket, even where floating point would) — with the strata in the pool's own
// clarification share; seeded and deterministic, no duplicates, the pool's order kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { BUCKETS, planBalance, taskQuotas, type Bucket } from '../../lib/difficulty/index.ts';

const TARGET = { easy: 0.25, medium: 0.45, hard: 0.3 };
const CONFIG = { seed: 20250821, target: TARGET };

test('the kept size is what the scarcest bucket allows and the quotas round toward harder buckets', () => {
  const q = taskQuotas({ easy: 100, medium: 100, hard: 100 }, TARGET);
  assert.deepEqual(q, { size: 222, quota: { easy: 55, medium: 100, hard: 67 }, limitedBy: ['medium'] });
  assert.ok(q.quota.hard / q.size >= 0.3 && q.quota.easy / q.size <= 0.25);
});

test('floating point shares never push a quota past its bucket (10 * 0.3 is 3, not 4)', () => {
  assert.deepEqual(taskQuotas({ easy: 3, medium: 5, hard: 3 }, TARGET), {
    size: 10,
    quota: { easy: 2, medium: 5, hard: 3 },
    limitedBy: ['hard'],
  });
});

test('an empty bucket with a non-zero share keeps nothing of the task; a zero share keeps none of its bucket', () => {
  assert.deepEqual(taskQuotas({ easy: 50, medium: 50, hard: 0 }, TARGET), {
    size: 0,
    quota: { easy: 0, medium: 0, hard: 0 },
    limitedBy: ['hard'],
  });
  assert.deepEqual(taskQuotas({ easy: 10, medium: 4, hard: 6 }, { easy: 0, medium: 0.5, hard: 0.5 }).quota, {
    easy: 0,
    medium: 4,
    hard: 4,
  });
});

/** Items whose bucket shares depend on the need for clarification (hard goes with it), as a confounded pool would. */
function items(n: number, seed: number): { task: string; bucket: Bucket; clarify: boolean }[] {
  const rng = createRng(seed);
  const weights: Record<string, [number, number]> = { gsm8k: [0.5, 0.8], hotpotqa: [0.3, 0.85] };
  return Array.from({ length: n }, (_, i) => {
    const task = i % 3 === 0 ? 'gsm8k' : 'hotpotqa';
    const clarify = i % 10 < 3;
    const [e, m] = weights[task]!;
    const x = clarify ? 0.15 + 0.85 * rng.next() : rng.next();
    return { task, bucket: x < e ? 'easy' : x < m ? 'medium' : 'hard', clarify };
  });
}

test('balancing hits the target shares per task within one item and keeps no item twice', () => {
  const pool = items(3000, 1);
  const plan = planBalance(pool, CONFIG, createRng);
  for (const [task, p] of Object.entries(plan.tasks)) {
    const kept = pool.filter((it, i) => plan.keep[i] && it.task === task);
    assert.equal(kept.length, p.size);
    for (const b of BUCKETS) {
      assert.equal(kept.filter((it) => it.bucket === b).length, p.kept[b]);
      assert.ok(Math.abs(p.kept[b] / p.size - TARGET[b]) <= 2 / p.size, `${task} ${b}: ${p.kept[b]} of ${p.size}`); // one item per stratum
      assert.equal(p.available[b], p.kept[b] + p.dropped[b]);
    }
    assert.ok(p.shares.hard >= 0.3 && p.shares.easy <= 0.25);
    assert.ok(p.size > 300, `${task} keeps ${p.size}`);
    // Each clarification stratum at the same shares, the strata at the pool's clarification share.
    for (const st of ['needs_clarification', 'no_clarification'] as const) {
      const sp = p.strata[st];
      for (const b of BUCKETS)
        assert.ok(Math.abs(sp.kept[b] / sp.size - TARGET[b]) <= 1 / sp.size, `${task} ${st} ${b}`);
    }
    assert.ok(
      Math.abs(p.clarify_rate.kept! - p.clarify_rate.pool) <= 1 / p.size,
      `${task}: ${JSON.stringify(p.clarify_rate)}`,
    );
  }
  assert.deepEqual(Object.keys(plan.tasks), ['gsm8k', 'hotpotqa']);
});

test('a pool where easy goes with no need for clarification comes out of balancing with the same bucket shares in both strata', () => {
  const pool = items(3000, 3);
  const plan = planBalance(pool, CONFIG, createRng);
  const easyShare = (clarify: boolean, kept: boolean) => {
    const xs = pool.filter((it, i) => it.clarify === clarify && (!kept || plan.keep[i]));
    return xs.filter((it) => it.bucket === 'easy').length / xs.length;
  };
  assert.ok(easyShare(false, false) - easyShare(true, false) > 0.08, 'the pool is confounded');
  assert.ok(
    Math.abs(easyShare(true, true) - easyShare(false, true)) < 0.02,
    `kept: ${easyShare(true, true)} vs ${easyShare(false, true)}`,
  );
});

test('a stratum with an empty bucket keeps nothing of its task, and says which stratum limited it', () => {
  const pool = [
    ...Array.from({ length: 30 }, (_, i) => ({ task: 't', bucket: BUCKETS[i % 3]!, clarify: false })),
    ...Array.from({ length: 10 }, () => ({ task: 't', bucket: 'hard' as Bucket, clarify: true })),
  ];
  const plan = planBalance(pool, CONFIG, createRng);
  assert.equal(plan.tasks.t!.size, 0);
  assert.deepEqual(plan.tasks.t!.limited_by, ['needs_clarification']);
  assert.deepEqual(plan.tasks.t!.strata.needs_clarification.limited_by, ['easy', 'medium']);
});

test('balancing is deterministic for a seed, and another seed keeps other items of the same counts', () => {
  const pool = items(2000, 2);
  const a = planBalance(pool, CONFIG, createRng);
  const b = planBalance(pool, CONFIG, createRng);
  const c = planBalance(pool, { ...CONFIG, seed: 7 }, createRng);
  assert.deepEqual(a, b);
  assert.deepEqual(c.tasks, a.tasks);
  assert.notDeepEqual(c.keep, a.keep);
});
