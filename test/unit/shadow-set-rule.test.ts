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
import { createRng, type Rule, type RuleContext } from '../../src/api/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PARAMS = { shadow: { n: 245, seed: 20250820, stratify: { hotpotqa: 0.45, strategyqa: 0.3, gsm8k: 0.25 } }, data: { on_error: 'fail' } };

let dir = '';
let rule: Rule;
let raw: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-shadow-'));
  rule = (await importCompiled<{ default: Rule }>('rules/shadow_set.ts')).default;
  raw = (await fg('data/raw/**/*', { cwd: ROOT, absolute: true })).sort();
});
after(async () => { await rm(dir, { recursive: true, force: true }); });

interface Run { out: string; logs: string[]; result: unknown; jsonl: string; manifest: Record<string, unknown> }

async function runRule(name: string, params: unknown, inputs = raw, root = ROOT): Promise<Run> {
  const out = join(dir, name);
  const logs: string[] = [];
  const parsed = rule.params!.parse(params);
  const ctx: RuleContext<unknown> = { forced: false, codeHash: '0'.repeat(64), stateDir: '/nonexistent/rule-harness-state',
    target: 'shadow_set', root, profile: 'dev', params: parsed, env: {}, args: {}, outputs: ['data/shadow_eval_245.jsonl', 'reports/rc1/sample_manifest.json'],
    inputs: (group) => { assert.equal(group, 'raw'); return inputs; },
    output: (p) => join(out, p),
    rng: createRng,
    log: (m) => { logs.push(m); },
    progress: () => {},
    signal: new AbortController().signal,
  };
  const result = await rule.run(ctx);
  const jsonl = await readFile(join(out, 'data/shadow_eval_245.jsonl'), 'utf8');
  const manifest = JSON.parse(await readFile(join(out, 'reports/rc1/sample_manifest.json'), 'utf8')) as Record<string, unknown>;
  return { out, logs, result, jsonl, manifest };
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

test('shadow_set writes 245 stratified scenarios and a manifest of the held-aside source ids', async () => {
  const { jsonl, manifest, result } = await runRule('a', PARAMS);
  assert.ok(jsonl.endsWith('\n') && !jsonl.includes('\r'));
  const lines = jsonl.trimEnd().split('\n');
  assert.equal(lines.length, 245);
  const scenarios = lines.map((l) => JSON.parse(l) as { id: string; task: string; source_id: string; tools: string[] });
  const perTask = scenarios.reduce<Record<string, number>>((m, s) => ({ ...m, [s.task]: (m[s.task] ?? 0) + 1 }), {});
  assert.deepEqual(perTask, { gsm8k: 61, hotpotqa: 110, strategyqa: 74 });
  assert.ok(lines.every((l) => l === JSON.stringify(JSON.parse(l))), 'each line is compact JSON');
  assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), [
    'id', 'task', 'source_id', 'role', 'style', 'template_id', 'messages', 'context', 'tools',
    'gold_answer', 'needs_clarification', 'clarification', 'reference',
  ]);
  assert.deepEqual(manifest.counts, { gsm8k: 61, hotpotqa: 110, strategyqa: 74 });
  assert.equal(manifest.seed, 20250820);
  assert.equal(manifest.n, 245);
  assert.deepEqual(manifest.stratify, { gsm8k: 0.25, hotpotqa: 0.45, strategyqa: 0.3 });
  assert.equal(manifest.skipped, 0);
  assert.equal(manifest.duplicates_merged, 103);
  const ids = manifest.source_ids as string[];
  assert.equal(ids.length, 245);
  assert.deepEqual(ids, [...ids].sort());
  assert.deepEqual(new Set(ids), new Set(scenarios.map((s) => s.source_id)));
  const inputs = manifest.inputs as { path: string; sha256: string; records: number }[];
  assert.deepEqual(inputs.map((i) => [i.path, i.records]), [
    ['data/raw/gsm8k/gsm8k_train_first5000.jsonl', 5000],
    ['data/raw/hotpotqa/hotpot_dev_distractor_v1_first103.jsonl', 103],
    ['data/raw/hotpotqa/hotpot_dev_ircot_processed_500.jsonl', 500],
    ['data/raw/strategyqa/strategyqa_train_split.jsonl', 2061],
  ]);
  assert.equal(inputs[0]!.sha256, 'c8cb412d318410c6206676d3969968da03e25b851318711f624007c60e646ef2');
  assert.equal((manifest.output as { sha256: string }).sha256, sha256(jsonl));
  assert.deepEqual(result, { summary: '245 scenarios (gsm8k 61, hotpotqa 110, strategyqa 74; 0 skipped, 103 duplicates merged)' });
});

test('shadow_set output is byte-identical for the same inputs and seed, whatever the input order', async () => {
  const a = await runRule('same-1', PARAMS);
  const b = await runRule('same-2', PARAMS, [...raw].reverse());
  assert.equal(sha256(a.jsonl), sha256(b.jsonl));
  const manifestA = await readFile(join(a.out, 'reports/rc1/sample_manifest.json'));
  const manifestB = await readFile(join(b.out, 'reports/rc1/sample_manifest.json'));
  assert.equal(sha256(manifestA), sha256(manifestB));
});

test('shadow_set with a different seed holds aside a different set', async () => {
  const a = await runRule('seed-a', PARAMS);
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
  const good = (await readFile(raw.find((f) => f.endsWith('.jsonl') && f.includes('/gsm8k/'))!, 'utf8')).split('\n').slice(0, 80);
  good.splice(9, 1, JSON.stringify({ question: 'No marker?', answer: 'It is 5.' }));
  const bad = join(root, 'data/raw/gsm8k/train.jsonl');
  await writeFile(bad, good.join('\n') + '\n');
  const skip = await runRule('skip', { ...PARAMS, data: { on_error: 'skip' } }, [bad, ...inputs], root);
  assert.equal(skip.manifest.skipped, 1);
  assert.deepEqual(skip.manifest.issues, ['data/raw/gsm8k/train.jsonl:10: answer: expected a final line "#### <number>", got "It is 5."']);
  assert.ok(skip.logs.some((l) => l.includes('train.jsonl:10: answer')));
  await assert.rejects(runRule('fail', PARAMS, [bad, ...inputs], root), {
    name: 'DataError', message: 'data/raw/gsm8k/train.jsonl:10: answer: expected a final line "#### <number>", got "It is 5."',
  });
});

test('shadow_set refuses params outside its schema', () => {
  assert.equal(rule.name, 'shadow_set');
  assert.equal(rule.version, 1);
  assert.equal(rule.params!.safeParse({ ...PARAMS, data: { on_error: 'ignore' } }).success, false);
  assert.equal(rule.params!.safeParse({ ...PARAMS, shadow: { ...PARAMS.shadow, extra: 1 } }).success, false);
  assert.equal(rule.params!.safeParse({ ...PARAMS, shadow: { ...PARAMS.shadow, n: 0 } }).success, false);
});
