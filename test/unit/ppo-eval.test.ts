// The ppo_eval gate's parts: the comparison and its checks, the held-out twins and their buckets,
// the learning-curve picture, and the checkpoint input that refuses what is not a built-in policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { PNG } from 'pngjs';
import { createRng } from '../../src/api/index.ts';
import { dataFileFormat, loadSources, type Scenario } from '../../src/data/index.ts';
import { bandsSchema, dimensionsSchema, loadQwen3, MetricsComputer } from '../../src/difficulty/index.ts';
import { PoolParamsSchema } from '../../src/pool/index.ts';
import { loadPack } from '../../src/templates/index.ts';
import { builtInCheckpoint } from '../../src/train/checkpoint-input.ts';
import { comparePolicies, comparisonSummary, type PpoEvalConfig } from '../../src/train/eval-report.ts';
import { heldOutSet, TWIN_ID_PREFIX, underspecifiedTwins } from '../../src/train/eval-sets.ts';
import { summarizeEval, type EvalEpisode } from '../../src/train/eval-summary.ts';
import { drawLearningCurve, niceTicks, tickLabel, type CurvePoint } from '../../src/train/learning-curve.ts';
import { REPO } from '../helpers/rig.ts';
import { shadowSetJsonl } from '../helpers/shadow-fixture.ts';

const CFG: PpoEvalConfig = {
  seed: 1, actions: 'sampled', samples: 2, twins: true, min_group_n: 2,
  thresholds: { min_needs_clarification_success_gain_pp: 5, max_overclar_relative_change: -0.2, max_avg_turns_increase: 0, min_hard_qa_success_gain_pp: 5 },
};

function ep(id: string, o: Partial<EvalEpisode>): EvalEpisode {
  return {
    scenario_id: id, task: 'hotpotqa', difficulty: 'hard', needs_clarification: false, success: false, reward: 0, clarifications: 0, turns: 1, actions: 1,
    tool_calls: 0, answered: true, trace: ['answer'], ...o,
  };
}

const before = [
  ep('a', { needs_clarification: true, success: false, turns: 2 }), ep('b', { needs_clarification: true, success: false, turns: 2 }),
  ep('c', { clarifications: 1, turns: 3 }), ep('d', { clarifications: 1, turns: 3 }), ep('e', { task: 'gsm8k', difficulty: 'easy', success: true }),
];
const after = [
  ep('a', { needs_clarification: true, success: true, clarifications: 1, turns: 2 }), ep('b', { needs_clarification: true, success: true, clarifications: 1, turns: 2 }),
  ep('c', { success: true }), ep('d', { clarifications: 1, turns: 2, success: true }), ep('e', { task: 'gsm8k', difficulty: 'easy', success: true }),
];

test('a policy that asks where it must and not where it need not passes every check', () => {
  const c = comparePolicies(summarizeEval(after), summarizeEval(before), CFG, { needs_clarification: 2, hard_qa: 4 });
  assert.deepEqual(c.checks.map((k) => [k.name, k.value, k.status]), [
    ['needs_clarification_success_gain_pp', 100, 'pass'],
    ['overclar_rate_relative_change', -0.5, 'pass'],
    ['avg_turns_change', -0.6, 'pass'],
    ['hard_qa_success_gain_pp', 100, 'pass'],
    ['needs_clarification_items', 2, 'pass'],
    ['hard_qa_items', 4, 'pass'],
  ]);
  assert.deepEqual(Object.keys(c.by_task), ['gsm8k', 'hotpotqa']);
  assert.equal(c.by_difficulty.hard!.success_gain_pp, 100);
  assert.equal(c.by_difficulty.easy!.success_gain_pp, 0);
  assert.equal(comparisonSummary(c), 'needs-clarification success +100 pp, over-clarification -50 %, turns -0.6, hard QA success +100 pp');
});

test('the untrained policy compared with itself fails the three gains and passes "turns not up"', () => {
  const s = summarizeEval(before);
  const c = comparePolicies(s, s, CFG, { needs_clarification: 2, hard_qa: 4 });
  assert.deepEqual(c.checks.filter((k) => !k.pass).map((k) => [k.name, k.value]), [
    ['needs_clarification_success_gain_pp', 0], ['overclar_rate_relative_change', 0], ['hard_qa_success_gain_pp', 0],
  ]);
});

test('an over-clarification rate of zero on both sides is waived; missing groups fail with null values', () => {
  const none = [ep('x', { needs_clarification: false }), ep('y', { needs_clarification: false })];
  const c = comparePolicies(summarizeEval(none), summarizeEval(none), CFG, { needs_clarification: 0, hard_qa: 2 });
  const over = c.checks.find((k) => k.name === 'overclar_rate_relative_change')!;
  assert.equal(over.status, 'waived');
  assert.match(over.waived!, /nothing to reduce/);
  const nc = c.checks.find((k) => k.name === 'needs_clarification_success_gain_pp')!;
  assert.deepEqual([nc.value, nc.pass], [null, false]);
  assert.deepEqual(c.checks.find((k) => k.name === 'needs_clarification_items')!.value, 0);
});

test('the twins are under-specified renderings of the held-out items, and every held-out scenario gets a bucket', async () => {
  const shadow = shadowSetJsonl().split('\n').filter(Boolean).slice(0, 60).map((l) => JSON.parse(l) as Scenario);
  const raw = ['gsm8k', 'hotpotqa', 'strategyqa'].flatMap((t) => fs.readdirSync(path.join(REPO, 'data/raw', t)).map((f) => path.join(REPO, 'data/raw', t, f))).filter((f) => dataFileFormat(f) !== null);
  const held = new Set(shadow.map((s) => s.source_id));
  const items = (await loadSources(raw, { onError: 'fail' })).items.filter((i) => held.has(i.source_id));
  const yaml = (f: string): Record<string, Record<string, unknown>> => parse(fs.readFileSync(path.join(REPO, 'configs', f), 'utf8')) as Record<string, Record<string, unknown>>;
  const pool = PoolParamsSchema.parse(yaml('pool.yaml').pool);
  const packDir = path.join(REPO, 'templates/pack_v2');
  const pack = await loadPack(fs.readdirSync(packDir).filter((f) => f.endsWith('.json')).map((f) => path.join(packDir, f)));
  const twins = underspecifiedTwins(items, pack, pool, 5, 30, createRng);
  assert.equal(twins.scenarios.length, 30);
  for (const t of twins.scenarios) {
    assert.equal(t.needs_clarification, true);
    assert.ok(t.clarification, t.id);
    assert.ok(t.id.startsWith(`${TWIN_ID_PREFIX}-`));
    assert.ok(held.has(t.source_id), 'a twin renders a held-out item');
  }
  assert.deepEqual(underspecifiedTwins(items, pack, pool, 5, 30, createRng).scenarios, twins.scenarios, 'seeded: the same twins every time');
  const d = yaml('difficulty.yaml').difficulty!;
  const metrics = new MetricsComputer(await loadQwen3(), { multiEntityMin: (d.metrics as { multi_entity_min: number }).multi_entity_min });
  const set = heldOutSet(shadow, twins, metrics, bandsSchema.parse(d.bands), dimensionsSchema.parse(d.dimensions));
  assert.equal(set.scenarios.length, 90);
  assert.equal(set.bucket.size, 90);
  assert.equal([...set.kind.values()].filter((k) => k === 'twin').length, 30);
  assert.ok(set.notes.some((n) => n.includes('0 of them needing a clarification')));
});

test('the learning curve is a deterministic PNG; ticks are 1-2-5 steps with short labels', () => {
  const pts: CurvePoint[] = Array.from({ length: 60 }, (_, i) => ({ step: i + 1, reward: Math.log(i + 2), kl: 0.001 * i, success: i % 7 === 0 ? null : i / 60 }));
  const a = drawLearningCurve(pts, 'RC1 LEARNING CURVE');
  assert.deepEqual(a, drawLearningCurve(pts, 'RC1 LEARNING CURVE'));
  const png = PNG.sync.read(a);
  assert.equal(png.width, 960);
  const dpo = drawLearningCurve(pts.map((p) => ({ ...p, success: null })), 'DPO');
  assert.ok(PNG.sync.read(dpo).height === png.height, 'a series with no values draws an empty panel, not an error');
  assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(1, 120, 6), [20, 40, 60, 80, 100, 120]);
  assert.deepEqual([tickLabel(0.30000000000000004), tickLabel(0.0001), tickLabel(250000), tickLabel(-2)], ['0.3', '1.0E-4', '2.5E5', '-2']);
});

test('the checkpoint input refuses an external trainer\'s checkpoint and a missing initial/', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-ck-'));
  try {
    fs.mkdirSync(path.join(dir, 'step_00004'));
    fs.writeFileSync(path.join(dir, 'step_00004/checkpoint.json'), JSON.stringify({ format: 'external', step: 4, engine: 'command', files: {} }));
    fs.symlinkSync('step_00004', path.join(dir, 'latest'));
    assert.throws(() => builtInCheckpoint(dir, 'latest', 'export_gguf'), /latest \(step_00004\) is an external trainer's checkpoint \(engine command\).*convert_hf_to_gguf\.py/);
    assert.throws(() => builtInCheckpoint(dir, 'initial', 'ppo_eval'), /initial is missing or incomplete.*the built-in engine writes initial\//);
  } finally { fs.rmSync(dir, { recursive: true, force: true }); }
});
