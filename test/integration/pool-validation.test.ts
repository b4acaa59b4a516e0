// pool_validation: the shipped pool passes; planted faults fail the check they should, each with
// its hint (a shadow item copied into the pool, 5 % duplicates, the mix shifted by 5 pp, a
// scenario below the length floor, a source question rendered too often). The leak index: split
// renderings and light edits of a held-out question are caught; its flag rate on questions that
// are not held out is measured on the shipped data.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Check, RuleResult } from '../../packages/engine/src/api/index.ts';
import type { Scenario } from '../../lib/data/index.ts';
import { loadSources, questionKey, scenarioContext, sourceKey, type SourceItem } from '../../lib/data/index.ts';
import { LeakIndex, leakTokens, readShadowSourceIds, splitText } from '../../lib/pool/index.ts';
import { buildPool, config, PACK_V1, RAW, ROOT, runRule, shadowOutputs, TMP } from '../fixtures/pool/harness.ts';
import { importCompiled } from '../helpers/compile-rule.ts';

const lines = (p: string): string[] => readFileSync(p, 'utf8').trimEnd().split('\n');
let planted = 0;
function plant(rows: string[]): string {
  const p = join(TMP, `planted-${++planted}.jsonl`);
  writeFileSync(p, `${rows.join('\n')}\n`);
  return p;
}

const metricsOf = new Map<string, Promise<string>>();
/** The difficulty metrics of a pool file (the length gate reads their len_tokens). */
function metrics(poolPath: string): Promise<string> {
  let m = metricsOf.get(poolPath);
  if (!m) {
    m = runRule('difficulty_metrics', {
      params: { difficulty: { metrics: { multi_entity_min: 3, workers: 1 } } },
      inputs: { pool: [poolPath] },
      outputs: { metrics: 'metrics.jsonl' },
    }).then((r) => r.path('metrics.jsonl'));
    metricsOf.set(poolPath, m);
  }
  return m;
}

async function validate(
  poolPath: string,
  pool = config('pool'),
  metricsFrom = poolPath,
  validation = config('validation'),
): Promise<{ checks: Map<string, Check>; report: Record<string, any> }> {
  const r = await runRule('pool_validation', {
    params: { validation, pool },
    inputs: {
      pool: [poolPath],
      metrics: [await metrics(metricsFrom)],
      shadow: await shadowOutputs(),
      v1: PACK_V1,
      raw: RAW,
    },
    outputs: ['reports/rc1/pool_validation.json'],
  });
  const res = r.result as RuleResult;
  return { checks: new Map(res.checks!.map((c) => [c.name, c])), report: res.report! };
}
const failing = (checks: Map<string, Check>): string[] =>
  [...checks.values()]
    .filter((c) => !c.pass)
    .map((c) => c.name)
    .sort();

test('the shipped seed pool passes every pool_validation check, with definitions in the report', async () => {
  const { checks, report } = await validate(await buildPool(1000));
  assert.deepEqual(failing(checks), []);
  assert.deepEqual(
    [...checks.keys()],
    [
      'distinct_2',
      'kl3_vs_v1',
      'roles',
      'styles',
      'duplicate_rate',
      'length_min',
      'length_max',
      'shadow_leaks',
      'reuse_gsm8k_max_renderings_per_source',
      'reuse_gsm8k_distinct_source_share',
      'reuse_hotpotqa_max_renderings_per_source',
      'reuse_hotpotqa_distinct_source_share',
      'reuse_strategyqa_max_renderings_per_source',
      'reuse_strategyqa_distinct_source_share',
      'mix_max_deviation_pp',
      'mix_gsm8k_deviation_pp',
      'mix_hotpotqa_deviation_pp',
      'mix_strategyqa_deviation_pp',
    ],
  );
  assert.equal(report.leaks.count, 0);
  assert.equal(report.leaks.flag_rate_other_sources, 0);
  const best = report.leaks.best_similarity_other_sources;
  console.log(
    `best leak similarity over ${best.scenarios} scenarios of other sources: p50 ${best.p50}, p99 ${best.p99}, max ${best.max}, margin ${best.margin} to ${report.leaks.threshold}`,
  );
  assert.ok(
    best.scenarios > 0 && best.p50 <= best.p99 && best.p99 <= best.max && best.max <= report.leaks.threshold,
    'the distribution is ordered and below the threshold',
  );
  assert.equal(best.margin, Number((report.leaks.threshold - best.max).toFixed(4)));
  assert.ok(!checks.has('best_similarity_other_sources'), 'reported, not gated');
  assert.ok(
    [...checks.values()].every((c) => typeof c.hint === 'string' && c.hint.length > 0),
    'every check has a hint',
  );
  assert.equal(report.sample.scenarios, 960);
  assert.equal(report.clarify.rate, 0.3);
  assert.ok(report.stats.kl.value > 10 * report.stats.kl.noise_floor, 'the KL is far above what re-sampling v1 gives');
  for (const k of [
    'distinct_n',
    'kl',
    'zipf_slope',
    'length',
    'leak',
    'duplicates',
    'mix',
    'reuse',
    'best_similarity_other_sources',
  ])
    assert.ok(report.definitions[k], k);
});

test('a shadow item copied into the pool fails the leak check, with the hint in the check', async () => {
  const pool = lines(await buildPool(1000));
  const shadow = lines((await shadowOutputs())[0]!).map((l) => JSON.parse(l) as Scenario);
  const victim = JSON.parse(pool[10]!) as Scenario;
  const copy = shadow.find((s) => s.task === victim.task)!;
  pool[10] = JSON.stringify({ ...copy, id: victim.id });
  const wrapped = JSON.parse(pool[20]!) as Scenario;
  const other = shadow.find((s) => s.task === wrapped.task && s.id !== copy.id)!;
  pool[20] = JSON.stringify({
    ...wrapped,
    messages: [{ role: 'user', content: `I'm a student. ${other.messages[0]!.content} Please explain.` }],
  });
  const { checks, report } = await validate(plant(pool), config('pool'), await buildPool(1000));
  const leak = checks.get('shadow_leaks')!;
  assert.equal(leak.pass, false);
  assert.equal(leak.value, 2);
  assert.match(leak.hint!, /held-out \(shadow\) question/);
  // A copied shadow scenario may be an under-specified rendering (a detail left out): containment just under 1.
  assert.deepEqual(
    report.leaks.examples.map((e: { id: string; shadowId: string; similarity: number }) => [
      e.id,
      e.shadowId,
      e.similarity > 0.85,
    ]),
    [
      [victim.id, `${copy.task}/${copy.source_id}`, true],
      [wrapped.id, `${other.task}/${other.source_id}`, true],
    ],
  );
  assert.equal(
    report.leaks.of_held_out_sources,
    1,
    "the copy keeps the shadow item's source id; the wrapped one its own",
  );
});

test('a pool with 5 % duplicates fails the duplicate check, 1 % passes', async () => {
  const pool = lines(await buildPool(1000));
  const dup = (count: number): string[] =>
    pool.map((line, i) => {
      if (i < 500 || i >= 500 + count) return line;
      const s = JSON.parse(line) as Scenario;
      return JSON.stringify({ ...s, messages: (JSON.parse(pool[i - 500]!) as Scenario).messages });
    });
  const base = await buildPool(1000);
  const five = await validate(plant(dup(50)), config('pool'), base);
  assert.deepEqual([five.checks.get('duplicate_rate')!.value, five.checks.get('duplicate_rate')!.pass], [0.05, false]);
  assert.match(five.checks.get('duplicate_rate')!.hint!, /combinations/);
  const one = await validate(plant(dup(10)), config('pool'), base);
  assert.deepEqual([one.checks.get('duplicate_rate')!.value, one.checks.get('duplicate_rate')!.pass], [0.01, true]);
});

test('a pool whose mix is shifted by 5 pp fails the overall and per-task mix checks', async () => {
  const pool = config('pool');
  const shifted = await buildPool(1000, { mix: { hotpotqa: 0.5, strategyqa: 0.25, gsm8k: 0.25 } });
  const { checks } = await validate(shifted, { ...pool, mix: { hotpotqa: 0.5, strategyqa: 0.25, gsm8k: 0.25 } });
  assert.deepEqual(failing(checks), [
    'mix_hotpotqa_deviation_pp',
    'mix_max_deviation_pp',
    'mix_strategyqa_deviation_pp',
  ]);
  assert.equal(checks.get('mix_hotpotqa_deviation_pp')!.value, 5);
  assert.match(checks.get('mix_max_deviation_pp')!.hint!, /validation\.mix_target/);
});

test("the mix is checked against RC1's target, not the generator's pool.mix: a pool generated at .9/.05/.05 fails", async () => {
  const mix = { hotpotqa: 0.9, strategyqa: 0.05, gsm8k: 0.05 };
  const { checks, report } = await validate(await buildPool(400, { mix }), { ...config('pool'), mix });
  assert.deepEqual(failing(checks), [
    'mix_gsm8k_deviation_pp',
    'mix_hotpotqa_deviation_pp',
    'mix_max_deviation_pp',
    'mix_strategyqa_deviation_pp',
  ]);
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
  assert.equal(checks.get('length_min')!.value, 8, 'Qwen3 tokens of "What is 2 + 2?"');
  assert.deepEqual(report.length.examples, [{ id: s.id, length: 8 }]);
});

test("leak similarity is the share of a held-out question's content n-grams found in the scenario's turns, through the index", () => {
  const q = 'Ann bought 12 red apples at the market. She gave 5 apples to Tom. How many red apples does Ann have left?';
  const index = new LeakIndex(
    [
      { id: 's1', question: q, context: [] },
      { id: 's2', question: 'Is Paris north of Rome?', context: [] },
    ],
    5,
  );
  assert.deepEqual(leakTokens('The 1,200.00 dollars and five of THESE apples!'), ['1200', 'dollars', '5', 'apples']);
  assert.deepEqual(
    leakTokens('one day: twenty-five pears, two hundred and five plums, 5% or 5 per cent or 5 percent'),
    leakTokens('1 day: 25 pears, 205 plums, 5 percent or 5 percent or 5 %'),
  );
  assert.deepEqual(
    leakTokens('one thousand two hundred and twenty five, ten five, a sixteen-inch tree, decided five-four'),
    ['1225', '10', '5', '16-inch', 'tree', 'decided', '5-4'],
  );
  assert.deepEqual(index.best([`Quick one for my class: ${q} Thanks!`]), { shadowId: 's1', similarity: 1, by: 'text' });
  assert.deepEqual(index.best(['Is Paris north of Rome, do you think?']), {
    shadowId: 's2',
    similarity: 1,
    by: 'text',
  });
  assert.ok((index.best(['Ann bought 12 green pears at the market.'])?.similarity ?? 0) < 0.5);
});

// Light edits and split renderings of real held-out questions: every one must be caught.
const shadowItems = (async () => {
  const ids = await readShadowSourceIds(await shadowOutputs());
  const all = (
    await loadSources(
      RAW.filter((f) => f.endsWith('.jsonl')),
      { onError: 'fail' },
    )
  ).items;
  return { all, held: all.filter((i) => ids.contentKeys.has(questionKey(i))) };
})();
const indexOf = (held: SourceItem[]) =>
  new LeakIndex(
    held.map((i) => ({ id: sourceKey(i), question: i.question, context: scenarioContext(i) })),
    5,
  );
const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
/** 0..9999 in words ("two thousand three hundred and forty-five"). */
const inWords = (n: number): string =>
  n < 20
    ? ONES[n]!
    : n < 100
      ? TENS[Math.floor(n / 10)]! + (n % 10 ? `-${ONES[n % 10]}` : '')
      : n < 1000
        ? `${ONES[Math.floor(n / 100)]} hundred${n % 100 ? ` and ${inWords(n % 100)}` : ''}`
        : `${inWords(Math.floor(n / 1000))} thousand${n % 1000 ? ` ${inWords(n % 1000)}` : ''}`;
const EDITS: [string, (q: string) => string[]][] = [
  [
    'split rendering: the statement in one turn, wrapping, then the question asked',
    (q) => {
      const parts = splitText(q);
      return parts
        ? [
            parts.setup,
            `I'm a parent helping with homework. Here's what the worksheet asks: ${parts.ask} Please show each step.`,
          ]
        : [q];
    },
  ],
  [
    'function-word swap (the → this, a → one, of → for)',
    (q) => [
      q
        .replace(/\bthe\b/g, 'this')
        .replace(/\ba\b/g, 'one')
        .replace(/\bof\b/g, 'for'),
    ],
  ],
  [
    'punctuation dropped or changed and case changed',
    (q) => [
      q
        .replace(/[?;"()]/g, '')
        .replace(/([.,]) /g, ' ')
        .replace(/'/g, ' ')
        .toUpperCase() + '!!',
    ],
  ],
  [
    'numbers in words (one → 1 both ways, hyphenated compounds such as twenty-five, hundreds and thousands)',
    (q) => [
      q
        .replace(/\bone\b/gi, '1')
        .replace(/(?<![\d.,:])\b([1-9]\d{0,3})\b(?![.,:]\d)/g, (m) => (m === '1' ? m : inWords(Number(m)))),
    ],
  ],
  [
    'percent sign written out (% → percent, per cent)',
    (q) => [q.replace(/%|\bper ?cent\b/gi, (m) => (m === '%' ? ' per cent' : '%'))],
  ],
  [
    'number formatting (thousands commas, decimals, number words)',
    (q) => [
      q
        .replace(/\b(\d)(\d{3})\b/g, '$1,$2')
        .replace(/(?<![\d.,])\b(\d+)\b(?![.,]\d)/g, (m) => (Number(m) === 3 ? 'three' : `${m}.00`)),
    ],
  ],
];

for (const [name, edit] of EDITS) {
  test(`a ${name} of every held-out question is caught as a leak`, async () => {
    const { held } = await shadowItems;
    const index = indexOf(held);
    if (name.startsWith('split'))
      assert.ok(held.filter((i) => splitText(i.question)).length >= 60, 'the gsm8k questions split');
    const missed = held.filter((i) => {
      const m = index.best(edit(i.question));
      return !(m && m.similarity > 0.85 && m.shadowId === sourceKey(i));
    });
    assert.deepEqual(
      missed.map((i) => i.question),
      [],
      `${missed.length} of ${held.length} missed`,
    );
  });
}

test("pool_validation's scan on two threads gives every scenario, scanned the same and in pool order, as one thread does; and the same first error", async () => {
  const { held } = await shadowItems;
  const heldOut = held.map((i) => ({ id: sourceKey(i), question: i.question, context: scenarioContext(i) }));
  const ngram = (config('validation') as { leak: { ngram: number } }).leak.ngram;
  const mod = await importCompiled<{
    scanPool(
      o: { pool: string; heldOut: unknown[]; ngram: number; leakIndex: LeakIndex; bytesPerThread?: number },
      each: (s: unknown) => void,
    ): Promise<number>;
  }>(join(ROOT, 'rules', 'pool_validation.ts'));
  const pool = lines(await buildPool(1000));
  const shadow = lines((await shadowOutputs())[0]!).map((l) => JSON.parse(l) as Scenario);
  // A held-out question in each half (leaks), blank and whitespace-only lines, CRLF endings.
  for (const at of [10, 900]) {
    const victim = JSON.parse(pool[at]!) as Scenario;
    pool[at] = JSON.stringify({ ...shadow.find((s) => s.task === victim.task)!, id: victim.id });
  }
  const file = join(TMP, 'scan.jsonl');
  writeFileSync(file, [...pool.slice(0, 500), '', ' \t', ...pool.slice(500)].join('\r\n'));
  const scan = async (bytesPerThread: number, path = file): Promise<unknown[]> => {
    const out: unknown[] = [];
    const leakIndex = new LeakIndex(heldOut, ngram);
    const threads = await mod.scanPool({ pool: path, heldOut, ngram, leakIndex, bytesPerThread }, (s) => out.push(s));
    assert.equal(threads, bytesPerThread === 1 ? 2 : 1);
    return out;
  };
  const one = await scan(Number.MAX_SAFE_INTEGER);
  const two = await scan(1);
  assert.equal(one.length, 1000);
  assert.deepEqual(two, one);
  assert.equal(
    (one as { leak: unknown }[]).filter(
      (s) => s.leak !== null && (s as { leak: { similarity: number } }).leak.similarity > 0.85,
    ).length,
    2,
  );
  // A line that is not JSON in the second half: both throw the JSON error, after the same scenarios.
  const broken = [...pool];
  broken[700] = '{"id": ';
  writeFileSync(file, broken.join('\n'));
  const seen = async (bytesPerThread: number): Promise<[number, string]> => {
    const out: unknown[] = [];
    const leakIndex = new LeakIndex(heldOut, ngram);
    const err = await mod
      .scanPool({ pool: file, heldOut, ngram, leakIndex, bytesPerThread }, (s) => out.push(s))
      .then(
        () => new Error('no error'),
        (e: Error) => e,
      );
    return [out.length, `${err.name}: ${err.message}`];
  };
  const [n1, e1] = await seen(Number.MAX_SAFE_INTEGER);
  assert.equal(n1, 700);
  assert.match(e1, /^SyntaxError: /);
  assert.deepEqual(await seen(1), [n1, e1]);
  // A line that is JSON but whose context is malformed, in the worker's half: the scan does not
  // throw; the scenario carries the error (each() decides when to throw it), as the same class with
  // the stack of the frame that failed, on one thread and on two.
  const malformed = [...pool];
  malformed[700] = JSON.stringify({ ...(JSON.parse(pool[700]!) as Scenario), context: [null] });
  writeFileSync(file, malformed.join('\n'));
  for (const bytesPerThread of [Number.MAX_SAFE_INTEGER, 1]) {
    const failures: unknown[] = [];
    const leakIndex = new LeakIndex(heldOut, ngram);
    await mod.scanPool({ pool: file, heldOut, ngram, leakIndex, bytesPerThread }, (s) => {
      const f = (s as { failure?: unknown }).failure;
      if (f !== undefined) failures.push(f);
    });
    assert.equal(failures.length, 1, `threads for ${bytesPerThread} bytes`);
    assert.ok(failures[0] instanceof TypeError, String(failures[0]));
    assert.match((failures[0] as Error).stack ?? '', /leak-index\.ts:\d+/);
  }
});

test('a scenario with no metrics line is reported as such, also when its line is malformed in a way the leak check trips on', async () => {
  const poolPath = await buildPool(1000);
  const first = JSON.parse(lines(poolPath)[0]!) as Scenario;
  const file = join(TMP, 'no-metrics.jsonl');
  writeFileSync(
    file,
    `${readFileSync(poolPath, 'utf8')}${JSON.stringify({ ...first, id: 'zz-no-metrics', context: [null] })}\n`,
  );
  await assert.rejects(
    validate(file, config('pool'), poolPath),
    /scenario zz-no-metrics has no line in .*rebuild the difficulty metrics/,
  );
});

test("the leak check's flag rate on questions that are not held out is measured: at most 0.1 % of the 9 788 other shipped questions", async () => {
  const { all, held } = await shadowItems;
  const index = indexOf(held);
  const keys = new Set(held.map((i) => questionKey(i)));
  const others = all.filter((i) => !keys.has(questionKey(i)));
  const flagged = others.filter((i) => (index.best([i.question], scenarioContext(i))?.similarity ?? 0) > 0.85);
  const rate = flagged.length / others.length;
  console.log(
    `leak check: ${flagged.length} of ${others.length} non-held-out questions flagged (${(100 * rate).toFixed(3)} %)${
      flagged.length
        ? `: ${flagged
            .slice(0, 3)
            .map((i) => i.question)
            .join(' | ')}`
        : ''
    }`,
  );
  assert.equal(others.length, all.length - held.length);
  assert.ok(rate <= 0.001, `flag rate ${rate}`);
});

test('a task whose source questions are rendered more than 8 times fails the reuse checks, with how many more questions it needs', async () => {
  const { checks, report } = await validate(await buildPool(1000), config('pool'), await buildPool(1000), {
    ...config('validation'),
    reuse: { max_renderings_per_source: 1, min_distinct_source_share: 0.95 },
  });
  const max = checks.get('reuse_hotpotqa_max_renderings_per_source')!;
  assert.equal(max.pass, false);
  const need = report.reuse.hotpotqa.more_sources_needed;
  assert.ok(need > 0);
  assert.equal(
    max.hint,
    `hotpotqa needs at least ${need} more distinct source questions at this pool size: add them as a Hugging Face Parquet or JSONL export (e.g. the dataset's train split) in data/raw/hotpotqa/ (see data/raw/hotpotqa/SOURCE.md), or build a smaller pool`,
  );
  assert.equal(checks.get('reuse_hotpotqa_distinct_source_share')!.pass, false);
});

test('through the CLI: seed_pool then pool_validation pass, and a pool with a planted shadow item fails with exit 2 and the hint', async () => {
  const { TestRig, REPO } = await import('../helpers/rig.ts');
  const { cpSync } = await import('node:fs');
  const raw = "['data/raw/gsm8k/*.jsonl', 'data/raw/hotpotqa/*.jsonl', 'data/raw/strategyqa/*.jsonl']";
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
const gate = (name: string, pool: any) => defineGate({ name, rule: 'rules/pool_validation.ts',
  inputs: { pool, metrics: target('difficulty_metrics'), shadow: target('shadow_set', 'manifest'), v1: 'templates/pack_v1/*.json', raw: ${raw} },
  outputs: ['reports/' + name + '.json'], report: 'reports/' + name + '.json', params: ['validation', 'pool'] });
export default definePipeline({ profiles: ['dev', 'prod'], defaultProfile: 'dev', defaultTargets: ['pool_validation'], freeFormConfig: ['scale', 'diversity', 'difficulty.gate'], targets: [
  defineTarget({ name: 'shadow_set', rule: 'rules/shadow_set.ts', inputs: { raw: ${raw}, v2: 'templates/pack_v2/*.json' },
    outputs: { scenarios: 'data/shadow_eval_245.jsonl', manifest: 'reports/rc1/sample_manifest.json' },
    params: ['shadow', 'data', 'pool', 'templates', 'difficulty.bands', 'difficulty.dimensions', 'difficulty.balance', 'difficulty.metrics'] }),
  defineTarget({ name: 'seed_pool', rule: 'rules/seed_pool.ts',
    inputs: { raw: ${raw}, v2: 'templates/pack_v2/*.json', shadow: target('shadow_set', 'manifest'), gates: [] },
    outputs: { pool: 'data/rollouts/rc1_seed.jsonl' }, params: ['pool', 'templates', 'data'], args: { n: 300 } }),
  defineTarget({ name: 'difficulty_metrics', rule: 'rules/difficulty_metrics.ts', inputs: { pool: target('seed_pool') },
    outputs: { metrics: 'data/rollouts/rc1_seed.metrics.jsonl' }, params: ['difficulty.metrics'] }),
  gate('pool_validation', target('seed_pool')),
  gate('planted_validation', 'planted/pool.jsonl'),
] });
`,
  });
  try {
    for (const p of [
      'lib',
      'rules/shadow_set.ts',
      'rules/seed_pool.ts',
      'rules/pool_validation.ts',
      'rules/difficulty_metrics.ts',
      'templates',
      'data/raw',
      'configs/default.yaml',
      'configs/pool.yaml',
      'configs/difficulty.yaml',
    ]) {
      cpSync(join(REPO, p), join(rig.dir, p), { recursive: true });
    }
    const ok = rig.run(['pool_validation']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    // 89 under-specified = ⌊.3·75⌋ + ⌊.3·135⌋ + ⌊.3·90⌋ = 22 + 40 + 27 (exact per task prefix)
    assert.match(
      ok.stdout,
      /seed_pool .*300 scenarios \(gsm8k 75, hotpotqa 135, strategyqa 90; 89 under-specified; 245 shadow items excluded\)/,
    );
    assert.match(ok.stdout, /gate\s+pool_validation ok: 18 passed ·/);
    const pool = rig.read('data/rollouts/rc1_seed.jsonl').trimEnd().split('\n');
    const shadow = JSON.parse(rig.read('data/shadow_eval_245.jsonl').split('\n')[0]!) as Scenario;
    const i = pool.findIndex((l) => (JSON.parse(l) as Scenario).task === shadow.task);
    pool[i] = JSON.stringify({ ...shadow, id: (JSON.parse(pool[i]!) as Scenario).id });
    rig.write('planted/pool.jsonl', `${pool.join('\n')}\n`);
    const bad = rig.run(['planted_validation']);
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(
      bad.stdout,
      /shadow_leaks\s+1\s+<=\s+0\s+FAIL\n\s+hint: a pool item repeats a held-out \(shadow\) question/,
    );
  } finally {
    rig.cleanup();
  }
});
