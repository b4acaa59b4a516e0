// preflight_checks, compiled as the engine compiles it and run with a fake context on the shipped
// configs/ppo_scale.yaml and configs/evaluation.yaml (prod thresholds) or edited copies: the
// shipped config passes in prod, each bad value fails the check that names it, and the report
// carries the WEIGHTS_OK line with the weights file's sha256.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import type { Rule } from '../../packages/engine/src/api/index.ts';
import { ROOT, compileRule, runEvalRule, shippedConfig, writeWeights } from '../helpers/evaluation-fixtures.ts';

let dir = '';
let rule: Rule;
const cfg = shippedConfig();
const WEIGHTS = {
  correctness: 0.5,
  reasoning: 0.3,
  clarity: 0.05,
  conciseness: 0.05,
  clarification: 0.05,
  tool_use: 0.05,
  format_safety: 0,
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-eval-preflight-'));
  rule = await compileRule('preflight_checks', dir);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the gate on ppo_scale.yaml text (default: the shipped file) with prod thresholds; disk threshold 0 unless given. */
async function preflight(
  o: { ppoYaml?: string; weights?: Record<string, number>; profile?: string; minDisk?: number } = {},
) {
  const ppoFile = join(ROOT, 'configs/ppo_scale.yaml');
  const ppo = parse(o.ppoYaml ?? readFileSync(ppoFile, 'utf8')).ppo;
  const { rounds: _, ...thresholds } = cfg.preflight;
  return runEvalRule(rule, {
    params: {
      ppo,
      preflight: { ...thresholds, min_free_disk_gb: o.minDisk ?? 0 },
      reward: { beta: cfg.reward.beta },
      pool: { mix: cfg.pool.mix },
    },
    root: dir,
    profile: o.profile ?? 'prod',
    outputs: ['reports/preflight/checks.json'],
    inputs: { weights: [writeWeights(join(dir, 'configs/weights.json'), o.weights ?? WEIGHTS)], ppo_config: [ppoFile] },
  });
}
const failed = (checks: Map<string, { status: string }>): string[] =>
  [...checks].filter(([, c]) => c.status === 'fail').map(([n]) => n);
const shipped = readFileSync(join(ROOT, 'configs/ppo_scale.yaml'), 'utf8');

test("the shipped ppo_scale.yaml and a valid weights file pass every prod check, and the report has the WEIGHTS_OK line with the file's sha256", async () => {
  const run = await preflight();
  assert.deepEqual(failed(run.checks), []);
  assert.equal([...run.checks.values()].filter((c) => c.status === 'waived').length, 0, 'nothing is waived in prod');
  const sha = createHash('sha256')
    .update(readFileSync(join(dir, 'configs/weights.json')))
    .digest('hex');
  const lines = (run.result.report as { lines: string[] }).lines;
  assert.equal(lines[0], `WEIGHTS_OK sha256=${sha}`);
  assert.equal(lines[1], 'PPO_CFG_OK');
  assert.equal(lines[2], 'DISK_OK >0GB');
});

test('a ppo_scale.yaml with steps 40 000 fails ppo.steps at prod thresholds, and only that check', async () => {
  const run = await preflight({ ppoYaml: shipped.replace(/steps: 50000/, 'steps: 40000') });
  assert.deepEqual(failed(run.checks), ['ppo.steps']);
  assert.deepEqual([run.checks.get('ppo.steps')!.value, run.checks.get('ppo.steps')!.threshold], [40000, 50000]);
  assert.ok(!(run.result.report as { lines: string[] }).lines.includes('PPO_CFG_OK'));
});

test('each other PPO value out of bounds fails its own check', async () => {
  const cases: [string, string, string][] = [
    ['simulate: false', 'simulate: true', 'ppo.simulate'],
    ['target_kl: 0.03', 'target_kl: 0.08', 'ppo.target_kl'],
    ['seeds: [20250820, 20250821, 20250822]', 'seeds: [20250820, 20250820, 20250821]', 'ppo.seeds'],
    ['method: qlora', 'method: full', 'ppo.finetune.method'],
    ['use_overclar_penalty: true', 'use_overclar_penalty: false', 'ppo.use_overclar_penalty'],
    ['hotpotqa: 0.45, strategyqa: 0.30, gsm8k: 0.25', 'hotpotqa: 0.50, strategyqa: 0.25, gsm8k: 0.25', 'ppo.datasets'],
    ['beta: 0.05 ', 'beta: 0.10 ', 'ppo.reward.beta'],
  ];
  for (const [from, to, name] of cases) {
    assert.ok(shipped.includes(from), `the shipped file has '${from}'`);
    assert.deepEqual(failed((await preflight({ ppoYaml: shipped.replace(from, to) })).checks), [name], to);
  }
});

test('live_mode false fails in prod and is waived, visibly, in dev', async () => {
  const yaml = shipped.replace('live_mode: true', 'live_mode: false');
  assert.deepEqual(failed((await preflight({ ppoYaml: yaml })).checks), ['ppo.live_mode']);
  const dev = await preflight({ ppoYaml: yaml, profile: 'dev' });
  assert.deepEqual(failed(dev.checks), []);
  assert.deepEqual(
    [dev.checks.get('ppo.live_mode')!.status, dev.checks.get('ppo.live_mode')!.waived],
    ['waived', 'profile dev'],
  );
  assert.match((dev.result.report as { lines: string[] }).lines[1]!, /^PPO_CFG_OK \(waived: ppo\.live_mode\)$/);
});

test('an invalid weights file fails its checks and the report has no WEIGHTS_OK line', async () => {
  const run = await preflight({ weights: { ...WEIGHTS, correctness: 0.6, reasoning: 0.2 } });
  assert.deepEqual(failed(run.checks), ['weights.max']);
  assert.ok(!(run.result.report as { lines: string[] }).lines.some((l) => l.startsWith('WEIGHTS_OK')));
});

test('free disk at or below preflight.min_free_disk_gb fails disk.free_gb_above_min; the report records the threshold, not the measured figure', async () => {
  const run = await preflight({ minDisk: 1e9 });
  assert.deepEqual(failed(run.checks), ['disk.free_gb_above_min']);
  const c = run.checks.get('disk.free_gb_above_min')!;
  assert.deepEqual([c.value, c.threshold], [false, true]);
  assert.deepEqual(
    (run.result.report as { disk: { min_free_gib: number; above_min: boolean } }).disk.min_free_gib,
    1e9,
  );
  assert.ok(!/"free_gib"/.test(JSON.stringify(run.result.report)), 'no measured figure in the report');
  assert.ok(
    run.logs.some((l) =>
      /^disk: \d+\.\d GiB free on the workspace's filesystem \(preflight\.min_free_disk_gb 1000000000\)$/.test(l),
    ),
    run.logs.join('\n'),
  );
});
