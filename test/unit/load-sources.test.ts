// loadSources: task detection per file, the shipped data/raw tree, merging, and skip-and-count
// across files.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import fg from 'fast-glob';
import { DataError, detectTask, loadSources } from '../../lib/data/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-load-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function jsonl(name: string, records: unknown[]): Promise<string> {
  const path = join(dir, name);
  await mkdir(resolve(path, '..'), { recursive: true });
  await writeFile(path, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return path;
}

const gsm = { question: 'Two plus two?', answer: '2+2 = <<2+2=4>>4\n#### 4' };
const sqa = {
  qid: 'q1',
  term: 'T',
  description: 'd',
  question: 'Is it?',
  answer: false,
  facts: ['f'],
  decomposition: ['s'],
};

test('the shipped data/raw tree loads into 10033 unique items, passing over SOURCE.md', async () => {
  const files = (await fg('data/raw/**/*', { cwd: ROOT, absolute: true })).sort();
  assert.equal(files.filter((f) => f.endsWith('SOURCE.md')).length, 3);
  const loaded = await loadSources(files, { root: ROOT });
  const perTask = loaded.items.reduce<Record<string, number>>((m, i) => {
    m[i.task] = (m[i.task] ?? 0) + 1;
    return m;
  }, {});
  assert.deepEqual(perTask, { gsm8k: 7473, hotpotqa: 500, strategyqa: 2060 });
  assert.equal(loaded.items.length, 10033);
  // 103 IRCoT copies of official HotpotQA records, and one StrategyQA question asked twice under two qids.
  assert.equal(loaded.duplicates, 104);
  assert.deepEqual(
    loaded.duplicateRecords.filter((d) => !d.same_id),
    [
      {
        task: 'strategyqa',
        source_id: '8a5edfb7385edb776926',
        kept: 'data/raw/strategyqa/strategyqa_train_split.jsonl:115',
        repeat: 'data/raw/strategyqa/strategyqa_train_split.jsonl:1470',
        same_id: false,
      },
    ],
  );
  assert.equal(loaded.skipped, 0);
  assert.deepEqual(
    loaded.files.map((f) => [f.file, f.task, f.records, f.items]),
    [
      ['data/raw/gsm8k/gsm8k_train_full.jsonl', 'gsm8k', 7473, 7473],
      ['data/raw/hotpotqa/hotpot_dev_distractor_v1_first103.jsonl', 'hotpotqa', 103, 103],
      ['data/raw/hotpotqa/hotpot_dev_ircot_processed_500.jsonl', 'hotpotqa', 500, 500],
      ['data/raw/strategyqa/strategyqa_train_split.jsonl', 'strategyqa', 2061, 2061],
    ],
  );
});

test("a record's task is detected from the fields it has", () => {
  assert.equal(detectTask(gsm), 'gsm8k');
  assert.equal(detectTask(sqa), 'strategyqa');
  assert.equal(detectTask({ _id: 'x' }), 'hotpotqa');
  assert.equal(detectTask({ question_id: 'x', contexts: [] }), 'hotpotqa');
  assert.equal(detectTask({ id: 'x', question: 'q', answer: 'a', context: {} }), 'hotpotqa');
  assert.equal(detectTask({ title: 'x' }), null);
});

test("a file's task is detected from its first recognisable record, so a broken first record is reported on its fields", async () => {
  const path = await jsonl('detect/sqa.jsonl', [{ qid: 'q0' }, sqa]);
  const loaded = await loadSources([path], { onError: 'skip', root: dir });
  assert.deepEqual(
    loaded.files.map((f) => [f.task, f.items, f.skipped]),
    [['strategyqa', 1, 1]],
  );
  assert.equal(
    loaded.issues[0]!.message,
    'detect/sqa.jsonl:1: term: expected a string, got nothing (the field is missing)',
  );
});

test('records of a file with no recognisable record are each reported', async () => {
  const path = await jsonl('unknown.jsonl', [{ title: 'a' }, { title: 'b' }]);
  await assert.rejects(loadSources([path], { root: dir }), {
    message:
      'unknown.jsonl:1: (record): expected the fields of a GSM8K, HotpotQA or StrategyQA record, got an object with keys title',
  });
  const loaded = await loadSources([path], { onError: 'skip' });
  assert.deepEqual([loaded.skipped, loaded.files[0]!.task], [2, null]);
});

test('the task option reads every file as that task', async () => {
  const path = await jsonl('forced.jsonl', [sqa]);
  await assert.rejects(loadSources([path], { task: 'gsm8k', root: dir }), /forced\.jsonl:1: answer: expected a string/);
});

test('skip mode counts bad records across files, in file and line order; fail mode stops at the first', async () => {
  const a = await jsonl('multi/a_train.jsonl', [gsm, { ...gsm, answer: 'x' }, 'not json']);
  const b = await jsonl('multi/b.jsonl', [sqa, { ...sqa, qid: 'q2', answer: 'perhaps' }]);
  const loaded = await loadSources([a, b], { onError: 'skip', root: dir });
  assert.equal(loaded.items.length, 2);
  assert.equal(loaded.skipped, 3);
  assert.deepEqual(
    loaded.issues.map((i) => `${i.file}:${i.line}:${i.field}`),
    ['multi/a_train.jsonl:2:answer', 'multi/a_train.jsonl:3:(json)', 'multi/b.jsonl:2:answer'],
  );
  assert.deepEqual(
    loaded.files.map((f) => f.skipped),
    [2, 1],
  );
  await assert.rejects(
    loadSources([a, b]),
    (error: unknown) => error instanceof DataError && error.line === 2 && error.field === 'answer',
  );
});

test('records repeated across files are merged and counted, under the same id or another, with both locations', async () => {
  const a = await jsonl('dup/one.jsonl', [sqa]);
  const b = await jsonl('dup/two.jsonl', [
    { ...sqa, facts: ['other'] },
    { ...sqa, qid: 'q9', question: `  ${sqa.question.toUpperCase()} ` },
  ]);
  const loaded = await loadSources([a, b], { root: dir });
  assert.deepEqual(
    loaded.items.map((i) => i.source_id),
    ['q1'],
  );
  assert.deepEqual(loaded.items[0]!.origin.file, 'dup/one.jsonl');
  assert.equal(loaded.duplicates, 2);
  assert.deepEqual(loaded.duplicateRecords, [
    { task: 'strategyqa', source_id: 'q1', kept: 'dup/one.jsonl:1', repeat: 'dup/two.jsonl:1', same_id: true },
    { task: 'strategyqa', source_id: 'q1', kept: 'dup/one.jsonl:1', repeat: 'dup/two.jsonl:2', same_id: false },
  ]);
});

test('a GSM8K question repeated in a raw file is one item, whatever line it is on', async () => {
  const other = { ...gsm, question: 'Ann has 3 apples and buys 4 more. How many apples does she have?' };
  const f = await jsonl('repeat/train.jsonl', [gsm, other, { ...gsm, question: gsm.question.replace(/\?$/, ' ?') }]);
  const loaded = await loadSources([f], { root: dir });
  assert.deepEqual(
    loaded.items.map((i) => i.source_id),
    ['gsm8k-train-1', 'gsm8k-train-2'],
  );
  assert.deepEqual(loaded.duplicateRecords, [
    {
      task: 'gsm8k',
      source_id: 'gsm8k-train-1',
      kept: 'repeat/train.jsonl:1',
      repeat: 'repeat/train.jsonl:3',
      same_id: false,
    },
  ]);
});

test('records that share an id but not their question are reported as an id collision, not merged', async () => {
  const a = await jsonl('clash/a_train.jsonl', [gsm, { ...gsm, question: 'Two plus five?' }]);
  const b = await jsonl('clash/b_train.jsonl', [{ ...gsm, question: 'Three plus one?' }]);
  const message =
    'clash/b_train.jsonl:1: (record): expected the question of clash/a_train.jsonl:1, which has the same id "gsm8k-train-1", got "Three plus one?"';
  await assert.rejects(loadSources([a, b], { root: dir }), { name: 'DataError', message });
  const loaded = await loadSources([a, b], { onError: 'skip', root: dir });
  assert.deepEqual([loaded.items.length, loaded.duplicates, loaded.skipped], [2, 0, 1]);
  assert.equal(loaded.issues[0]!.message, message);
});

test('a second load of unchanged files is the first result, read-only; an edited file, another file list or other options load again', async () => {
  const a = await jsonl('again/a.jsonl', [gsm]);
  const b = await jsonl('again/b.jsonl', [sqa]);
  const first = await loadSources([a, b], { onError: 'fail' });
  assert.equal(await loadSources([a, b], { onError: 'fail' }), first);
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.items) && Object.isFrozen(first.items[0]));
  assert.throws(() => {
    (first.items as unknown as object[]).push({});
  }, TypeError);
  assert.throws(() => {
    (first.items[0] as { question: string }).question = 'changed';
  }, TypeError);

  assert.notEqual(await loadSources([a, b], { onError: 'skip' }), first);
  assert.notEqual(await loadSources([a], { onError: 'fail' }), first);
  const again = await loadSources([a, b], { onError: 'fail' });
  assert.deepEqual(again, first);

  // Same size, new content: the stat (mtime, ctime) tells.
  const size = (await stat(a)).size;
  await writeFile(a, `${JSON.stringify({ ...gsm, question: 'Two plus six?' })}\n`);
  assert.equal((await stat(a)).size, size);
  const edited = await loadSources([a, b], { onError: 'fail' });
  assert.notEqual(edited, again);
  assert.deepEqual(
    edited.items.map((i) => i.question),
    ['Two plus six?', 'Is it?'],
  );
});
