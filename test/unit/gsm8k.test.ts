// GSM8K reader: the shipped train slice, answer parsing, ids, and every kind of bad record.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { DataError, parseGsm8kAnswer, readGsm8k } from '../../lib/data/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TRAIN = join(ROOT, 'data/raw/gsm8k/gsm8k_train_full.jsonl');
const at = { file: 'x.jsonl', line: 17, unit: 'line' as const };

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-gsm8k-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function jsonl(name: string, records: unknown[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return path;
}

const good = { question: 'Tom has 2 apples and buys 3. How many?', answer: 'He has 2+3 = <<2+3=5>>5 apples.\n#### 5' };

test('the full GSM8K train set parses into 7473 items: 79 gold answers had thousands commas, 3 are negative', async () => {
  const { items, skipped } = await readGsm8k(TRAIN, { root: ROOT });
  assert.equal(items.length, 7473);
  assert.equal(skipped, 0);
  const raw = (await readFile(TRAIN, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { answer: string });
  const finals = raw.map((r) => r.answer.split('\n').at(-1)!.replace('#### ', ''));
  assert.equal(finals.filter((f) => f.includes(',')).length, 79);
  items.forEach((item, i) => assert.equal(item.gold_answer, finals[i]!.replaceAll(',', '')));
  assert.ok(
    items.every((i) => /^-?\d+$/.test(i.gold_answer)),
    'every gold answer is a plain integer',
  );
  assert.deepEqual(
    items.filter((i) => i.gold_answer.startsWith('-')).map((i) => [i.source_id, i.gold_answer]),
    [
      ['gsm8k-train-5716', '-7'],
      ['gsm8k-train-5845', '-47'],
      ['gsm8k-train-6190', '-12'],
    ],
  );
  assert.equal(items.filter((i) => i.calc.length > 0).length, 7378);
  assert.deepEqual(
    items.slice(0, 2).map((i) => i.source_id),
    ['gsm8k-train-1', 'gsm8k-train-2'],
  );
  assert.equal(items[7472]!.source_id, 'gsm8k-train-7473');
  assert.equal(new Set(items.map((i) => i.source_id)).size, 7473);
  assert.deepEqual(items[0]!.origin, { file: 'data/raw/gsm8k/gsm8k_train_full.jsonl', line: 1, unit: 'line' });
});

test('calculator annotations become calc calls tied to their steps and are removed from the step text', () => {
  const first =
    'Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72';
  assert.deepEqual(parseGsm8kAnswer(first, at), {
    gold_answer: '72',
    steps: ['Natalia sold 48/2 = 24 clips in May.', 'Natalia sold 48+24 = 72 clips altogether in April and May.'],
    calc: [
      { expr: '48/2', result: '24', step: 0 },
      { expr: '48+24', result: '72', step: 1 },
    ],
  });
});

test('a final answer with thousands commas, a sign or decimals keeps its value without commas', () => {
  assert.equal(parseGsm8kAnswer('x\n#### 1,600', at).gold_answer, '1600');
  assert.equal(parseGsm8kAnswer('x\n#### 1,234,567', at).gold_answer, '1234567');
  assert.equal(parseGsm8kAnswer('x\n####-3.5', at).gold_answer, '-3.5');
});

test('blank solution lines are dropped and step indexes count only the kept lines', () => {
  const parsed = parseGsm8kAnswer('a <<1+1=2>>2\n\nb <<2*3=6>>6\n#### 6\n', at);
  assert.deepEqual(parsed.steps, ['a 2', 'b 6']);
  assert.deepEqual(
    parsed.calc.map((c) => c.step),
    [0, 1],
  );
});

test('a step keeps its text before, between and after its annotations, and a line of annotations only is an empty step', () => {
  const parsed = parseGsm8kAnswer('<<1+1=2>>two, then <<2*3=6>> six <<6-1=5>>5 left  \n<<4=4>><<5=5>>\n#### 5', at);
  assert.deepEqual(parsed.steps, ['two, then  six 5 left', '']);
  assert.deepEqual(
    parsed.calc.map((c) => [c.expr, c.result, c.step]),
    [
      ['1+1', '2', 0],
      ['2*3', '6', 0],
      ['6-1', '5', 0],
      ['4', '4', 1],
      ['5', '5', 1],
    ],
  );
});

test('a GSM8K answer without #### is reported with file, line and field', () => {
  assert.throws(
    () => parseGsm8kAnswer('He has 5.\nSo 5.', at),
    (error: unknown) => {
      assert.ok(error instanceof DataError);
      assert.deepEqual([error.file, error.line, error.field], ['x.jsonl', 17, 'answer']);
      assert.equal(error.message, 'x.jsonl:17: answer: expected a final line "#### <number>", got "So 5."');
      return true;
    },
  );
});

test('a GSM8K final line that is not a number is reported', () => {
  assert.throws(() => parseGsm8kAnswer('x\n#### five', at), {
    message: 'x.jsonl:17: answer: expected a number after "####", got "five"',
  });
  assert.throws(() => parseGsm8kAnswer('x\n#### 1,60', at), /expected a number after "####", got "1,60"/);
});

test('a malformed calculator annotation is reported', () => {
  assert.throws(() => parseGsm8kAnswer('a <<2+3>>5\n#### 5', at), {
    message: 'x.jsonl:17: answer: expected calculator annotations of the form "<<expr=result>>", got "<<2+3>>"',
  });
  assert.throws(() => parseGsm8kAnswer('a <<2+3=5 apples\n#### 5', at), /every "<<" closed by ">>"/);
});

test('a GSM8K record with a missing question or a non-string answer is reported in fail mode', async () => {
  const noQuestion = await jsonl('noq.jsonl', [good, { answer: good.answer }]);
  await assert.rejects(readGsm8k(noQuestion, { root: dir }), {
    message: 'noq.jsonl:2: question: expected a non-empty string, got nothing (the field is missing)',
  });
  const numeric = await jsonl('num.jsonl', [{ question: 'q?', answer: 5 }]);
  await assert.rejects(readGsm8k(numeric, { root: dir }), {
    name: 'DataError',
    message: 'num.jsonl:1: answer: expected a string (a worked solution ending in "#### <number>"), got number 5',
  });
});

test('skip mode skips bad GSM8K records, counts them, and the good ones keep line-based ids', async () => {
  const path = await jsonl('train_mixed.jsonl', [good, { question: 'q?', answer: 'no marker' }, '{oops', good]);
  const { items, skipped, issues } = await readGsm8k(path, { onError: 'skip', root: dir });
  assert.deepEqual(
    items.map((i) => i.source_id),
    ['gsm8k-train-1', 'gsm8k-train-4'],
  );
  assert.equal(skipped, 2);
  assert.deepEqual(
    issues.map((i) => [i.line, i.field]),
    [
      [2, 'answer'],
      [3, '(json)'],
    ],
  );
});

test('a Hugging Face GSM8K test export gets gsm8k-test ids', async () => {
  const path = await jsonl('test.jsonl', [good, good]);
  const { items } = await readGsm8k(path);
  assert.deepEqual(
    items.map((i) => i.source_id),
    ['gsm8k-test-1', 'gsm8k-test-2'],
  );
  assert.equal(items[0]!.gold_answer, '5');
});
