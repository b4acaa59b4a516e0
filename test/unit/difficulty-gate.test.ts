// The difficulty gate: easy ≤ .30, medium in [.40, .50], hard in [.30, .40] per task and overall,
// the length, turn and tool-hop ceilings, clue_overlap medians per bucket (not applicable, never
// passed, for a task without supporting text), the association of bucket and need for
// clarification (Cramér's V) in the pool and the balanced pool, each failing check carrying its
// hint; and the difficulty_report rule failing a pool with too few hard items, and one whose bands
// vote with the clarification flag, while writing every histogram and quantile.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Rule } from '../../packages/engine/src/api/index.ts';
import {
  BALANCED_ASSOCIATION,
  HINTS,
  association,
  clueNotApplicable,
  difficultyChecks,
  type Bucket,
  type DifficultyMetrics,
  type Scored,
} from '../../lib/difficulty/index.ts';
import { checksByName, compileRule, runRule } from '../fixtures/difficulty/rule-harness.ts';
import { metrics, writeJsonl } from '../fixtures/difficulty/scenarios.ts';

const GATE = {
  max_easy_share: 0.3,
  min_medium_share: 0.4,
  max_medium_share: 0.5,
  min_hard_share: 0.3,
  max_hard_share: 0.4,
  max_association: 0.1,
  min_association_n: 20,
  max_len_tokens: 3500,
  max_turns: 8,
  max_tool_hops: 8,
  max_clue_overlap_hard_median: 0.2,
  min_clue_overlap_easy_median: 0.4,
};
const DIMS = {
  gsm8k: ['hops', 'ops_numeric'],
  hotpotqa: ['len_tokens', 'distractors', 'clue_overlap'],
} as const;
const CLUE = { easy: 0.5, medium: 0.3, hard: 0.1 };

/** n items of a task: `hard` of them hard, `easy` easy, the rest medium; about 30 % of each bucket need clarification. */
function taskItems(
  task: string,
  n: number,
  hard: number,
  easy: number,
  extra: Partial<DifficultyMetrics> = {},
): Scored[] {
  return Array.from({ length: n }, (_, i) => {
    const bucket: Bucket = i < hard ? 'hard' : i < hard + easy ? 'easy' : 'medium';
    const [j, size] =
      bucket === 'hard' ? [i, hard] : bucket === 'easy' ? [i - hard, easy] : [i - hard - easy, n - hard - easy];
    return {
      bucket,
      m: metrics({
        id: `${task}-${i}`,
        task,
        clue_overlap: task === 'gsm8k' ? null : CLUE[bucket],
        needs_clarification: j < Math.round(size * 0.3),
        ...extra,
      }),
    };
  });
}
const balancedOk = (): Scored[] => [...taskItems('gsm8k', 20, 6, 5), ...taskItems('hotpotqa', 40, 12, 10)];
const clueTasks = new Set(['hotpotqa']);
const byName = (items: Scored[], tasks = ['gsm8k', 'hotpotqa'], pool = items) =>
  new Map(difficultyChecks(items, pool, tasks, DIMS as never, GATE, clueTasks).map((c) => [c.name, c]));

test('a balanced pool at the target shares passes every check; gsm8k clue_overlap checks do not apply and are named as such', () => {
  const checks = byName(balancedOk());
  assert.equal(checks.size, 28);
  const balancedV = (c: { name: string }) => /^[a-z0-9]+\.clarify_association$/.test(c.name);
  for (const c of checks.values()) if (!balancedV(c)) assert.equal(c.pass, true, c.name);
  for (const c of [...checks.values()].filter(balancedV))
    assert.deepEqual([c.status, c.not_applicable], ['n/a', BALANCED_ASSOCIATION], c.name);
  assert.equal(typeof checks.get('all.clarify_association')!.value, 'number', 'the balanced V is still reported');
  assert.equal(checks.get('gsm8k.clue_overlap_median_hard'), undefined);
  assert.deepEqual(
    clueNotApplicable(['gsm8k', 'hotpotqa'], DIMS as never, clueTasks).map((x) => x.check),
    ['gsm8k.clue_overlap_median_hard', 'gsm8k.clue_overlap_median_easy'],
  );
  assert.equal(checks.get('hotpotqa.hard_share')!.value, 0.3);
  assert.equal(checks.get('all.clue_overlap_median_easy')!.value, 0.5);
});

test("too few hard items fail the task and the whole pool, with the hint from the seeds' failure table", () => {
  const checks = byName([...taskItems('gsm8k', 20, 6, 5), ...taskItems('hotpotqa', 40, 8, 10)]);
  const hard = checks.get('hotpotqa.hard_share')!;
  assert.deepEqual([hard.pass, hard.value, hard.op, hard.threshold], [false, 0.2, 'in', [0.3, 0.4]]);
  assert.equal(hard.hint, HINTS.hard_share);
  assert.equal(checks.get('all.hard_share')!.pass, false);
  assert.equal(checks.get('gsm8k.hard_share')!.pass, true);
});

test('a medium share outside 40–50 % or a hard share above 40 % fails', () => {
  const checks = byName([...taskItems('gsm8k', 20, 9, 5), ...taskItems('hotpotqa', 40, 12, 10)]);
  assert.deepEqual([checks.get('gsm8k.hard_share')!.pass, checks.get('gsm8k.hard_share')!.value], [false, 0.45]);
  assert.deepEqual([checks.get('gsm8k.medium_share')!.pass, checks.get('gsm8k.medium_share')!.value], [false, 0.3]);
  assert.equal(checks.get('gsm8k.medium_share')!.hint, HINTS.medium_share);
});

test("Cramér's V of bucket × needs_clarification: 0 for equal shares, 1 when the bucket gives the flag away", () => {
  const at = (pairs: [Bucket, boolean, number][]) =>
    association(pairs.flatMap(([bucket, clarify, n]) => Array.from({ length: n }, () => ({ bucket, clarify }))));
  assert.equal(
    at([
      ['easy', false, 7],
      ['easy', true, 3],
      ['hard', false, 14],
      ['hard', true, 6],
    ]).cramers_v,
    0,
  );
  assert.equal(
    at([
      ['easy', false, 10],
      ['hard', true, 10],
    ]).cramers_v,
    1,
  );
  // 2 × 2: φ = (ad − bc) / sqrt(row and column sums) = (30·10 − 10·10) / sqrt(40·20·40·20) = 0.25;
  // corrected: sqrt((0.0625 − 1/59) / (1 − 1/59)) = 0.2153
  const two = at([
    ['easy', false, 30],
    ['easy', true, 10],
    ['hard', false, 10],
    ['hard', true, 10],
  ]);
  assert.deepEqual([two.cramers_v_raw, two.cramers_v], [0.25, 0.2153]);
  // Independent axes in a small sample: the plain V is above 0 by chance, the corrected one is not.
  const small = at([
    ['easy', false, 6],
    ['easy', true, 3],
    ['medium', false, 11],
    ['medium', true, 5],
    ['hard', false, 7],
    ['hard', true, 4],
  ]);
  assert.ok(small.cramers_v_raw! > 0 && small.cramers_v === 0, JSON.stringify(small));
  assert.equal(
    at([
      ['easy', false, 5],
      ['hard', false, 5],
    ]).cramers_v,
    null,
    'no scenario needs clarification: undefined',
  );
});

test('an association check over fewer scenarios than min_association_n is n/a with the reason, never a pass', () => {
  const checks = new Map(
    difficultyChecks(
      balancedOk(),
      balancedOk(),
      ['gsm8k', 'hotpotqa'],
      DIMS as never,
      { ...GATE, min_association_n: 30 },
      clueTasks,
    ).map((c) => [c.name, c]),
  );
  const g = checks.get('gsm8k.clarify_association_pool')!;
  assert.deepEqual(
    [g.status, g.pass, g.not_applicable],
    [
      'n/a',
      false,
      '20 scenarios, fewer than difficulty.gate.min_association_n = 30: V is too noisy to judge at this size',
    ],
  );
  assert.equal(checks.get('hotpotqa.clarify_association_pool')!.status, 'pass');
});

test('a pool where hard goes with the need for clarification fails the pool association even when the balanced pool does not', () => {
  const balanced = balancedOk();
  const pool = balanced.map((it) => ({ ...it, m: { ...it.m, needs_clarification: it.bucket === 'hard' } }));
  const checks = byName(balanced, ['gsm8k', 'hotpotqa'], pool);
  const v = checks.get('all.clarify_association_pool')!;
  assert.deepEqual([v.pass, v.op, v.threshold, v.hint], [false, '<=', 0.1, HINTS.association]);
  assert.ok((v.value as number) > 0.95, String(v.value));
  assert.equal(checks.get('hotpotqa.clarify_association_pool')!.pass, false);
  const b = checks.get('all.clarify_association')!;
  assert.deepEqual(
    [b.status, b.value, b.not_applicable],
    ['n/a', 0, BALANCED_ASSOCIATION],
    'balancing makes the balanced V 0: reported, not gated',
  );
});

test('too many easy items fail the easy share', () => {
  const c = byName([...taskItems('gsm8k', 20, 6, 8), ...taskItems('hotpotqa', 40, 12, 10)]).get('gsm8k.easy_share')!;
  assert.deepEqual([c.pass, c.value, c.hint], [false, 0.4, HINTS.easy_share]);
});

test('one item over the length, turn or tool-hop ceiling fails its check', () => {
  const items = balancedOk();
  items[3] = { ...items[3]!, m: { ...items[3]!.m, len_tokens: 3600, turns: 9, tool_hops: 12 } };
  const checks = byName(items);
  for (const name of ['gsm8k.len_tokens_max', 'gsm8k.turns_max', 'gsm8k.tool_hops_max', 'all.len_tokens_max']) {
    assert.equal(checks.get(name)!.pass, false, name);
  }
  assert.deepEqual(
    [checks.get('gsm8k.len_tokens_max')!.value, checks.get('gsm8k.len_tokens_max')!.hint],
    [3600, HINTS.len_tokens_max],
  );
  assert.equal(checks.get('gsm8k.turns_max')!.hint, HINTS.turns_max);
  assert.equal(checks.get('hotpotqa.len_tokens_max')!.pass, true);
});

test('clue_overlap medians: hard items repeating their evidence, or easy items not repeating it, fail', () => {
  const items = balancedOk().map((it) =>
    it.m.task === 'hotpotqa' ? { ...it, m: { ...it.m, clue_overlap: it.bucket === 'hard' ? 0.35 : 0.15 } } : it,
  );
  const checks = byName(items);
  assert.deepEqual(
    [checks.get('hotpotqa.clue_overlap_median_hard')!.pass, checks.get('hotpotqa.clue_overlap_median_hard')!.value],
    [false, 0.35],
  );
  assert.deepEqual(
    [checks.get('hotpotqa.clue_overlap_median_easy')!.pass, checks.get('hotpotqa.clue_overlap_median_easy')!.value],
    [false, 0.15],
  );
  assert.equal(checks.get('hotpotqa.clue_overlap_median_easy')!.hint, HINTS.clue_overlap_median_easy);
});

test('a task of the pool missing from the balanced pool fails its checks with the empty-task hint', () => {
  const checks = byName(taskItems('hotpotqa', 40, 12, 10), ['gsm8k', 'hotpotqa']);
  const c = checks.get('gsm8k.hard_share')!;
  assert.deepEqual([c.pass, c.value, c.hint], [false, null, HINTS.empty]);
});

let dir = '';
let rule: Rule;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-diff-gate-'));
  rule = await compileRule('difficulty_report', dir);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PARAMS = {
  difficulty: {
    bands: {
      len_tokens: { easy: '< 200', hard: '> 600' },
      turns: { easy: '<= 2', hard: '>= 5' },
      tool_hops: { easy: '<= 1', hard: '>= 4' },
      hops: { easy: '<= 2', hard: '>= 4' },
      distractors: { easy: '<= 2', hard: '>= 8' },
      ops_numeric: { easy: '<= 1', hard: '>= 4' },
      entities: { easy: '<= 3', hard: '>= 7' },
      connector_density: { easy: '< 3', hard: '> 6' },
      clue_overlap: { easy: '> 0.40', hard: '< 0.20' },
    },
    dimensions: DIMS,
    gate: GATE,
  },
};

test('difficulty_report fails a pool with too few hard items, with the hint, and reports histograms and quantiles', async () => {
  // gsm8k: 2 hard (hops and arithmetic hard), 8 easy. Balanced pool = everything: hard share .2.
  const pool = [
    ...Array.from({ length: 2 }, (_, i) =>
      metrics({
        id: `g${i}`,
        task: 'gsm8k',
        len_tokens: 700,
        turns: 5,
        tool_hops: 5,
        hops: 6,
        ops_numeric: 5,
        entities: 8,
      }),
    ),
    ...Array.from({ length: 8 }, (_, i) => metrics({ id: `e${i}`, task: 'gsm8k', len_tokens: 50 + i })),
  ];
  const m = writeJsonl(join(dir, 'few-hard/metrics.jsonl'), pool);
  const b = writeJsonl(
    join(dir, 'few-hard/balanced.jsonl'),
    pool.map((x, i) => ({ id: x.id, task: x.task, difficulty: i < 2 ? 'hard' : 'easy' })),
  );
  const run = await runRule(rule, {
    params: PARAMS,
    inputs: { metrics: [m], balanced: [b] },
    outputs: ['reports/rc1/difficulty_report.json'],
    outDir: join(dir, 'few-hard/out'),
  });
  const checks = checksByName(run.result);
  const hard = checks.get('gsm8k.hard_share')!;
  assert.deepEqual([hard.status, hard.value, hard.hint], ['fail', 0.2, HINTS.hard_share]);
  assert.equal(checks.get('gsm8k.easy_share')!.status, 'fail');
  assert.equal(checks.get('gsm8k.turns_max')!.status, 'pass');
  const report = run.result.report as {
    definitions: Record<string, unknown>;
    balanced: {
      all: {
        counts: object;
        metrics: Record<string, { summary: Record<string, number>; histogram: { bins: unknown[] } }>;
      };
      by_task: Record<string, { counts: object }>;
    };
  };
  assert.deepEqual(report.balanced.by_task.gsm8k!.counts, { easy: 8, medium: 0, hard: 2 });
  const len = report.balanced.all.metrics.len_tokens!;
  assert.deepEqual([len.summary.p10, len.summary.p50, len.summary.p90, len.summary.max], [50.9, 54.5, 700, 700]);
  assert.deepEqual(len.histogram.bins, [
    { from: 0, to: 100, count: 8 },
    { from: 700, to: 800, count: 2 },
  ]);
  for (const k of [
    'len_tokens',
    'turns',
    'tool_hops',
    'entities',
    'ops_numeric',
    'connector_density',
    'coref_pronouns',
    'clue_overlap',
  ]) {
    assert.ok(k in report.balanced.all.metrics, k);
  }
  assert.ok('clue_overlap' in (report.definitions.metrics as object));
  assert.match(String(run.result.summary), /10 balanced of 10 scenarios; \d+ of 16 checks failed, 4 n\/a/);
  assert.deepEqual(
    (report as unknown as { not_applicable: { check: string; reason: string }[] }).not_applicable.map((x) => x.check),
    ['gsm8k.clue_overlap_median_hard', 'gsm8k.clue_overlap_median_easy'],
  );
  const na = checks.get('gsm8k.clarify_association')!;
  assert.deepEqual(
    [na.status, na.pass, na.not_applicable],
    ['n/a', false, "Cramér's V is undefined: no scenario needs clarification"],
  );
});

test('difficulty_report fails a pool whose bands vote with the clarification flag (turns), on the pool association', async () => {
  // 10 under-specified scenarios (5 turns: two for the exchange), 10 not (2 turns); turns is made a vote.
  const pool = Array.from({ length: 20 }, (_, i) =>
    metrics({
      id: `c${i}`,
      task: 'gsm8k',
      hops: 3,
      ops_numeric: 2 + (i % 3),
      needs_clarification: i < 10,
      turns: i < 10 ? 5 : 2,
    }),
  );
  const params = { difficulty: { ...PARAMS.difficulty, dimensions: { gsm8k: ['hops', 'turns'] } } };
  const m = writeJsonl(join(dir, 'confounded/metrics.jsonl'), pool);
  const b = writeJsonl(
    join(dir, 'confounded/balanced.jsonl'),
    pool.map((x, i) => ({ id: x.id, task: x.task, difficulty: i < 10 ? 'hard' : 'easy' })),
  );
  const run = await runRule(rule, {
    params,
    inputs: { metrics: [m], balanced: [b] },
    outputs: ['reports/rc1/difficulty_report.json'],
    outDir: join(dir, 'confounded/out'),
  });
  const checks = checksByName(run.result);
  assert.deepEqual(
    [checks.get('gsm8k.clarify_association_pool')!.status, checks.get('gsm8k.clarify_association_pool')!.value],
    ['fail', 1],
  );
  assert.equal(checks.get('all.clarify_association')!.status, 'n/a', "the balanced pool's V is reported, not gated");
});

test('difficulty_report refuses a balanced line whose bucket is not the one its metrics give', async () => {
  const pool = [metrics({ id: 'a', task: 'gsm8k' })];
  const m = writeJsonl(join(dir, 'stale/metrics.jsonl'), pool);
  const b = writeJsonl(join(dir, 'stale/balanced.jsonl'), [{ id: 'a', task: 'gsm8k', difficulty: 'hard' }]);
  await assert.rejects(
    runRule(rule, {
      params: PARAMS,
      inputs: { metrics: [m], balanced: [b] },
      outputs: ['r.json'],
      outDir: join(dir, 'stale/out'),
    }),
    {
      name: 'DataError',
      message: /balanced\.jsonl:1: difficulty: expected easy \(the bucket its metrics give/,
    },
  );
});
