// seed_pool and the pool library (lib/pool): determinism, prefix stability, the shadow set held
// aside, the clarify rate, under-specified questions, the task mix, rendering variety, the hint
// gold and split variants (each as common with as without clarification), the difficulty gate's
// ceilings, and a reasoning bucket that says next to nothing about the need for clarification. The rule
// runs against a fake context (test/fixtures/pool/harness.ts) on the shipped data, packs and configs.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  loadSources,
  stratifiedQuotas,
  type Gsm8kItem,
  type HotpotqaItem,
  type SourceItem,
  type StrategyqaItem,
} from '../../lib/data/index.ts';
import {
  association,
  bucketOf,
  loadQwen3,
  MetricsComputer,
  planBalance,
  type Qwen3Counter,
} from '../../lib/difficulty/index.ts';
import {
  applyGap,
  findGaps,
  findHints,
  kindAt,
  kindKey,
  kindPlan,
  sentences,
  splitQuestion,
  taskSequence,
  type PoolScenario,
} from '../../lib/pool/index.ts';
import { tokenize } from '../../lib/text/index.ts';
import {
  buildPool,
  config,
  PACK_V2,
  RAW,
  ROOT,
  runPool,
  runRule,
  shadowOutputs,
  TMP,
} from '../fixtures/pool/harness.ts';

const read = (p: string): string => readFileSync(p, 'utf8');
const scenarios = (p: string): PoolScenario[] =>
  read(p)
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as PoolScenario);
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
    own.forEach((_, m) =>
      assert.equal(own.slice(0, m + 1).filter((s) => s.needs_clarification).length, Math.floor(((m + 1) * 3) / 10)),
    );
  }
  const half = scenarios(await buildPool(400, { clarify_rate: 0.5 }));
  assert.ok(Math.abs(half.filter((s) => s.needs_clarification).length / 400 - 0.5) <= 0.01);
});

test('an under-specified scenario leaves the detail out of the user turns, reveals it in clarification, and its reference opens with that exchange', async () => {
  const pool = scenarios(await buildPool(600)).filter((s) => s.needs_clarification);
  assert.deepEqual(new Set(pool.map((s) => s.task)), new Set(['gsm8k', 'hotpotqa', 'strategyqa']));
  const raw = new Map<string, string>();
  for (const line of read(RAW.find((p) => p.includes('strategyqa') && p.endsWith('.jsonl'))!)
    .trimEnd()
    .split('\n')) {
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
      const term = raw
        .get(s.source_id)!
        .replace(/\s*\([^)]*\)$/, '')
        .toLowerCase();
      assert.ok(detail.toLowerCase().includes(term), `${s.id}: clarification names the term`);
      assert.ok(
        !` ${user} `.includes(` ${tokenize(term).join(' ')} `),
        `${s.id}: the term is absent from the user turns`,
      );
    }
    if (s.task === 'hotpotqa') {
      const titles = s.reference.steps.flatMap((x) =>
        x.type === 'tool_call' ? [x.input.replace(/\s*\([^)]*\)$/, '')] : [],
      );
      const named = titles.filter((t) => detail.includes(t));
      assert.ok(named.length > 0, `${s.id}: clarification names a supporting title`);
      assert.ok(
        named.some((t) => !` ${user} `.includes(` ${tokenize(t).join(' ')} `)),
        `${s.id}: the entity is absent from the user turns`,
      );
    }
    if (s.task === 'gsm8k') {
      const value = /\$?\d[\d,.]*%?/.exec(detail)![0];
      assert.ok(
        !` ${user} `.includes(` ${tokenize(value).join(' ')} `),
        `${s.id}: ${value} is absent from the user turns`,
      );
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
  assert.ok(
    [...seen.values()].some((c) => c.size >= 3),
    'items are reused across rounds',
  );
  assert.deepEqual(Object.keys(pool[0]!), [
    'id',
    'task',
    'source_id',
    'role',
    'style',
    'template_id',
    'messages',
    'context',
    'tools',
    'gold_answer',
    'needs_clarification',
    'clarification',
    'reference',
    'hint',
  ]);
  assert.equal(pool[0]!.id, 'rc1-000001');
});

test('gaps: a count, a sum of money, an entity the question names, a StrategyQA term', () => {
  const g: Gsm8kItem = {
    task: 'gsm8k',
    source_id: 'g1',
    format: 'gsm8k',
    gold_answer: '72',
    origin: { file: 'x', line: 1, unit: 'line' },
    steps: [],
    calc: [],
    question: 'Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.',
  };
  const [gap] = findGaps(g);
  assert.deepEqual(gap, { kind: 'number', start: 22, end: 24, detail: '48' });
  assert.deepEqual(applyGap(g.question, gap!, 'a certain number of'), {
    question:
      'Natalia sold clips to a certain number of her friends in April, and then she sold half as many clips in May.',
    phrase: 'a certain number of her friends',
  });
  assert.deepEqual(
    findGaps({ ...g, question: 'Weng earns $12 an hour. She worked 50 minutes. How much did she earn?' }).map((x) => [
      x.kind,
      x.detail,
    ]),
    [
      ['amount', '$12'],
      ['number', '50'],
    ],
  );
  assert.deepEqual(
    findGaps({ ...g, question: 'She has 3 cats and 3 dogs.' }),
    [],
    'a number that occurs twice cannot be left out',
  );
  const h = {
    task: 'hotpotqa',
    question: "Which magazine was started first, Arthur's Magazine or First for Women?",
    supporting: [{ title: "Arthur's Magazine" }, { title: 'First for Women' }],
  } as unknown as HotpotqaItem;
  assert.deepEqual(
    findGaps(h).map((x) => x.detail),
    ["Arthur's Magazine", 'First for Women'],
  );
  const sq = {
    task: 'strategyqa',
    term: 'Moon',
    question: 'Could the moon be seen from the Moon base?',
  } as unknown as StrategyqaItem;
  assert.deepEqual(findGaps(sq), [], 'the term occurs twice');
  const s2 = { ...sq, question: 'Could a person walk on the Moon without a suit?' } as StrategyqaItem;
  const [t] = findGaps(s2);
  assert.deepEqual(
    applyGap(s2.question, t!, 'the thing I mentioned').question,
    'Could a person walk on the thing I mentioned without a suit?',
  );
});

test('seed_pool needs args.n and refuses a pack whose name is not templates.pack', async () => {
  const base = {
    params: { pool: config('pool'), templates: config('templates'), data: config('data') },
    inputs: { raw: RAW, v2: PACK_V2, shadow: await shadowOutputs(), gates: [] },
    outputs: { pool: 'data/rollouts/rc1_seed.jsonl' },
  };
  await assert.rejects(runRule('seed_pool', base), /args\.n must be a positive integer/);
  await assert.rejects(
    runRule('seed_pool', {
      ...base,
      args: { n: 5 },
      params: { ...base.params, templates: { ...config('templates'), pack: 'pack_v3' } },
    }),
    /the v2 inputs are pack "pack_v2", but templates\.pack is "pack_v3"/,
  );
});

const difficulty = (parse(read(join(ROOT, 'configs/difficulty.yaml'))) as { difficulty: Record<string, any> })
  .difficulty;
const norm = (t: string): string => t.replace(/\s+/g, ' ').trim();
let sources: Promise<Map<string, SourceItem>> | null = null;
const source = (): Promise<Map<string, SourceItem>> =>
  (sources ??= loadSources(
    RAW.filter((f) => f.endsWith('.jsonl')),
    { onError: 'fail' },
  ).then((r) => new Map(r.items.map((i) => [`${i.task}/${i.source_id}`, i]))));
let qwen3: Promise<Qwen3Counter> | null = null;
const metrics = async (): Promise<MetricsComputer> =>
  new MetricsComputer(await (qwen3 ??= loadQwen3()), { multiEntityMin: difficulty.metrics.multi_entity_min });

test('kinds: every prefix holds ⌊0.3·m⌋ under-specified scenarios, and each variant its share among the under-specified and the other scenarios alike', () => {
  const plan = kindPlan('hotpotqa', 0.3, { hint: { hotpotqa: 0.42 }, gold: { hotpotqa: 0.5 } });
  const byKind: Record<string, number> = {};
  const cell = { clarify: { n: 0, hint: 0, gold: 0 }, plain: { n: 0, hint: 0, gold: 0 } };
  for (let m = 1; m <= 3000; m++) {
    const { kind, index } = kindAt(m - 1, plan);
    const key = kindKey(kind);
    assert.equal(index, byKind[key] ?? 0, `index among ${key}`);
    byKind[key] = (byKind[key] ?? 0) + 1;
    const c = cell[kind.clarify ? 'clarify' : 'plain'];
    c.n += 1;
    c.hint += kind.hint ? 1 : 0;
    c.gold += kind.gold ? 1 : 0;
    assert.equal(cell.clarify.n, Math.floor(m * 0.3));
    for (const x of [cell.clarify, cell.plain])
      assert.ok(
        Math.abs(x.hint - 0.42 * x.n) <= 1 && Math.abs(x.gold - 0.5 * x.n) <= 1.5,
        `prefix ${m}: ${JSON.stringify(cell)}`,
      );
  }
  assert.deepEqual(Object.keys(byKind).sort(), [
    'clarify',
    'clarify+gold',
    'clarify+hint',
    'clarify+hint+gold',
    'gold',
    'hint',
    'hint+gold',
    'plain',
  ]);
  assert.throws(
    () => kindPlan('gsm8k', 0.3, { split: { gsm8k: 1.2 } }),
    /pool\.variants\.split\.gsm8k: expected a share in \[0, 1\], got 1\.2/,
  );
});

test('hints quote a supporting sentence without the answer; a gsm8k question splits before the question it asks', () => {
  assert.deepEqual(sentences('Born in St. Louis, he moved to the U.S. Army base. He left in 1950! Was it? Yes.'), [
    'Born in St. Louis, he moved to the U.S. Army base.',
    'He left in 1950!',
    'Was it?',
    'Yes.',
  ]);
  const h = {
    task: 'hotpotqa',
    question: 'Which magazine was started first?',
    gold_answer: "Arthur's Magazine",
    paragraphs: [
      {
        title: 'A',
        sentences: ["Arthur's Magazine (1844–1846) was an American literary periodical.", ' It was founded early.'],
      },
      { title: 'F', sentences: ["First for Women is a woman's magazine published by Bauer Media Group in the USA."] },
    ],
    supporting: [
      { title: 'A', sent_id: 0 },
      { title: 'F', sent_id: 0 },
    ],
  } as unknown as HotpotqaItem;
  assert.deepEqual(
    findHints(h, 8).map((x) => [x.source, x.title, x.text]),
    [['supporting_fact', 'F', "First for Women is a woman's magazine published by Bauer Media Group in the USA."]],
  );
  assert.deepEqual(findHints(h, 20), [], 'shorter than min_tokens');
  const ircot = {
    ...h,
    gold_answer: 'no',
    paragraphs: [
      {
        title: 'A',
        sentences: [
          "Arthur's Magazine was an American literary periodical of the 1840s.  It was based in Philadelphia.",
        ],
      },
    ],
    supporting: [{ title: 'A' }],
  } as HotpotqaItem;
  assert.deepEqual(
    findHints(ircot, 8).map((x) => x.text),
    ["Arthur's Magazine was an American literary periodical of the 1840s."],
    'IRCoT: the lead sentence of a supporting paragraph',
  );
  const g = {
    task: 'gsm8k',
    question: 'Weng earns $12 an hour. She worked 50 minutes. How much did she earn? Round to cents.',
  } as Gsm8kItem;
  assert.deepEqual(splitQuestion(g), {
    setup: 'Weng earns $12 an hour. She worked 50 minutes.',
    ask: 'How much did she earn? Round to cents.',
  });
  assert.equal(
    splitQuestion({ ...g, question: 'How much did Weng earn at $12 an hour?' }),
    null,
    'no statement to send first',
  );
});

test('a hinted scenario quotes one of its supporting sentences (never one holding the answer or the left-out detail), records it, and its clue_overlap is above .40; as many under-specified scenarios are hinted as others', async () => {
  const pool = scenarios(await buildPool(2000));
  const items = await source();
  const mc = await metrics();
  const leadIns: string[] = config<{ hint: { lead_ins: string[] } }>('pool').hint.lead_ins;
  const hinted = pool.filter((s) => s.hint !== null);
  assert.ok(hinted.length >= 450, `${hinted.length} hinted`);
  for (const s of pool) assert.equal(s.template_id.includes('+hint'), s.hint !== null, s.id);
  const share = (clarify: boolean, task: string) => {
    const xs = pool.filter((s) => s.needs_clarification === clarify && s.task === task);
    return xs.filter((s) => s.hint !== null).length / xs.length;
  };
  for (const t of ['hotpotqa', 'strategyqa'])
    assert.ok(Math.abs(share(true, t) - share(false, t)) < 0.02, `${t}: ${share(true, t)} vs ${share(false, t)}`);
  const lowClue: string[] = [];
  for (const s of hinted) {
    const h = s.hint!;
    const item = items.get(`${s.task}/${s.source_id}`)!;
    assert.ok(
      leadIns.some((l) => s.messages[0]!.content.startsWith(`${l} "${h.text}"\n\n`)),
      `${s.id}: quoted after a lead-in`,
    );
    if (item.task === 'strategyqa') {
      assert.ok(h.source === 'fact' && item.facts.map(norm).includes(h.text), `${s.id}: an annotator fact`);
    } else {
      assert.ok(item.task === 'hotpotqa' && h.source === 'supporting_fact', s.id);
      const paragraph = item.paragraphs.find((p) => p.title === h.title)!;
      const ok =
        item.format === 'hotpotqa-ircot'
          ? norm(paragraph.sentences.join(' ')).startsWith(h.text)
          : item.supporting.some((f) => f.title === h.title && norm(paragraph.sentences[f.sent_id!]!) === h.text);
      assert.ok(ok && item.supporting.some((f) => f.title === h.title), `${s.id}: a supporting sentence of ${h.title}`);
      const answer = tokenize(item.gold_answer).join(' ');
      if (!['yes', 'no'].includes(answer))
        assert.ok(!` ${tokenize(h.text).join(' ')} `.includes(` ${answer} `), `${s.id}: the hint holds the answer`);
    }
    if (mc.compute(s).clue_overlap! <= 0.4) lowClue.push(s.id);
  }
  // A quoted sentence with an abbreviation inside is cut in two by the metric's sentence split.
  assert.ok(
    lowClue.length <= 0.01 * hinted.length,
    `clue_overlap <= .40 in ${lowClue.length} of ${hinted.length} hinted: ${lowClue.slice(0, 5).join(', ')}`,
  );
});

test('a split scenario sends the problem statement, then the question asked; only gsm8k is split, under-specified or not', async () => {
  const pool = scenarios(await buildPool(2000));
  const items = await source();
  const split = pool.filter((s) => s.template_id.endsWith('+split'));
  assert.ok(split.length >= 150 && split.every((s) => s.task === 'gsm8k' && s.messages.length >= 2));
  assert.ok(split.filter((s) => s.needs_clarification).length >= 40, 'under-specified scenarios are split too');
  for (const s of split.filter((x) => !x.needs_clarification)) {
    const q = norm(items.get(`gsm8k/${s.source_id}`)!.question);
    const [setup, ask] = s.messages.map((m) => m.content);
    assert.ok(q.startsWith(setup!) && setup!.length < q.length, s.id);
    assert.ok(ask!.includes(q.slice(setup!.length).trim()), `${s.id}: the ask turn holds the rest of the question`);
  }
});

test('a gold scenario offers only its supporting paragraphs; half of the hotpotqa scenarios are gold, under-specified or not', async () => {
  const pool = scenarios(await buildPool(2000));
  const items = await source();
  const hotpot = pool.filter((s) => s.task === 'hotpotqa');
  const gold = hotpot.filter((s) => s.template_id.includes('+gold'));
  assert.ok(pool.every((s) => s.task === 'hotpotqa' || !s.template_id.includes('+gold')));
  assert.ok(Math.abs(gold.length / hotpot.length - 0.5) < 0.01, `${gold.length} of ${hotpot.length}`);
  const clarified = hotpot.filter((s) => s.needs_clarification);
  assert.ok(Math.abs(clarified.filter((s) => s.template_id.includes('+gold')).length / clarified.length - 0.5) < 0.02);
  for (const s of gold) {
    const item = items.get(`hotpotqa/${s.source_id}`) as HotpotqaItem;
    assert.ok(s.context.length > 0 && s.context.every((d) => d.supporting), s.id);
    assert.deepEqual(
      s.context.map((d) => d.title).sort(),
      [...new Set(item.supporting.map((f) => f.title))].sort(),
      s.id,
    );
  }
  for (const s of hotpot.filter((x) => !x.template_id.includes('+gold')))
    assert.equal(s.context.length, (items.get(`hotpotqa/${s.source_id}`) as HotpotqaItem).paragraphs.length, s.id);
});

test('no scenario exceeds the difficulty gate ceilings (tool hops, turns, Qwen3 len_tokens), and a lower tool-hop ceiling is honoured', async () => {
  const gate = difficulty.gate;
  const ceilings = config<{ ceilings: Record<string, number> }>('pool').ceilings;
  assert.ok(
    ceilings.tool_hops! <= gate.max_tool_hops &&
      ceilings.turns! <= gate.max_turns &&
      ceilings.len_tokens! <= gate.max_len_tokens,
    'pool.ceilings within difficulty.gate',
  );
  const mc = await metrics();
  let maxLen = 0;
  for (const s of scenarios(await buildPool(3000))) {
    const m = mc.compute(s);
    assert.ok(
      m.tool_hops <= gate.max_tool_hops && m.turns <= gate.max_turns && m.len_tokens <= gate.max_len_tokens,
      `${s.id}: ${JSON.stringify(m)}`,
    );
    maxLen = Math.max(maxLen, m.len_tokens);
  }
  assert.ok(maxLen > 2000, 'long HotpotQA contexts are still used');
  const low = scenarios(await buildPool(400, { ceilings: { ...ceilings, tool_hops: 3 } }));
  assert.ok(low.every((s) => s.reference.steps.filter((x) => x.type === 'tool_call').length <= 3));
  assert.ok(
    low.some((s) => s.task === 'gsm8k' && s.reference.steps.filter((x) => x.type === 'tool_call').length === 3),
  );
});

test("at n = 2000 the reasoning bucket says next to nothing about the need for clarification (Cramér's V ≤ .10 per task), every cell has scenarios, and balancing keeps the clarify rate", async () => {
  const mc = await metrics();
  const rows = scenarios(await buildPool(2000)).map((s) => ({
    task: s.task,
    clarify: s.needs_clarification,
    bucket: bucketOf(difficulty.bands, difficulty.dimensions, mc.compute(s)).bucket,
  }));
  for (const task of Object.keys(MIX)) {
    const v = association(rows.filter((r) => r.task === task)).cramers_v!;
    assert.ok(v <= difficulty.gate.max_association, `${task}: V = ${v}`);
  }
  const plan = planBalance(rows, difficulty.balance, createRng);
  for (const [task, p] of Object.entries(plan.tasks)) {
    for (const st of ['needs_clarification', 'no_clarification'] as const) {
      for (const b of ['easy', 'medium', 'hard'] as const)
        assert.ok(p.strata[st].available[b] > 0, `${task} ${st} ${b}`);
    }
    assert.ok(p.size > 0 && Math.abs(p.clarify_rate.kept! - 0.3) <= 0.01, `${task}: ${JSON.stringify(p.clarify_rate)}`);
  }
});

test('a held-out question cannot enter the pool through a repeat or a renumbered file: seed_pool holds items aside by content too', async () => {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { questionKey } = await import('../../lib/data/index.ts');
  const { readShadowSourceIds } = await import('../../lib/pool/index.ts');
  const shadow = await shadowOutputs();
  const held = await readShadowSourceIds(shadow);
  const gsmFile = RAW.find((f) => f.includes('/gsm8k/') && f.endsWith('.jsonl'))!;
  const lines = read(gsmFile).trimEnd().split('\n');
  const heldLine = lines.find((l) =>
    held.contentKeys.has(questionKey({ task: 'gsm8k', question: (JSON.parse(l) as { question: string }).question })),
  )!;
  // Line 1 dropped (every line id shifts by one), and a held-out question repeated at the end with new spacing.
  const repeat = JSON.parse(heldLine) as { question: string; answer: string };
  const dir = join(TMP, 'renumbered');
  mkdirSync(dir, { recursive: true });
  const renumbered = join(dir, 'gsm8k_renumbered.jsonl');
  writeFileSync(
    renumbered,
    [...lines.slice(1), JSON.stringify({ ...repeat, question: `${repeat.question}  ` })].join('\n') + '\n',
  );
  const raw = [renumbered, ...RAW.filter((f) => !f.includes('/gsm8k/'))];
  const r = await runRule('seed_pool', {
    params: { pool: config('pool'), templates: config('templates'), data: config('data') },
    inputs: { raw, v2: PACK_V2, shadow, gates: [] },
    outputs: { pool: 'data/rollouts/rc1_seed.jsonl' },
    args: { n: 1200 },
  });
  const items = new Map((await loadSources([renumbered], { onError: 'fail' })).items.map((i) => [i.source_id, i]));
  const pool = scenarios(r.path('data/rollouts/rc1_seed.jsonl')).filter((s) => s.task === 'gsm8k');
  assert.ok(pool.length === 300);
  const leaked = pool.filter((s) => held.contentKeys.has(questionKey(items.get(s.source_id)!)));
  assert.deepEqual(
    leaked.map((s) => s.source_id),
    [],
  );
  // Held aside by content (the 245 questions under their new ids) and, harmlessly, the 61 old gsm8k ids too.
  assert.match(String((r.result as { summary: string }).summary), /306 shadow items excluded/);
});

test('kindKey names each of the 16 kinds by its flags (clarify, then hint, gold, split; plain for none), asked in any order and again', () => {
  const kinds = Array.from({ length: 16 }, (_, m) => ({
    clarify: (m & 1) !== 0,
    hint: (m & 2) !== 0,
    gold: (m & 4) !== 0,
    split: (m & 8) !== 0,
  }));
  const expected = (k: (typeof kinds)[number]): string =>
    (['clarify', 'hint', 'gold', 'split'] as const).filter((f) => k[f]).join('+') || 'plain';
  for (const order of [[...kinds].reverse(), kinds]) for (const k of order) assert.equal(kindKey(k), expected(k));
});
