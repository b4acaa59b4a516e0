// The held-aside shadow selection: quotas, determinism, independence from input order, and
// the errors it raises for impossible requests.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { before, test } from 'node:test';
import fg from 'fast-glob';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { deriveSeed, loadSources, selectShadow, stratifiedQuotas, type SourceItem } from '../../lib/data/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const MIX = { hotpotqa: 0.45, strategyqa: 0.3, gsm8k: 0.25 };
const SHADOW = { n: 245, seed: 20250820, stratify: MIX };
let items: SourceItem[] = [];

before(async () => {
  const files = (await fg('data/raw/**/*.jsonl', { cwd: ROOT, absolute: true })).sort();
  items = (await loadSources(files, { root: ROOT })).items;
});

const keys = (xs: readonly SourceItem[]) => xs.map((i) => `${i.task}/${i.source_id}`);

test('largest-remainder rounding gives 245 as hotpotqa 110, strategyqa 74, gsm8k 61', () => {
  assert.deepEqual(stratifiedQuotas(245, MIX), { gsm8k: 61, hotpotqa: 110, strategyqa: 74 });
});

test('quotas always add up to exactly n, and weights are normalised by their sum', () => {
  for (let n = 0; n <= 400; n++) {
    const q = stratifiedQuotas(n, MIX);
    assert.equal(q.gsm8k! + q.hotpotqa! + q.strategyqa!, n);
  }
  assert.deepEqual(stratifiedQuotas(10, { a: 45, b: 30, c: 25 }), { a: 5, b: 3, c: 2 });
  assert.deepEqual(stratifiedQuotas(3, { b: 1, a: 1, c: 1 }), { a: 1, b: 1, c: 1 });
  assert.deepEqual(stratifiedQuotas(1, { b: 1, a: 1 }), { a: 1, b: 0 }, 'equal remainders and weights: by task name');
  assert.deepEqual(stratifiedQuotas(1, { a: 1, b: 2, c: 1 }), { a: 0, b: 1, c: 0 });
});

test('invalid quotas are refused', () => {
  assert.throws(() => stratifiedQuotas(10, { a: -1, b: 2 }), /stratify\.a must be a non-negative number/);
  assert.throws(() => stratifiedQuotas(10, { a: 0 }), /must sum to more than 0/);
  assert.throws(() => stratifiedQuotas(2.5, { a: 1 }), /n must be a non-negative integer/);
});

test('the shadow set has exactly 245 items with the stratified counts, sorted and unique', () => {
  const sel = selectShadow(items, SHADOW);
  assert.equal(sel.items.length, 245);
  assert.deepEqual(sel.counts, { gsm8k: 61, hotpotqa: 110, strategyqa: 74 });
  assert.deepEqual(sel.available, { gsm8k: 7473, hotpotqa: 500, strategyqa: 2060 });
  const perTask = sel.items.reduce<Record<string, number>>((m, i) => {
    m[i.task] = (m[i.task] ?? 0) + 1;
    return m;
  }, {});
  assert.deepEqual(perTask, { gsm8k: 61, hotpotqa: 110, strategyqa: 74 });
  assert.equal(new Set(keys(sel.items)).size, 245);
  assert.deepEqual(keys(sel.items), [...keys(sel.items)].sort());
});

test('the selection is the same across runs and across any order of the input items', () => {
  const first = keys(selectShadow(items, SHADOW).items);
  assert.deepEqual(keys(selectShadow(items, SHADOW).items), first);
  for (const seed of [1, 2, 3]) {
    const shuffled = createRng(seed).shuffle(items);
    assert.deepEqual(keys(selectShadow(shuffled, SHADOW).items), first);
  }
  assert.deepEqual(keys(selectShadow([...items].reverse(), SHADOW).items), first);
});

test('a different seed gives a different set', () => {
  const a = new Set(keys(selectShadow(items, SHADOW).items));
  const b = keys(selectShadow(items, { ...SHADOW, seed: 20250821 }).items);
  const shared = b.filter((k) => a.has(k)).length;
  assert.ok(shared < 245 / 2, `seeds 20250820 and 20250821 share ${shared} of 245 items`);
});

test("one task's sample does not change when another task's pool changes", () => {
  const full = selectShadow(items, SHADOW).items.filter((i) => i.task === 'hotpotqa');
  const fewerGsm8k = items.filter((i) => i.task !== 'gsm8k' || Number(i.source_id.split('-').at(-1)) <= 4000);
  const again = selectShadow(fewerGsm8k, SHADOW).items.filter((i) => i.task === 'hotpotqa');
  assert.deepEqual(keys(again), keys(full));
});

test('selection uses the rng it is given, seeded per task from the seed', () => {
  const seen: number[] = [];
  const sel = selectShadow(items, {
    ...SHADOW,
    rng: (s) => {
      seen.push(s);
      return createRng(s);
    },
  });
  assert.deepEqual(
    seen,
    ['gsm8k', 'hotpotqa', 'strategyqa'].map((t) => deriveSeed(20250820, t)),
  );
  assert.deepEqual(keys(sel.items), keys(selectShadow(items, SHADOW).items));
});

test('impossible selections are refused with a clear message', () => {
  assert.throws(
    () =>
      selectShadow(
        items.filter((i) => i.task !== 'hotpotqa' || i.format === 'hotpotqa-distractor'),
        SHADOW,
      ),
    /task hotpotqa needs 110 items but the sources have 103/,
  );
  assert.throws(() => selectShadow(items, { ...SHADOW, stratify: { ...MIX, mmlu: 0.1 } }), /unknown task "mmlu"/);
  assert.throws(() => selectShadow([...items, items[0]!], SHADOW), /source item gsm8k\/gsm8k-train-1 occurs twice/);
});

test('deriveSeed is FNV-1a over the code points of `seed:label`: astral characters one step, lone surrogates one each', () => {
  // The definition, written as plainly as it reads.
  const fnv = (seed: number, label: string): number => {
    let h = 0x811c9dc5;
    for (const ch of `${seed}:${label}`) {
      h ^= ch.codePointAt(0)!;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h >>> 0;
  };
  const rng = createRng(99);
  const pieces = ['a', 'scenario:', '7', '😀', '中', '\ud800', '\udc00', '\u00e9', ':', ''];
  for (let i = 0; i < 500; i++) {
    let label = '';
    for (let k = rng.int(12); k > 0; k--) label += pieces[rng.int(pieces.length)];
    const seed = rng.int(2) ? rng.int(1e9) : -rng.int(1000);
    assert.equal(deriveSeed(seed, label), fnv(seed, label), JSON.stringify([seed, label]));
  }
  assert.equal(deriveSeed(20250820, 'gsm8k'), fnv(20250820, 'gsm8k'));
});
