// seed_pool and the pool library (src/pool): determinism, prefix stability, the shadow set held
// aside, the clarify rate, under-specified questions, the task mix, and rendering variety.
// The rule runs against a fake context (test/fixtures/pool/harness.ts) on the shipped data,
// packs and configs.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { stratifiedQuotas, type Gsm8kItem, type HotpotqaItem, type Scenario, type StrategyqaItem } from '../../src/data/index.ts';
import { applyGap, findGaps, taskSequence } from '../../src/pool/index.ts';
import { tokenize } from '../../src/text/index.ts';
import { buildPool, config, PACK_V2, RAW, runPool, runRule, shadowOutputs } from '../fixtures/pool/harness.ts';

const read = (p: string): string => readFileSync(p, 'utf8');
const scenarios = (p: string): Scenario[] => read(p).trimEnd().split('\n').map((l) => JSON.parse(l) as Scenario);
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const MIX = { hotpotqa: 0.45, strategyqa: 0.3, gsm8k: 0.25 };

test('seed_pool is byte-identical for the same seed and different for another seed', async () => {
  const a = read(await runPool(300));
  const b = read(await runPool(300));
  assert.equal(sha(a), sha(b));
  assert.notEqual(sha(read(await runPool(300, { seed: 7 }))), sha(a));
  assert.ok(a.endsWith('\n') && a.split('\n').every((l) => l === '' || l === JSON.stringify(JSON.parse(l))));
});

test('the pool at n = 200 is the first 200 lines of the pool at n = 500', async () => {
  const small = read(await buildPool(200));
  const large = read(await buildPool(500)).split('\n');
  assert.equal(small, `${large.slice(0, 200).join('\n')}\n`);
});

test('no scenario uses a source item that the shadow manifest holds aside', async () => {
  const manifest = JSON.parse(read((await shadowOutputs())[1]!)) as { source_ids: string[] };
  const held = new Set(manifest.source_ids);
  const pool = scenarios(await buildPool(3000));
  assert.equal(pool.filter((s) => held.has(s.source_id)).length, 0);
  const shadowIds = new Set(scenarios((await shadowOutputs())[0]!).map((s) => s.source_id));
  assert.deepEqual(shadowIds, held);
});

test('every prefix of every task holds ⌊0.3·m⌋ under-specified scenarios (clarify_rate .30), and another rate is honoured too', async () => {
  const pool = scenarios(await buildPool(1000));
  assert.equal(pool.filter((s) => s.needs_clarification).length, 300);
  for (const task of ['gsm8k', 'hotpotqa', 'strategyqa']) {
    const own = pool.filter((s) => s.task === task);
    own.forEach((_, m) => assert.equal(own.slice(0, m + 1).filter((s) => s.needs_clarification).length, Math.floor(((m + 1) * 3) / 10)));
  }
  const half = scenarios(await buildPool(400, { clarify_rate: 0.5 }));
  assert.ok(Math.abs(half.filter((s) => s.needs_clarification).length / 400 - 0.5) <= 0.01);
});

test('an under-specified scenario leaves the detail out of the user turns, reveals it in clarification, and its reference opens with that exchange', async () => {
  const pool = scenarios(await buildPool(600)).filter((s) => s.needs_clarification);
  assert.deepEqual(new Set(pool.map((s) => s.task)), new Set(['gsm8k', 'hotpotqa', 'strategyqa']));
  const raw = new Map<string, string>();
  for (const line of read(RAW.find((p) => p.includes('strategyqa') && p.endsWith('.jsonl'))!).trimEnd().split('\n')) {
    const r = JSON.parse(line) as { qid: string; term: string };
    raw.set(r.qid, r.term);
  }
  for (const s of pool) {
    const step = s.reference.steps[0]!;
    assert.equal(step.type, 'clarify');
    assert.ok(step.type === 'clarify' && step.reply === s.clarification && step.ask.length > 0);
    const detail = s.clarification!;
    const user = tokenize(s.messages.map((m) => m.content).join('\n')).join(' ');
    if (s.task === 'strategyqa') {
      const term = raw.get(s.source_id)!.replace(/\s*\([^)]*\)$/, '').toLowerCase();
      assert.ok(detail.toLowerCase().includes(term), `${s.id}: clarification names the term`);
      assert.ok(!` ${user} `.includes(` ${tokenize(term).join(' ')} `), `${s.id}: the term is absent from the user turns`);
    }
    if (s.task === 'hotpotqa') {
      const titles = s.reference.steps.flatMap((x) => (x.type === 'tool_call' ? [x.input.replace(/\s*\([^)]*\)$/, '')] : []));
      const named = titles.filter((t) => detail.includes(t));
      assert.ok(named.length > 0, `${s.id}: clarification names a supporting title`);
      assert.ok(named.some((t) => !` ${user} `.includes(` ${tokenize(t).join(' ')} `)), `${s.id}: the entity is absent from the user turns`);
    }
    if (s.task === 'gsm8k') {
      const value = /\$?\d[\d,.]*%?/.exec(detail)![0];
      assert.ok(!` ${user} `.includes(` ${tokenize(value).join(' ')} `), `${s.id}: ${value} is absent from the user turns`);
    }
  }
});

test('the task mix of every prefix is the largest-remainder quota of its length', () => {
  const seq = taskSequence(3000, MIX);
  assert.equal(seq.deviations, 0);
  const counts: Record<string, number> = { gsm8k: 0, hotpotqa: 0, strategyqa: 0 };
  seq.tasks.forEach((t, k) => {
    assert.equal(seq.index[k], counts[t]);
    counts[t]! += 1;
    if ((k + 1) % 7 === 0 || k < 50) assert.deepEqual(counts, stratifiedQuotas(k + 1, MIX));
  });
  assert.throws(() => taskSequence(10, { trivia: 1 }), /pool\.mix: unknown task "trivia"/);
});

test('renderings of one source item never repeat a template × role × style combination, and fit max_turns and the length bounds', async () => {
  const pool = scenarios(await buildPool(3000));
  const seen = new Map<string, Set<string>>();
  for (const s of pool) {
    const combos = seen.get(s.source_id) ?? new Set<string>();
    const combo = `${s.needs_clarification}/${s.template_id}/${s.role}/${s.style}`;
    assert.ok(!combos.has(combo), `${s.source_id} rendered twice as ${combo}`);
    combos.add(combo);
    seen.set(s.source_id, combos);
    assert.ok(s.messages.length + 1 + (s.needs_clarification ? 2 : 0) <= 6);
    assert.deepEqual(s.tools, s.task === 'gsm8k' ? ['calc'] : ['wiki']);
  }
  assert.ok([...seen.values()].some((c) => c.size >= 3), 'items are reused across rounds');
  assert.deepEqual(Object.keys(pool[0]!), ['id', 'task', 'source_id', 'role', 'style', 'template_id', 'messages', 'context', 'tools', 'gold_answer', 'needs_clarification', 'clarification', 'reference']);
  assert.equal(pool[0]!.id, 'rc1-000001');
});

test('gaps: a count, a sum of money, an entity the question names, a StrategyQA term', () => {
  const g: Gsm8kItem = {
    task: 'gsm8k', source_id: 'g1', format: 'gsm8k', gold_answer: '72', origin: { file: 'x', line: 1, unit: 'line' }, steps: [], calc: [],
    question: 'Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.',
  };
  const [gap] = findGaps(g);
  assert.deepEqual(gap, { kind: 'number', start: 22, end: 24, detail: '48' });
  assert.deepEqual(applyGap(g.question, gap!, 'a certain number of'), { question: 'Natalia sold clips to a certain number of her friends in April, and then she sold half as many clips in May.', phrase: 'a certain number of her friends' });
  assert.deepEqual(findGaps({ ...g, question: 'Weng earns $12 an hour. She worked 50 minutes. How much did she earn?' }).map((x) => [x.kind, x.detail]), [['amount', '$12'], ['number', '50']]);
  assert.deepEqual(findGaps({ ...g, question: 'She has 3 cats and 3 dogs.' }), [], 'a number that occurs twice cannot be left out');
  const h = { task: 'hotpotqa', question: 'Which magazine was started first, Arthur\'s Magazine or First for Women?', supporting: [{ title: 'Arthur\'s Magazine' }, { title: 'First for Women' }] } as unknown as HotpotqaItem;
  assert.deepEqual(findGaps(h).map((x) => x.detail), ['Arthur\'s Magazine', 'First for Women']);
  const sq = { task: 'strategyqa', term: 'Moon', question: 'Could the moon be seen from the Moon base?' } as unknown as StrategyqaItem;
  assert.deepEqual(findGaps(sq), [], 'the term occurs twice');
  const s2 = { ...sq, question: 'Could a person walk on the Moon without a suit?' } as StrategyqaItem;
  const [t] = findGaps(s2);
  assert.deepEqual(applyGap(s2.question, t!, 'the thing I mentioned').question, 'Could a person walk on the thing I mentioned without a suit?');
});

test('seed_pool needs args.n and refuses a pack whose name is not templates.pack', async () => {
  const base = {
    params: { pool: config('pool'), templates: config('templates'), data: config('data') },
    inputs: { raw: RAW, v2: PACK_V2, shadow: await shadowOutputs(), gates: [] }, outputs: ['data/rollouts/rc1_seed.jsonl'],
  };
  await assert.rejects(runRule('seed_pool', base), /args\.n must be a positive integer/);
  await assert.rejects(runRule('seed_pool', { ...base, args: { n: 5 }, params: { ...base.params, templates: { ...config('templates'), pack: 'pack_v3' } } }),
    /the v2 inputs are pack "pack_v2", but templates\.pack is "pack_v3"/);
});
