// raw_items' document (lib/data/raw-items.ts): what loadSources gives, with each data file's path,
// sha256 and size, written once and read back by shadow_set, seed_pool and pool_validation. Read
// back, it must be what loading the files gives, byte-identical from one load to the next, and a
// file of another kind is refused naming it. Real files in a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadRawItems, loadSources, RAW_ITEMS_FORMAT, rawItemsText, readRawItems } from '../../lib/data/index.ts';

const GSM8K = [
  {
    question: 'Ann has 3 apples and buys 4 more. How many apples does she have?',
    answer: 'She has 3 + 4 = 7.\n#### 7',
  },
  { question: 'Bob reads 10 pages a day for 3 days. How many pages does he read?', answer: '10 * 3 = 30\n#### 30' },
  // the same question as the first, normalised: merged into it
  { question: 'Ann has 3 apples and buys 4 more.  How many apples does she have?', answer: 'Seven.\n#### 7' },
  { question: 'How many?', answer: 'no final line here' },
];
const STRATEGYQA = [
  {
    qid: 'q1',
    term: 'Water',
    description: 'a liquid',
    question: 'Is water wet?',
    answer: true,
    facts: ['Water makes things wet.'],
    decomposition: ['What is water?'],
  },
];

function workspace(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-raw-items-'));
  fs.mkdirSync(path.join(dir, 'data/raw/gsm8k'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'data/raw/strategyqa'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'data/raw/gsm8k/train.jsonl'), GSM8K.map((r) => JSON.stringify(r)).join('\n'));
  fs.writeFileSync(path.join(dir, 'data/raw/gsm8k/SOURCE.md'), '# GSM8K\n');
  fs.writeFileSync(
    path.join(dir, 'data/raw/strategyqa/train.jsonl'),
    STRATEGYQA.map((r) => JSON.stringify(r)).join('\n'),
  );
  return dir;
}

const files = (dir: string): string[] =>
  ['data/raw/strategyqa/train.jsonl', 'data/raw/gsm8k/SOURCE.md', 'data/raw/gsm8k/train.jsonl'].map((f) =>
    path.join(dir, f),
  );

test('read back, the document is what loading the data files gives, with each file (SOURCE.md left out) and its sha256 and size', async () => {
  const dir = workspace();
  try {
    const doc = await loadRawItems(files(dir), 'skip', dir);
    const file = path.join(dir, 'data/raw_items.json');
    fs.writeFileSync(file, rawItemsText(doc));
    const back = await readRawItems(file);
    const { format, on_error, inputs, ...loaded } = back;
    assert.equal(format, RAW_ITEMS_FORMAT);
    assert.equal(on_error, 'skip');
    const direct = await loadSources(
      [path.join(dir, 'data/raw/gsm8k/train.jsonl'), path.join(dir, 'data/raw/strategyqa/train.jsonl')],
      { onError: 'skip', root: dir },
    );
    assert.deepEqual(loaded, JSON.parse(JSON.stringify(direct)));
    assert.deepEqual(Object.keys(loaded.items[0]!), Object.keys(direct.items[0]!), 'fields in the same order');
    assert.equal(back.items.length, 3);
    assert.equal(back.duplicates, 1);
    assert.equal(back.skipped, 1);
    assert.match(back.issues[0]!.message, /data\/raw\/gsm8k\/train\.jsonl:4/);
    assert.deepEqual(
      inputs,
      ['data/raw/gsm8k/train.jsonl', 'data/raw/strategyqa/train.jsonl'].map((p) => {
        const bytes = fs.readFileSync(path.join(dir, p));
        return { path: p, sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
      }),
    );
    // The same files give the same bytes.
    assert.equal(rawItemsText(await loadRawItems(files(dir), 'skip', dir)), fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("with on_error 'fail' the first malformed record stops the load, naming its file, line and field", async () => {
  const dir = workspace();
  try {
    await assert.rejects(loadRawItems(files(dir), 'fail', dir), /data\/raw\/gsm8k\/train\.jsonl:4: answer: expected/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a file that is not a raw_items document is refused, naming it and the target that makes one', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-raw-items-'));
  try {
    const file = path.join(dir, 'items.json');
    for (const text of ['{"items": []}', `{"format": "${RAW_ITEMS_FORMAT}", "items": {}}`, '[]', 'null']) {
      fs.writeFileSync(file, text);
      await assert.rejects(readRawItems(file), (e: Error) => {
        assert.match(e.message, /items\.json: not a raw_items document .* build target raw_items/);
        return true;
      });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
