// HotpotQA reader: the official distractor, IRCoT and Hugging Face layouts, de-duplication of the
// shipped files, and every kind of bad record.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { DataError, loadSources, parseHotpotqa, readHotpotqa, type HotpotqaItem } from '../../lib/data/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const ORIGINAL = join(ROOT, 'data/raw/hotpotqa/hotpot_dev_distractor_v1_first103.jsonl');
const IRCOT = join(ROOT, 'data/raw/hotpotqa/hotpot_dev_ircot_processed_500.jsonl');
const at = { file: 'h.jsonl', line: 4, unit: 'line' as const };

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-hotpot-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Original = {
  _id: string;
  question: string;
  answer: string;
  type: string;
  level: string;
  supporting_facts: [string, number][];
  context: [string, string[]][];
};

function original(): Original {
  return {
    _id: 'abc',
    question: 'Were A and B born in the same country?',
    answer: 'yes',
    type: 'comparison',
    level: 'hard',
    supporting_facts: [
      ['A', 0],
      ['B', 1],
    ],
    context: [
      ['A', ['A was born in France.']],
      ['C', ['C is a distractor.']],
      ['B', ['B is a painter.', ' B was born in France.']],
    ],
  };
}

/** The Hugging Face hotpot_qa layout of an official record. */
function toHf(r: Original) {
  return {
    id: r._id,
    question: r.question,
    answer: r.answer,
    type: r.type,
    level: r.level,
    supporting_facts: { title: r.supporting_facts.map((f) => f[0]), sent_id: r.supporting_facts.map((f) => f[1]) },
    context: { title: r.context.map((c) => c[0]), sentences: r.context.map((c) => c[1]) },
  };
}

const parse = (value: object) => parseHotpotqa({ at, value: value as Record<string, unknown> });

function sameContent(a: HotpotqaItem, b: HotpotqaItem): void {
  const strip = ({ format: _f, origin: _o, ...rest }: HotpotqaItem) => rest;
  assert.deepEqual(strip(a), strip(b));
}

test('the shipped HotpotQA files hold 103 + 500 records that merge into 500 unique items', async () => {
  const orig = await readHotpotqa(ORIGINAL);
  const ircot = await readHotpotqa(IRCOT);
  assert.equal(orig.items.length, 103);
  assert.equal(ircot.items.length, 500);
  const loaded = await loadSources([ORIGINAL, IRCOT], { root: ROOT });
  assert.equal(loaded.items.length, 500);
  assert.equal(loaded.duplicates, 103);
  assert.equal(loaded.skipped, 0);
  const byFormat = loaded.items.reduce<Record<string, number>>((m, i) => {
    m[i.format] = (m[i.format] ?? 0) + 1;
    return m;
  }, {});
  assert.deepEqual(byFormat, { 'hotpotqa-distractor': 103, 'hotpotqa-ircot': 397 });
  assert.equal(new Set(loaded.items.map((i) => i.source_id)).size, 500);
});

test('merging prefers the official record, with sentence-level facts, whatever the file order', async () => {
  const loaded = await loadSources([IRCOT, ORIGINAL], { root: ROOT });
  assert.equal(loaded.duplicates, 103);
  const first = loaded.items.find((i) => i.source_id === '5a8b57f25542995d1e6f1371') as HotpotqaItem;
  assert.equal(first.format, 'hotpotqa-distractor');
  assert.deepEqual(first.supporting, [
    { title: 'Scott Derrickson', sent_id: 0 },
    { title: 'Ed Wood', sent_id: 0 },
  ]);
  assert.equal(first.origin.file, 'data/raw/hotpotqa/hotpot_dev_distractor_v1_first103.jsonl');
});

test('an official record keeps its paragraphs, sentence-level supporting facts, type and level', async () => {
  const { items } = await readHotpotqa(ORIGINAL);
  const item = items[0]!;
  assert.equal(item.source_id, '5a8b57f25542995d1e6f1371');
  assert.equal(item.gold_answer, 'yes');
  assert.equal(item.type, 'comparison');
  assert.equal(item.level, 'hard');
  assert.equal(item.paragraphs.length, 10);
  assert.equal(item.paragraphs[0]!.title, 'Ed Wood (film)');
  assert.equal(item.paragraphs[0]!.sentences.length, 3);
  assert.equal(items.filter((i) => i.type === 'comparison').length, 21);
});

test('an IRCoT record gives paragraph-level support and the answer from its spans', async () => {
  const { items } = await readHotpotqa(IRCOT);
  const item = items[0]!;
  assert.equal(item.source_id, '5a8c7595554299585d9e36b6');
  assert.equal(item.gold_answer, 'Chief of Protocol');
  assert.equal(item.format, 'hotpotqa-ircot');
  assert.equal(item.type, null);
  assert.equal(item.level, null);
  assert.deepEqual(
    item.supporting.map((s) => s.sent_id),
    [undefined, undefined],
  );
  assert.ok(item.supporting.some((s) => s.title === 'Shirley Temple'));
  assert.ok(items.every((i) => i.supporting.length === 2));
});

test('an IRCoT answer falls back to the number, then the date', () => {
  const ircot = (answer: object) => ({
    question_id: 'q1',
    question_text: 'When?',
    answers_objects: [answer],
    contexts: [],
  });
  assert.equal(parse(ircot({ number: '12', date: { day: '', month: '', year: '' }, spans: [] })).gold_answer, '12');
  assert.equal(
    parse(ircot({ number: '', date: { day: '4', month: 'July', year: '1776' }, spans: [] })).gold_answer,
    '4 July 1776',
  );
  assert.throws(
    () => parse(ircot({ number: '', date: { day: '', month: '', year: '' }, spans: [] })),
    /answers_objects\[0\]: expected non-empty spans, a number or a date/,
  );
  assert.throws(
    () => parse({ ...ircot({}), answers_objects: [] }),
    /answers_objects: expected at least one answer object, got an array of 0/,
  );
});

test('the Hugging Face JSONL layout parses to the same item as the official layout', async () => {
  const hfFile = join(dir, 'validation.jsonl');
  const lines = (await readFile(ORIGINAL, 'utf8'))
    .trimEnd()
    .split('\n')
    .slice(0, 5)
    .map((l) => JSON.stringify(toHf(JSON.parse(l) as Original)));
  await writeFile(hfFile, lines.join('\n') + '\n');
  const hf = await readHotpotqa(hfFile);
  const orig = await readHotpotqa(ORIGINAL);
  assert.equal(hf.items.length, 5);
  hf.items.forEach((item, i) => {
    assert.equal(item.format, 'hotpotqa-hf');
    sameContent(item, orig.items[i]!);
  });
});

test('a HotpotQA supporting fact naming a title not in the context is reported', () => {
  const r = original();
  r.supporting_facts[1] = ['Nobody', 0];
  assert.throws(
    () => parse(r),
    (error: unknown) => {
      assert.ok(error instanceof DataError);
      assert.equal(error.field, 'supporting_facts[1][0]');
      assert.equal(
        error.message,
        'h.jsonl:4: supporting_facts[1][0]: expected the title of a context paragraph, got "Nobody"',
      );
      return true;
    },
  );
  const hf = toHf(original());
  hf.supporting_facts.title[0] = 'Nobody';
  assert.throws(
    () => parse(hf),
    /supporting_facts\.title\[0\]: expected the title of a context paragraph, got "Nobody"/,
  );
});

test("a HotpotQA supporting fact pointing past the paragraph's sentences is reported", () => {
  const r = original();
  r.supporting_facts[0] = ['A', 3];
  assert.throws(() => parse(r), {
    message:
      'h.jsonl:4: supporting_facts[0][1]: expected a sentence index below 1 (paragraph "A" has 1 sentence), got number 3',
  });
  const hf = toHf(original());
  hf.supporting_facts.sent_id[1] = 2;
  assert.throws(() => parse(hf), /supporting_facts\.sent_id\[1\]: expected a sentence index below 2/);
});

test('malformed HotpotQA fields are reported with their path and what was expected', () => {
  const cases: [(r: Original) => unknown, RegExp][] = [
    [(r) => ({ ...r, context: [['A']] }), /context\[0\]: expected a \[title, \[sentences\]\] pair, got an array of 1/],
    [(r) => ({ ...r, context: [['A', 'one string']] }), /context\[0\]\[1\]: expected a list, got "one string"/],
    [
      (r) => ({ ...r, supporting_facts: [['A', -1]] }),
      /supporting_facts\[0\]\[1\]: expected a non-negative integer, got number -1/,
    ],
    [(r) => ({ ...r, type: 'multi' }), /type: expected one of "bridge", "comparison", got "multi"/],
    [(r) => ({ ...r, answer: '' }), /answer: expected a non-empty string, got ""/],
    [({ _id: _omit, ...rest }) => rest, /_id: expected a record id \(`_id`, `question_id` or `id`\), got nothing/],
    [
      (r) => {
        const hf = toHf(r);
        hf.context.sentences.pop();
        return hf;
      },
      /context: expected context\.title and context\.sentences of the same length, got 3 and 2/,
    ],
    [
      (r) => ({
        question_id: r._id,
        question_text: r.question,
        answers_objects: [{ spans: ['x'] }],
        contexts: [{ title: 'A', paragraph_text: 'a', is_supporting: 'yes' }],
      }),
      /contexts\[0\]\.is_supporting: expected a boolean, got "yes"/,
    ],
  ];
  for (const [mutate, message] of cases) assert.throws(() => parse(mutate(original()) as object), message);
});

test('skip mode skips bad HotpotQA records and counts them; fail mode throws on the first', async () => {
  const bad = { ...original(), _id: 'bad', supporting_facts: [['Nowhere', 0]] };
  const path = join(dir, 'mixed.jsonl');
  await writeFile(
    path,
    [original(), bad, { ...original(), _id: 'def' }].map((r) => JSON.stringify(r)).join('\n') + '\n',
  );
  const skip = await readHotpotqa(path, { onError: 'skip', root: dir });
  assert.deepEqual(
    skip.items.map((i) => i.source_id),
    ['abc', 'def'],
  );
  assert.equal(skip.skipped, 1);
  assert.equal(
    skip.issues[0]!.message,
    'mixed.jsonl:2: supporting_facts[0][0]: expected the title of a context paragraph, got "Nowhere"',
  );
  await assert.rejects(readHotpotqa(path, { root: dir }), { name: 'DataError', message: skip.issues[0]!.message });
});
