// The difficulty gate: hard share >= .30 and easy share <= .30 per task and overall, the length,
// turn and tool-hop ceilings, clue_overlap medians per bucket (waived, not passed, for a task
// without supporting text), each failing check carrying its hint; and the difficulty_report rule
// failing a pool with too few hard items while writing every histogram and quantile.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Rule } from '../../src/api/index.ts';
import { HINTS, clueNotApplicable, difficultyChecks, type Bucket, type DifficultyMetrics, type Scored } from '../../src/difficulty/index.ts';
import { checksByName, compileRule, runRule } from '../fixtures/difficulty/rule-harness.ts';
import { metrics, writeJsonl } from '../fixtures/difficulty/scenarios.ts';

const GATE = {
  min_hard_share: 0.3, max_easy_share: 0.3, max_len_tokens: 3500, max_turns: 8, max_tool_hops: 8,
  max_clue_overlap_hard_median: 0.2, min_clue_overlap_easy_median: 0.4,
};
const DIMS = {
  gsm8k: ['len_tokens', 'turns', 'tool_hops', 'ops_numeric', 'entities', 'connector_density', 'needs_clarification'],
  hotpotqa: ['len_tokens', 'turns', 'tool_hops', 'entities', 'connector_density', 'clue_overlap', 'needs_clarification'],
} as const;
const CLUE = { easy: 0.5, medium: 0.3, hard: 0.1 };

/** n items of a task: `hard` of them hard, `easy` easy, the rest medium; metrics consistent with the bucket. */
function taskItems(task: string, n: number, hard: number, easy: number, extra: Partial<DifficultyMetrics> = {}): Scored[] {
  return Array.from({ length: n }, (_, i) => {
    const bucket: Bucket = i < hard ? 'hard' : i < hard + easy ? 'easy' : 'medium';
    return { bucket, m: metrics({ id: `${task}-${i}`, task, clue_overlap: task === 'gsm8k' ? null : CLUE[bucket], ...extra }) };
  });
}
const balancedOk = (): Scored[] => [...taskItems('gsm8k', 20, 6, 5), ...taskItems('hotpotqa', 40, 12, 10)];
const clueTasks = new Set(['hotpotqa']);
const byName = (items: Scored[], tasks = ['gsm8k', 'hotpotqa']) =>
  new Map(difficultyChecks(items, tasks, DIMS as never, GATE, clueTasks).map((c) => [c.name, c]));

test('a balanced pool at the target shares passes every check; gsm8k clue_overlap checks do not apply and are named as such', () => {
  const checks = byName(balancedOk());
  assert.equal(checks.size, 19);
  for (const c of checks.values()) assert.equal(c.pass, true, c.name);
  assert.equal(checks.get('gsm8k.clue_overlap_median_hard'), undefined);
  assert.deepEqual(clueNotApplicable(['gsm8k', 'hotpotqa'], DIMS as never, clueTasks).map((x) => x.check), ['gsm8k.clue_overlap_median_hard', 'gsm8k.clue_overlap_median_easy']);
  assert.equal(checks.get('hotpotqa.hard_share')!.value, 0.3);
  assert.equal(checks.get('all.clue_overlap_median_easy')!.value, 0.5);
});

test('too few hard items fail the task and the whole pool, with the hint from the seeds\' failure table', () => {
  const checks = byName([...taskItems('gsm8k', 20, 6, 5), ...taskItems('hotpotqa', 40, 8, 10)]);
  const hard = checks.get('hotpotqa.hard_share')!;
  assert.deepEqual([hard.pass, hard.value, hard.op, hard.threshold], [false, 0.2, '>=', 0.3]);
  assert.equal(hard.hint, HINTS.hard_share);
  assert.match(hard.hint!, /tool_hops >= 3/);
  assert.equal(checks.get('all.hard_share')!.pass, false);
  assert.equal(checks.get('gsm8k.hard_share')!.pass, true);
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
  assert.deepEqual([checks.get('gsm8k.len_tokens_max')!.value, checks.get('gsm8k.len_tokens_max')!.hint], [3600, HINTS.len_tokens_max]);
  assert.equal(checks.get('gsm8k.turns_max')!.hint, HINTS.turns_max);
  assert.equal(checks.get('hotpotqa.len_tokens_max')!.pass, true);
});

test('clue_overlap medians: hard items repeating their evidence, or easy items not repeating it, fail', () => {
  const items = balancedOk().map((it) => (it.m.task === 'hotpotqa' ? { ...it, m: { ...it.m, clue_overlap: it.bucket === 'hard' ? 0.35 : 0.15 } } : it));
  const checks = byName(items);
  assert.deepEqual([checks.get('hotpotqa.clue_overlap_median_hard')!.pass, checks.get('hotpotqa.clue_overlap_median_hard')!.value], [false, 0.35]);
  assert.deepEqual([checks.get('hotpotqa.clue_overlap_median_easy')!.pass, checks.get('hotpotqa.clue_overlap_median_easy')!.value], [false, 0.15]);
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
after(async () => { await rm(dir, { recursive: true, force: true }); });

const PARAMS = {
  difficulty: {
    bands: {
      len_tokens: { easy: '< 200', hard: '> 600' }, turns: { easy: '<= 2', hard: '>= 5' }, tool_hops: { easy: '<= 1', hard: '>= 4' },
      ops_numeric: { easy: '<= 1', hard: '>= 4' }, entities: { easy: '<= 3', hard: '>= 7' },
      connector_density: { easy: '< 3', hard: '> 6' }, clue_overlap: { easy: '> 0.40', hard: '< 0.20' },
      needs_clarification: { hard_min_turns: 4 },
    },
    dimensions: DIMS,
    gate: GATE,
  },
};

test('difficulty_report fails a pool with too few hard items, with the hint, and reports histograms and quantiles', async () => {
  // gsm8k: 2 hard (5 hard votes), 8 easy (all easy). Balanced pool = everything: hard share .2.
  const pool = [
    ...Array.from({ length: 2 }, (_, i) => metrics({ id: `g${i}`, task: 'gsm8k', len_tokens: 700, turns: 5, tool_hops: 5, ops_numeric: 5, entities: 8 })),
    ...Array.from({ length: 8 }, (_, i) => metrics({ id: `e${i}`, task: 'gsm8k', len_tokens: 50 + i })),
  ];
  const m = writeJsonl(join(dir, 'few-hard/metrics.jsonl'), pool);
  const b = writeJsonl(join(dir, 'few-hard/balanced.jsonl'), pool.map((x, i) => ({ id: x.id, task: x.task, difficulty: i < 2 ? 'hard' : 'easy' })));
  const run = await runRule(rule, { params: PARAMS, inputs: { metrics: [m], balanced: [b] }, outputs: ['reports/rc1/difficulty_report.json'], outDir: join(dir, 'few-hard/out') });
  const checks = checksByName(run.result);
  const hard = checks.get('gsm8k.hard_share')!;
  assert.deepEqual([hard.status, hard.value, hard.hint], ['fail', 0.2, HINTS.hard_share]);
  assert.equal(checks.get('gsm8k.easy_share')!.status, 'fail');
  assert.equal(checks.get('gsm8k.turns_max')!.status, 'pass');
  const report = run.result.report as { definitions: Record<string, unknown>; balanced: { all: { counts: object; metrics: Record<string, { summary: Record<string, number>; histogram: { bins: unknown[] } }> }; by_task: Record<string, { counts: object }> } };
  assert.deepEqual(report.balanced.by_task.gsm8k!.counts, { easy: 8, medium: 0, hard: 2 });
  const len = report.balanced.all.metrics.len_tokens!;
  assert.deepEqual([len.summary.p10, len.summary.p50, len.summary.p90, len.summary.max], [50.9, 54.5, 700, 700]);
  assert.deepEqual(len.histogram.bins, [{ from: 0, to: 100, count: 8 }, { from: 700, to: 800, count: 2 }]);
  for (const k of ['len_tokens', 'turns', 'tool_hops', 'entities', 'ops_numeric', 'connector_density', 'coref_pronouns', 'clue_overlap']) {
    assert.ok(k in report.balanced.all.metrics, k);
  }
  assert.ok('clue_overlap' in (report.definitions.metrics as object));
  assert.match(String(run.result.summary), /10 balanced of 10 scenarios; \d+ of 10 checks failed/);
  assert.deepEqual((report as unknown as { not_applicable: { check: string }[] }).not_applicable.map((x) => x.check), ['gsm8k.clue_overlap_median_hard', 'gsm8k.clue_overlap_median_easy']);
});

test('difficulty_report refuses a balanced line whose bucket is not the one its metrics give', async () => {
  const pool = [metrics({ id: 'a', task: 'gsm8k' })];
  const m = writeJsonl(join(dir, 'stale/metrics.jsonl'), pool);
  const b = writeJsonl(join(dir, 'stale/balanced.jsonl'), [{ id: 'a', task: 'gsm8k', difficulty: 'hard' }]);
  await assert.rejects(runRule(rule, { params: PARAMS, inputs: { metrics: [m], balanced: [b] }, outputs: ['r.json'], outDir: join(dir, 'stale/out') }), {
    name: 'DataError', message: /balanced\.jsonl:1: difficulty: expected easy \(the bucket its metrics give/,
  });
});
