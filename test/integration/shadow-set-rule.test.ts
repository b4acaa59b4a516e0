// The shadow_set rule, run directly with a fake RuleContext (outputs in a temp dir, ctx.rng =
// createRng as the engine gives). The rule is compiled with esbuild the way the engine compiles
// rules: 'rc1-build' and 'rc1-build/<sub>' resolve to src/<sub>/index.ts, npm packages stay
// external at their absolute paths.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { importCompiled } from '../helpers/compile-rule.ts';
import fg from 'fast-glob';
import type { Rule } from '../../packages/engine/src/api/index.ts';
import { PACK_V2, shadowParams } from '../fixtures/pool/harness.ts';
import { runRuleUnderContract } from '../helpers/rule-context.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PARAMS = shadowParams() as { shadow: Record<string, unknown>; data: unknown };

let dir = '';
let rule: Rule;
let raw: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-shadow-'));
  rule = (await importCompiled<{ default: Rule }>('rules/shadow_set.ts')).default;
  raw = (await fg('data/raw/**/*', { cwd: ROOT, absolute: true })).sort();
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  out: string;
  logs: string[];
  result: unknown;
  jsonl: string;
  manifest: Record<string, unknown>;
}

async function runRule(name: string, params: unknown, inputs = raw, root = ROOT, table?: string): Promise<Run> {
  const out = join(dir, name);
  const r = await runRuleUnderContract(rule, {
    params,
    root,
    outDir: out,
    target: 'shadow_set',
    inputs: { v2: PACK_V2, raw: inputs, ...(table ? { table: [table] } : {}) },
    outputs: { scenarios: 'data/shadow_eval_245.jsonl', manifest: 'reports/rc1/sample_manifest.json' },
  });
  const jsonl = await readFile(join(out, 'data/shadow_eval_245.jsonl'), 'utf8');
  const manifest = JSON.parse(await readFile(join(out, 'reports/rc1/sample_manifest.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return { out, logs: r.logs, result: r.result, jsonl, manifest };
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
let shipped: Promise<Run> | null = null;
const shippedRun = (): Promise<Run> => (shipped ??= runRule('a', PARAMS));

test('shadow_set writes 245 scenarios stratified by task, clarification and band, and a manifest of the held-aside items and split counts', async () => {
  const { jsonl, manifest, result } = await shippedRun();
  assert.ok(jsonl.endsWith('\n') && !jsonl.includes('\r'));
  const lines = jsonl.trimEnd().split('\n');
  assert.equal(lines.length, 245);
  const scenarios = lines.map(
    (l) =>
      JSON.parse(l) as {
        id: string;
        task: string;
        source_id: string;
        tools: string[];
        difficulty: string;
        needs_clarification: boolean;
      },
  );
  const count = (f: (s: (typeof scenarios)[number]) => string) =>
    scenarios.reduce<Record<string, number>>((m, s) => {
      m[f(s)] = (m[f(s)] ?? 0) + 1;
      return m;
    }, {});
  assert.deepEqual(
    count((s) => s.task),
    { gsm8k: 61, hotpotqa: 110, strategyqa: 74 },
  );
  // Per task: round(0.3·quota) need clarification; each stratum's bands by largest remainder over .25 / .45 / .30.
  assert.deepEqual(
    count((s) => `${s.task}/${s.needs_clarification}`),
    {
      'gsm8k/true': 18,
      'gsm8k/false': 43,
      'hotpotqa/true': 33,
      'hotpotqa/false': 77,
      'strategyqa/true': 22,
      'strategyqa/false': 52,
    },
  );
  assert.deepEqual(
    count((s) => s.difficulty),
    { easy: 61, medium: 110, hard: 74 },
  );
  assert.deepEqual((manifest.cells as Record<string, unknown>).hotpotqa, {
    clarify: { easy: 8, medium: 15, hard: 10 },
    plain: { easy: 19, medium: 35, hard: 23 },
  });
  assert.ok(
    lines.every((l) => l === JSON.stringify(JSON.parse(l))),
    'each line is compact JSON',
  );
  assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), [
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
    'difficulty',
  ]);
  const splits = (manifest.splits as { counts: { split: string; n: number; status: string; reason?: string }[] })
    .counts;
  assert.deepEqual(
    splits.find((x) => x.split === 'band=hard'),
    { split: 'band=hard', n: 74, status: 'ok' },
  );
  assert.deepEqual(
    splits.find((x) => x.split === 'clarify=yes'),
    { split: 'clarify=yes', n: 73, status: 'ok' },
  );
  const small = splits.find((x) => x.split === 'task=gsm8k,band=easy')!;
  assert.deepEqual(
    [small.n, small.status, small.reason],
    [16, 'n/a', '16 scenarios, fewer than shadow.min_split_n = 20: too few to report a statistic'],
  );
  assert.equal((manifest.content_keys as string[]).length, 245);
  assert.deepEqual(manifest.counts, { gsm8k: 61, hotpotqa: 110, strategyqa: 74 });
  assert.equal(manifest.seed, 20250820);
  assert.equal(manifest.n, 245);
  assert.deepEqual(manifest.stratify, { gsm8k: 0.25, hotpotqa: 0.45, strategyqa: 0.3 });
  assert.equal(manifest.skipped, 0);
  assert.equal(manifest.duplicates_merged, 104);
  const ids = manifest.source_ids as string[];
  assert.equal(ids.length, 245);
  assert.deepEqual(ids, [...ids].sort());
  assert.deepEqual(new Set(ids), new Set(scenarios.map((s) => s.source_id)));
  const inputs = manifest.inputs as { path: string; sha256: string; records: number }[];
  assert.deepEqual(
    inputs.map((i) => [i.path, i.records]),
    [
      ['data/raw/gsm8k/gsm8k_train_full.jsonl', 7473],
      ['data/raw/hotpotqa/hotpot_dev_distractor_v1_first103.jsonl', 103],
      ['data/raw/hotpotqa/hotpot_dev_ircot_processed_500.jsonl', 500],
      ['data/raw/strategyqa/strategyqa_train_split.jsonl', 2061],
    ],
  );
  assert.equal(inputs[0]!.sha256, '17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465');
  assert.equal((manifest.output as { sha256: string }).sha256, sha256(jsonl));
  assert.deepEqual(result, {
    summary:
      '245 scenarios (gsm8k 61, hotpotqa 110, strategyqa 74; easy 61 / medium 110 / hard 74; 73 need clarification; 5 of 30 splits below 20; 104 duplicates merged)',
  });
});

test('shadow_set output is byte-identical for the same inputs and seed, whatever the input order', async () => {
  const a = await shippedRun();
  const b = await runRule('same-2', PARAMS, [...raw].reverse());
  assert.equal(sha256(a.jsonl), sha256(b.jsonl));
  const manifestA = await readFile(join(a.out, 'reports/rc1/sample_manifest.json'));
  const manifestB = await readFile(join(b.out, 'reports/rc1/sample_manifest.json'));
  assert.equal(sha256(manifestA), sha256(manifestB));
});

test('shadow_set counting with the tokenizer_table output writes the same bytes as with the tokenizer package', async () => {
  const tableRule = (await importCompiled<{ default: Rule }>('rules/tokenizer_table.ts')).default;
  const t = await runRuleUnderContract(tableRule, {
    params: {},
    root: ROOT,
    outDir: join(dir, 'table'),
    target: 'tokenizer_table',
    inputs: {},
    outputs: { table: 'data/tokenizer/qwen3_bpe.bin' },
  });
  assert.match(String((t.result as { summary?: string }).summary), /^151387 merges, 26 added tokens/);
  const a = await shippedRun();
  const b = await runRule('with-table', PARAMS, raw, ROOT, join(dir, 'table', 'data/tokenizer/qwen3_bpe.bin'));
  assert.equal(sha256(b.jsonl), sha256(a.jsonl));
  assert.equal(
    sha256(await readFile(join(b.out, 'reports/rc1/sample_manifest.json'))),
    sha256(await readFile(join(a.out, 'reports/rc1/sample_manifest.json'))),
  );
});

test('shadow_set with a different seed holds aside a different set', async () => {
  const a = await shippedRun();
  const b = await runRule('seed-b', { ...PARAMS, shadow: { ...PARAMS.shadow, seed: 7 } });
  const held = new Set(a.manifest.source_ids as string[]);
  const shared = (b.manifest.source_ids as string[]).filter((id) => held.has(id)).length;
  assert.ok(shared < 100, `seeds share ${shared} of 245 source ids`);
  assert.notEqual(sha256(a.jsonl), sha256(b.jsonl));
});

test('shadow_set with on_error skip counts malformed records in the manifest; with fail it stops with file, line and field', async () => {
  const root = join(dir, 'ws');
  await mkdir(join(root, 'data/raw/gsm8k'), { recursive: true });
  const inputs = raw.filter((f) => !f.includes('/gsm8k/'));
  const good = (await readFile(raw.find((f) => f.endsWith('.jsonl') && f.includes('/gsm8k/'))!, 'utf8'))
    .split('\n')
    .slice(0, 400);
  good.splice(9, 1, JSON.stringify({ question: 'No marker?', answer: 'It is 5.' }));
  const bad = join(root, 'data/raw/gsm8k/train.jsonl');
  await writeFile(bad, good.join('\n') + '\n');
  const skip = await runRule('skip', { ...PARAMS, data: { on_error: 'skip' } }, [bad, ...inputs], root);
  assert.equal(skip.manifest.skipped, 1);
  assert.deepEqual(skip.manifest.issues, [
    'data/raw/gsm8k/train.jsonl:10: answer: expected a final line "#### <number>", got "It is 5."',
  ]);
  assert.ok(skip.logs.some((l) => l.includes('train.jsonl:10: answer')));
  await assert.rejects(runRule('fail', PARAMS, [bad, ...inputs], root), {
    name: 'DataError',
    message: 'data/raw/gsm8k/train.jsonl:10: answer: expected a final line "#### <number>", got "It is 5."',
  });
});

test('shadow_set refuses params outside its schema', () => {
  assert.equal(rule.name, 'shadow_set');
  assert.equal(rule.version, 2);
  assert.equal(rule.params!.safeParse({ ...PARAMS, data: { on_error: 'ignore' } }).success, false);
  assert.equal(rule.params!.safeParse({ ...PARAMS, shadow: { ...PARAMS.shadow, extra: 1 } }).success, false);
  assert.equal(rule.params!.safeParse({ ...PARAMS, shadow: { ...PARAMS.shadow, n: 0 } }).success, false);
});

test('shadow_set fails naming the cell it cannot fill and the data to add, rather than ship a thinner split', async () => {
  const root = join(dir, 'few');
  await mkdir(join(root, 'data/raw/gsm8k'), { recursive: true });
  const few = join(root, 'data/raw/gsm8k/train.jsonl');
  const gsm = (await readFile(raw.find((f) => f.endsWith('.jsonl') && f.includes('/gsm8k/'))!, 'utf8')).split('\n');
  await writeFile(few, gsm.slice(0, 70).join('\n') + '\n');
  await assert.rejects(runRule('few', PARAMS, [few, ...raw.filter((f) => !f.includes('/gsm8k/'))], root), {
    name: 'RuleError',
    message:
      /^shadow set: gsm8k has \d+ of the \d+ \w+ scenarios (not )?needing clarification it needs, after trying all 70 gsm8k items: add gsm8k source questions \(e\.g\. a Hugging Face Parquet or JSONL export in data\/raw\/gsm8k\/\) or lower shadow\.n$/,
  });
  await writeFile(few, gsm.slice(0, 40).join('\n') + '\n');
  await assert.rejects(runRule('fewer', PARAMS, [few, ...raw.filter((f) => !f.includes('/gsm8k/'))], root), {
    name: 'RuleError',
    message:
      /^shadow set: task gsm8k needs 61 items but the sources have 40 \(shadow\.n = 245\)\n  hint: add gsm8k records to/,
  });
});
