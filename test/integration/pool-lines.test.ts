// seed_pool writes its JSONL without building Scenario objects (lib/pool/pool-lines.ts): every
// line must be, byte for byte, JSON.stringify of the scenario object the pool library builds for
// the same position (every task, kind and variant occurs at n = 3000).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { loadSources, questionKey } from '../../lib/data/index.ts';
import { loadPack } from '../../lib/templates/index.ts';
import {
  PoolBuilder,
  PoolLines,
  poolConfig,
  poolScenario,
  readShadowSourceIds,
  type PoolParams,
} from '../../lib/pool/index.ts';
import { buildPool, config, PACK_V2, RAW, ROOT, shadowOutputs } from '../fixtures/pool/harness.ts';

const N = 3000;

async function builder(): Promise<PoolBuilder> {
  const loaded = await loadSources(
    RAW.filter((f) => /\.(jsonl|json|parquet)$/.test(f)),
    { onError: 'fail', root: ROOT },
  );
  const shadow = await readShadowSourceIds(await shadowOutputs());
  const excluded = new Set(shadow.ids);
  for (const item of loaded.items) if (shadow.contentKeys.has(questionKey(item))) excluded.add(item.source_id);
  return new PoolBuilder(
    loaded.items,
    excluded,
    await loadPack(PACK_V2, ROOT),
    poolConfig(config<PoolParams>('pool')),
    createRng,
  );
}

test('every line seed_pool writes is JSON.stringify of the scenario object of its position, for every task, kind and variant', async () => {
  const objects = [...(await builder()).scenarios(N)];
  const kinds = new Set(
    objects.map((s) => `${s.task}:${s.needs_clarification}:${s.template_id.replace(/^[^+]*/, '')}`),
  );
  assert.ok(kinds.size >= 12, `expected every task × clarification × variant to occur, got ${[...kinds].join(', ')}`);
  const expected = objects.map((s) => `${JSON.stringify(s)}\n`).join('');
  assert.equal(readFileSync(await buildPool(N), 'utf8'), expected);
});

test('PoolLines writes lines longer than its buffer, and many lines across buffer boundaries, unchanged', async () => {
  const b = await builder();
  const dir = mkdtempSync(join(tmpdir(), 'rc1-pool-lines-'));
  try {
    const file = join(dir, 'pool.jsonl');
    const lines = new PoolLines(file);
    const big = 'x'.repeat(1_500_000);
    let expected = '';
    let k = 0;
    for (const { item, render } of b.renderings(400)) {
      const r =
        k % 100 === 7 ? { ...render, messages: [{ role: 'user' as const, content: `${big}é\u2028${k}` }] } : render;
      lines.write(item, r);
      expected += `${JSON.stringify(poolScenario(item, r))}\n`;
      k++;
    }
    lines.close();
    const got = readFileSync(file, 'utf8');
    assert.ok(got.length > 6_000_000);
    assert.equal(got, expected);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the builder computes item measures on first use: rendering items before or after asking for the pool gives the same scenarios and stats', async () => {
  const lazy = await builder();
  const eager = await builder();
  const stats = JSON.stringify(eager.stats);
  const items = (
    await loadSources(
      RAW.filter((f) => /\.(jsonl|json|parquet)$/.test(f)),
      { onError: 'fail', root: ROOT },
    )
  ).items;
  const kinds = [
    { clarify: false, hint: false, gold: false, split: false },
    { clarify: true, hint: true, gold: true, split: false },
    { clarify: true, hint: false, gold: false, split: true },
  ];
  let rendered = 0;
  for (const [i, item] of items.entries()) {
    if (i % 37 !== 0) continue;
    for (const kind of kinds) {
      const a = lazy.renderItem(item, kind, `x-${i}`, createRng(i));
      const b = eager.renderItem(item, kind, `x-${i}`, createRng(i));
      assert.deepEqual(a, b);
      if (a) rendered += 1;
    }
  }
  assert.ok(rendered > 100, `only ${rendered} renderings`);
  assert.equal(JSON.stringify(lazy.stats), stats);
  assert.deepEqual([...lazy.scenarios(500)], [...eager.scenarios(500)]);
});
