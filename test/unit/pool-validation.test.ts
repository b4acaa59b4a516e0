// pool_validation: the shipped pool passes; planted faults fail the check they should, each with
// its hint (a shadow item copied into the pool, 5 % duplicates, the mix shifted by 5 pp, a
// scenario below the length floor). The leak index's containment similarity on a hand example.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Check, RuleResult } from '../../src/api/index.ts';
import type { Scenario } from '../../src/data/index.ts';
import { LeakIndex } from '../../src/pool/index.ts';
import { corpusOf } from '../../src/text/index.ts';
import { buildPool, config, PACK_V1, RAW, runRule, shadowOutputs, TMP } from '../fixtures/pool/harness.ts';

const lines = (p: string): string[] => readFileSync(p, 'utf8').trimEnd().split('\n');
let planted = 0;
function plant(rows: string[]): string {
  const p = join(TMP, `planted-${++planted}.jsonl`);
  writeFileSync(p, `${rows.join('\n')}\n`);
  return p;
}

async function validate(poolPath: string, pool = config('pool')): Promise<{ checks: Map<string, Check>; report: Record<string, any> }> {
  const r = await runRule('pool_validation', {
    params: { validation: config('validation'), pool },
    inputs: { pool: [poolPath], shadow: await shadowOutputs(), v1: PACK_V1, raw: RAW },
    outputs: ['reports/rc1/pool_validation.json'],
  });
  const res = r.result as RuleResult;
  return { checks: new Map(res.checks!.map((c) => [c.name, c])), report: res.report! };
}
const failing = (checks: Map<string, Check>): string[] => [...checks.values()].filter((c) => !c.pass).map((c) => c.name).sort();

test('the shipped seed pool passes every pool_validation check, with definitions in the report', async () => {
  const { checks, report } = await validate(await buildPool(1000));
  assert.deepEqual(failing(checks), []);
  assert.deepEqual([...checks.keys()], [
    'distinct_2', 'kl3_vs_v1', 'roles', 'styles', 'duplicate_rate', 'length_min', 'length_max', 'shadow_leaks',
    'mix_max_deviation_pp', 'mix_gsm8k_deviation_pp', 'mix_hotpotqa_deviation_pp', 'mix_strategyqa_deviation_pp',
  ]);
  assert.ok([...checks.values()].every((c) => typeof c.hint === 'string' && c.hint.length > 0), 'every check has a hint');
  assert.equal(report.sample.scenarios, 960);
  assert.equal(report.clarify.rate, 0.3);
  assert.ok(report.stats.kl.value > 10 * report.stats.kl.noise_floor, 'the KL is far above what re-sampling v1 gives');
  for (const k of ['distinct_n', 'kl', 'zipf_slope', 'length', 'leak', 'duplicates', 'mix']) assert.ok(report.definitions[k], k);
});

test('a shadow item copied into the pool fails the leak check, with the hint in the check', async () => {
  const pool = lines(await buildPool(1000));
  const shadow = lines((await shadowOutputs())[0]!).map((l) => JSON.parse(l) as Scenario);
  const victim = JSON.parse(pool[10]!) as Scenario;
  const copy = shadow.find((s) => s.task === victim.task)!;
  pool[10] = JSON.stringify({ ...copy, id: victim.id });
  const wrapped = JSON.parse(pool[20]!) as Scenario;
  const other = shadow.find((s) => s.task === wrapped.task && s.id !== copy.id)!;
  pool[20] = JSON.stringify({ ...wrapped, messages: [{ role: 'user', content: `I'm a student. ${other.messages[0]!.content} Please explain.` }] });
  const { checks, report } = await validate(plant(pool));
  const leak = checks.get('shadow_leaks')!;
  assert.equal(leak.pass, false);
  assert.equal(leak.value, 2);
  assert.match(leak.hint!, /shadow question/);
  assert.deepEqual(report.leaks.examples.map((e: { id: string; shadowId: string; similarity: number }) => [e.id, e.shadowId, e.similarity]), [
    [victim.id, copy.id, 1], [wrapped.id, other.id, 1],
  ]);
});

test('a pool with 5 % duplicates fails the duplicate check, 1 % passes', async () => {
  const pool = lines(await buildPool(1000));
  const dup = (count: number): string[] => pool.map((line, i) => {
    if (i < 500 || i >= 500 + count) return line;
    const s = JSON.parse(line) as Scenario;
    return JSON.stringify({ ...s, messages: (JSON.parse(pool[i - 500]!) as Scenario).messages });
  });
  const five = await validate(plant(dup(50)));
  assert.deepEqual([five.checks.get('duplicate_rate')!.value, five.checks.get('duplicate_rate')!.pass], [0.05, false]);
  assert.match(five.checks.get('duplicate_rate')!.hint!, /combinations/);
  const one = await validate(plant(dup(10)));
  assert.deepEqual([one.checks.get('duplicate_rate')!.value, one.checks.get('duplicate_rate')!.pass], [0.01, true]);
});

test('a pool whose mix is shifted by 5 pp fails the overall and per-task mix checks', async () => {
  const pool = config('pool');
  const shifted = await buildPool(1000, { mix: { hotpotqa: 0.5, strategyqa: 0.25, gsm8k: 0.25 } });
  const { checks } = await validate(shifted, { ...pool, mix: { hotpotqa: 0.5, strategyqa: 0.25, gsm8k: 0.25 } });
  assert.deepEqual(failing(checks), ['mix_hotpotqa_deviation_pp', 'mix_max_deviation_pp', 'mix_strategyqa_deviation_pp']);
  assert.equal(checks.get('mix_hotpotqa_deviation_pp')!.value, 5);
  assert.match(checks.get('mix_max_deviation_pp')!.hint!, /validation\.mix_target/);
});

test("the mix is checked against RC1's target, not the generator's pool.mix: a pool generated at .9/.05/.05 fails", async () => {
  const mix = { hotpotqa: 0.9, strategyqa: 0.05, gsm8k: 0.05 };
  const { checks, report } = await validate(await buildPool(400, { mix }), { ...config('pool'), mix });
  assert.deepEqual(failing(checks), ['mix_gsm8k_deviation_pp', 'mix_hotpotqa_deviation_pp', 'mix_max_deviation_pp', 'mix_strategyqa_deviation_pp']);
  assert.equal(checks.get('mix_hotpotqa_deviation_pp')!.value, 45);
  assert.equal(report.mix.hotpotqa.target, 0.45);
});

test('a scenario shorter than 64 tokens fails the length check', async () => {
  const pool = lines(await buildPool(1000));
  const i = pool.findIndex((l) => (JSON.parse(l) as Scenario).task === 'gsm8k');
  const s = JSON.parse(pool[i]!) as Scenario;
  pool[i] = JSON.stringify({ ...s, messages: [{ role: 'user', content: 'What is 2 + 2?' }] });
  const { checks, report } = await validate(plant(pool));
  assert.deepEqual(failing(checks), ['length_min']);
  assert.equal(checks.get('length_min')!.value, 4);
  assert.deepEqual(report.length.examples, [{ id: s.id, length: 4 }]);
});

test('leak similarity is the share of a shadow item\'s 5-grams found in the pool item, through the index', () => {
  // shadow s1 "a b c d e f" has 5-grams {a b c d e, b c d e f}; s2 "x y z" (< 5 tokens) is one gram "x y z".
  const index = new LeakIndex([{ id: 's1', segments: corpusOf(['a b c d e f']) }, { id: 's2', segments: corpusOf(['x y z']) }], 5);
  assert.deepEqual(index.best(corpusOf(['please a b c d e f thanks'])), { shadowId: 's1', similarity: 1 });
  assert.deepEqual(index.best(corpusOf(['a b c d e g'])), { shadowId: 's1', similarity: 0.5 });
  assert.deepEqual(index.best(corpusOf(['so x y z then'])), { shadowId: 's2', similarity: 1 });
  assert.deepEqual(index.best(corpusOf(['a b c d', 'e f'])), null, 'n-grams do not cross turns');
});

test('through the CLI: seed_pool then pool_validation pass, and a pool with a planted shadow item fails with exit 2 and the hint', async () => {
  const { TestRig, REPO } = await import('../helpers/rig.ts');
  const { cpSync } = await import('node:fs');
  const raw = "['data/raw/gsm8k/*.jsonl', 'data/raw/hotpotqa/*.jsonl', 'data/raw/strategyqa/*.jsonl']";
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
const gate = (name: string, pool: any) => defineGate({ name, rule: 'rules/pool_validation.ts',
  inputs: { pool, shadow: target('shadow_set'), v1: 'templates/pack_v1/*.json', raw: ${raw} },
  outputs: ['reports/' + name + '.json'], report: 'reports/' + name + '.json', params: ['validation', 'pool'] });
export default definePipeline({ defaultTargets: ['pool_validation'], targets: [
  defineTarget({ name: 'shadow_set', rule: 'rules/shadow_set.ts', inputs: { raw: ${raw} },
    outputs: ['data/shadow_eval_245.jsonl', 'reports/rc1/sample_manifest.json'], params: ['shadow', 'data'] }),
  defineTarget({ name: 'seed_pool', rule: 'rules/seed_pool.ts',
    inputs: { raw: ${raw}, v2: 'templates/pack_v2/*.json', shadow: target('shadow_set'), gates: [] },
    outputs: ['data/rollouts/rc1_seed.jsonl'], params: ['pool', 'templates', 'data'], args: { n: 300 } }),
  gate('pool_validation', target('seed_pool')),
  gate('planted_validation', 'planted/pool.jsonl'),
] });
`,
  });
  try {
    for (const p of ['rules/shadow_set.ts', 'rules/seed_pool.ts', 'rules/pool_validation.ts', 'templates', 'data/raw', 'configs/default.yaml', 'configs/pool.yaml']) {
      cpSync(join(REPO, p), join(rig.dir, p), { recursive: true });
    }
    const ok = rig.run(['pool_validation']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    // 89 under-specified = ⌊.3·75⌋ + ⌊.3·135⌋ + ⌊.3·90⌋ = 22 + 40 + 27 (exact per task prefix)
    assert.match(ok.stdout, /seed_pool .*300 scenarios \(gsm8k 75, hotpotqa 135, strategyqa 90; 89 under-specified; 245 shadow items excluded\)/);
    assert.match(ok.stdout, /gate\s+pool_validation ok: 12 passed ·/);
    const pool = rig.read('data/rollouts/rc1_seed.jsonl').trimEnd().split('\n');
    const shadow = JSON.parse(rig.read('data/shadow_eval_245.jsonl').split('\n')[0]!) as Scenario;
    const i = pool.findIndex((l) => (JSON.parse(l) as Scenario).task === shadow.task);
    pool[i] = JSON.stringify({ ...shadow, id: (JSON.parse(pool[i]!) as Scenario).id });
    rig.write('planted/pool.jsonl', `${pool.join('\n')}\n`);
    const bad = rig.run(['planted_validation']);
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /shadow_leaks\s+1\s+<=\s+0\s+FAIL\n\s+hint: a pool item repeats a shadow question/);
  } finally { rig.cleanup(); }
});
