// StrategyQA reader: the shipped train split, the Hugging Face variants, and bad records.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { DataError, parseStrategyqa, readStrategyqa, splitList } from '../../lib/data/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TRAIN = join(ROOT, 'data/raw/strategyqa/strategyqa_train_split.jsonl');
const at = { file: 's.jsonl', line: 9, unit: 'line' as const };
const parse = (value: object) => parseStrategyqa({ at, value: value as Record<string, unknown> });

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-sqa-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const official = {
  qid: '2bc9c4f9c19c167187f2',
  term: 'Genghis Khan',
  description: 'founder of the Mongol Empire',
  question: 'Are more people today related to Genghis Khan than Julius Caesar?',
  answer: true,
  facts: ['Julius Caesar had three children.', 'Genghis Khan had sixteen children.'],
  decomposition: [
    'How many kids did Julius Caesar have?',
    'How many kids did Genghis Khan have?',
    'Is #2 greater than #1?',
  ],
  evidence: [[[['Caesarion-2']], [['Tolui-1']], ['operation']]],
};

test('the StrategyQA train split parses into 2061 items with yes/no gold answers (964 yes, 1097 no)', async () => {
  const { items, skipped } = await readStrategyqa(TRAIN);
  assert.equal(items.length, 2061);
  assert.equal(skipped, 0);
  assert.equal(items.filter((i) => i.gold_answer === 'yes').length, 964);
  assert.equal(items.filter((i) => i.gold_answer === 'no').length, 1097);
  assert.equal(new Set(items.map((i) => i.source_id)).size, 2061);
  assert.ok(items.every((i) => i.format === 'strategyqa' && i.decomposition.length > 0));
  const first = items[0]!;
  assert.equal(first.source_id, '2bc9c4f9c19c167187f2');
  assert.equal(first.term, 'Genghis Khan');
  assert.equal(first.facts.length, 3);
  assert.equal(first.decomposition[2], 'Is #2 greater than #1?');
});

test('an official StrategyQA record keeps term, description, facts and decomposition', () => {
  const item = parse(official);
  assert.equal(item.format, 'strategyqa');
  assert.equal(item.gold_answer, 'yes');
  assert.deepEqual(item.facts, official.facts);
  assert.deepEqual(item.decomposition, official.decomposition);
  assert.equal(item.description, 'founder of the Mongol Empire');
});

test('a Hugging Face StrategyQA variant with facts as one string and no evidence parses', () => {
  const { evidence: _e, ...rest } = official;
  const item = parse({
    ...rest,
    answer: false,
    facts: 'Julius Caesar had three children. Genghis Khan had sixteen children.',
  });
  assert.equal(item.format, 'strategyqa-hf');
  assert.equal(item.gold_answer, 'no');
  assert.deepEqual(item.facts, official.facts);
  const lines = parse({ ...rest, decomposition: 'How many kids did Julius Caesar have?\nIs #1 more than 2?\n' });
  assert.deepEqual(lines.decomposition, ['How many kids did Julius Caesar have?', 'Is #1 more than 2?']);
});

test('a StrategyQA variant with an `id` field and a yes/no string answer parses', () => {
  const { qid, evidence: _e, ...rest } = official;
  const item = parse({ id: qid, ...rest, answer: 'Yes' });
  assert.equal(item.source_id, qid);
  assert.equal(item.gold_answer, 'yes');
});

test('splitList splits by line when there are line breaks and by sentence otherwise', () => {
  assert.deepEqual(splitList('A is 1. B? C!  D'), ['A is 1.', 'B?', 'C!', 'D']);
  assert.deepEqual(splitList('first. still first\n\nsecond'), ['first. still first', 'second']);
});

test('malformed StrategyQA fields are reported with their path and what was expected', () => {
  assert.throws(
    () => parse({ ...official, answer: 1 }),
    (error: unknown) => {
      assert.ok(error instanceof DataError);
      assert.equal(error.message, 's.jsonl:9: answer: expected a boolean (or "yes"/"no"/"true"/"false"), got number 1');
      return true;
    },
  );
  assert.throws(
    () => parse({ ...official, facts: 3 }),
    /facts: expected a list of strings \(or one string\), got number 3/,
  );
  assert.throws(
    () => parse({ ...official, decomposition: ['ok', 7] }),
    /decomposition\[1\]: expected a string, got number 7/,
  );
  assert.throws(() => parse({ ...official, qid: '' }), /qid: expected a non-empty string, got ""/);
  assert.throws(() => parse({ ...official, evidence: 'none' }), /evidence: expected a list, got "none"/);
  const { term: _t, ...noTerm } = official;
  assert.throws(() => parse(noTerm), /s\.jsonl:9: term: expected a string, got nothing \(the field is missing\)/);
});

test('skip mode skips bad StrategyQA records and counts them; fail mode throws on the first', async () => {
  const path = join(dir, 'train.jsonl');
  await writeFile(
    path,
    [official, { ...official, qid: 'b', answer: 'maybe' }, { ...official, qid: 'c' }]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const skip = await readStrategyqa(path, { onError: 'skip', root: dir });
  assert.deepEqual(
    skip.items.map((i) => i.source_id),
    [official.qid, 'c'],
  );
  assert.equal(skip.skipped, 1);
  assert.deepEqual([skip.issues[0]!.file, skip.issues[0]!.line, skip.issues[0]!.field], ['train.jsonl', 2, 'answer']);
  await assert.rejects(readStrategyqa(path, { root: dir }), { name: 'DataError', message: skip.issues[0]!.message });
});
