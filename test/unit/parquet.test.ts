// Parquet reading of Hugging Face exports. The fixtures are generated here with hyparquet-writer
// (a dev dependency) in the layouts Hugging Face publishes: gsm8k (question, answer), hotpot_qa
// (nested structs of lists) and StrategyQA variants (lists and a boolean answer).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { parquetWriteFile, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { DataError, loadSources, readGsm8k, readHotpotqa, readParquet, type SourceItem } from '../../lib/data/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const RAW = join(ROOT, 'data/raw');

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-parquet-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const str = (name: string): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: 'OPTIONAL',
});
const list = (name: string, element: SchemaElement[]): SchemaElement[] => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...element,
];
const struct = (name: string, children: SchemaElement[][]): SchemaElement[] => [
  { name, repetition_type: 'OPTIONAL', num_children: children.length },
  ...children.flat(),
];

function writeParquet(path: string, rows: Record<string, unknown>[], columns: SchemaElement[][]): void {
  const names = columns.map((c) => c[0]!.name);
  const columnData: ColumnSource[] = names.map((name) => ({ name, data: rows.map((r) => r[name]) }));
  parquetWriteFile({
    filename: path,
    columnData,
    schema: [{ name: 'schema', num_children: names.length }, ...columns.flat()],
  });
}

async function firstLines(file: string, n: number): Promise<Record<string, unknown>[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .slice(0, n)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const content = ({ format: _f, origin: _o, ...rest }: SourceItem) => rest;

const HOTPOT_HF: SchemaElement[][] = [
  [str('id')],
  [str('question')],
  [str('answer')],
  [str('type')],
  [str('level')],
  struct('supporting_facts', [
    list('title', [str('element')]),
    list('sent_id', [{ name: 'element', type: 'INT32', repetition_type: 'OPTIONAL' }]),
  ]),
  struct('context', [list('title', [str('element')]), list('sentences', list('element', [str('element')]))]),
];

function hotpotHfRow(r: Record<string, unknown>): Record<string, unknown> {
  const facts = r.supporting_facts as [string, number][];
  const context = r.context as [string, string[]][];
  return {
    id: r._id,
    question: r.question,
    answer: r.answer,
    type: r.type,
    level: r.level,
    supporting_facts: { title: facts.map((f) => f[0]), sent_id: facts.map((f) => f[1]) },
    context: { title: context.map((c) => c[0]), sentences: context.map((c) => c[1]) },
  };
}

test('a Hugging Face gsm8k Parquet export gives the same items and ids as the original JSONL', async () => {
  const jsonl = join(RAW, 'gsm8k/gsm8k_train_full.jsonl');
  const path = join(dir, 'train-00000-of-00001.parquet');
  writeParquet(path, await firstLines(jsonl, 4), [[str('question')], [str('answer')]]);
  const fromParquet = await readGsm8k(path, { root: dir });
  const fromJsonl = (await readGsm8k(jsonl)).items.slice(0, 4);
  assert.deepEqual(fromParquet.items.map(content), fromJsonl.map(content));
  assert.deepEqual(fromParquet.items[3]!.origin, { file: 'train-00000-of-00001.parquet', line: 4, unit: 'row' });
});

test('a Hugging Face hotpot_qa Parquet export with nested struct columns parses like the official records', async () => {
  const jsonl = join(RAW, 'hotpotqa/hotpot_dev_distractor_v1_first103.jsonl');
  const path = join(dir, 'hotpot_validation.parquet');
  writeParquet(path, (await firstLines(jsonl, 3)).map(hotpotHfRow), HOTPOT_HF);
  const fromParquet = await readHotpotqa(path);
  const fromJsonl = (await readHotpotqa(jsonl)).items.slice(0, 3);
  assert.ok(fromParquet.items.every((i) => i.format === 'hotpotqa-hf'));
  assert.deepEqual(fromParquet.items.map(content), fromJsonl.map(content));
});

test('INT64 sentence ids, which arrive as bigint, are read as numbers', async () => {
  const jsonl = join(RAW, 'hotpotqa/hotpot_dev_distractor_v1_first103.jsonl');
  const path = join(dir, 'hotpot_int64.parquet');
  const schema = HOTPOT_HF.map((c) => c.map((e) => (e.type === 'INT32' ? { ...e, type: 'INT64' as const } : e)));
  const rows = (await firstLines(jsonl, 1)).map(hotpotHfRow).map((r) => {
    const sf = r.supporting_facts as { title: string[]; sent_id: number[] };
    return { ...r, supporting_facts: { ...sf, sent_id: sf.sent_id.map(BigInt) } };
  });
  writeParquet(path, rows, schema);
  const raw = await readParquet(path);
  assert.deepEqual((raw.items[0]!.value.supporting_facts as { sent_id: unknown[] }).sent_id, [0, 0]);
  const { items } = await readHotpotqa(path);
  assert.deepEqual(items[0]!.supporting, [
    { title: 'Scott Derrickson', sent_id: 0 },
    { title: 'Ed Wood', sent_id: 0 },
  ]);
});

test('a StrategyQA Parquet export with list columns and a boolean answer is detected and parsed', async () => {
  const jsonl = join(RAW, 'strategyqa/strategyqa_train_split.jsonl');
  const path = join(dir, 'strategyqa-train.parquet');
  const rows = await firstLines(jsonl, 3);
  writeParquet(path, rows, [
    [str('qid')],
    [str('term')],
    [str('description')],
    [str('question')],
    [{ name: 'answer', type: 'BOOLEAN', repetition_type: 'OPTIONAL' }],
    list('facts', [str('element')]),
    list('decomposition', [str('element')]),
  ]);
  const loaded = await loadSources([path], { root: dir });
  assert.deepEqual(
    loaded.files.map((f) => [f.task, f.formats, f.items]),
    [['strategyqa', ['strategyqa-hf'], 3]],
  );
  const fromJsonl = (await loadSources([jsonl])).items.slice(0, 3);
  assert.deepEqual(loaded.items.map(content), fromJsonl.map(content));
});

test('a bad Parquet row is reported by row number and skipped in skip mode', async () => {
  const path = join(dir, 'gsm8k-bad.parquet');
  writeParquet(
    path,
    [
      { question: 'One?', answer: 'x <<1+0=1>>1\n#### 1' },
      { question: 'Two?', answer: 'no final line' },
      { question: 'Three?', answer: '#### 3' },
    ],
    [[str('question')], [str('answer')]],
  );
  const { items, skipped, issues } = await readGsm8k(path, { onError: 'skip', root: dir });
  assert.deepEqual(
    items.map((i) => i.source_id),
    ['gsm8k-train-1', 'gsm8k-train-3'],
  );
  assert.equal(skipped, 1);
  assert.equal(
    issues[0]!.message,
    'gsm8k-bad.parquet:row 2: answer: expected a final line "#### <number>", got "no final line"',
  );
});

test('a file that is not Parquet is reported as a whole-file issue', async () => {
  const path = join(dir, 'broken.parquet');
  await writeFile(path, 'this is not parquet at all');
  await assert.rejects(readParquet(path, { root: dir }), (error: unknown) => {
    assert.ok(error instanceof DataError);
    assert.deepEqual(
      [error.file, error.line, error.field, error.expected],
      ['broken.parquet', 0, '(file)', 'a readable Parquet file'],
    );
    return true;
  });
  const skipped = await readParquet(path, { onError: 'skip' });
  assert.deepEqual([skipped.items.length, skipped.skipped], [0, 1]);
});
