// JSONL and JSON-array reading: line tracking, encodings, and how bad lines are reported.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DataError, readJsonl, readRecords, toJsonl } from '../../lib/data/index.ts';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-jsonl-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

test("readJsonl keeps each record's 1-based line number and ignores blank lines", async () => {
  const path = await file('a.jsonl', '{"a":1}\n\n{"a":2}\n   \n{"a":3}\n');
  const { items, skipped, issues } = await readJsonl(path);
  assert.deepEqual(
    items.map((r) => [r.at.line, r.value.a]),
    [
      [1, 1],
      [3, 2],
      [5, 3],
    ],
  );
  assert.equal(skipped, 0);
  assert.deepEqual(issues, []);
});

test('a byte-order mark, CRLF line endings and a missing final newline are accepted', async () => {
  const path = await file('bom.jsonl', '\uFEFF{"a":"x"}\r\n{"a":"y"}');
  const { items } = await readJsonl(path);
  assert.deepEqual(
    items.map((r) => r.value.a),
    ['x', 'y'],
  );
});

test('invalid JSON makes fail mode throw a DataError naming file, line and field', async () => {
  const path = await file('bad.jsonl', '{"a":1}\n{"a":\n');
  await assert.rejects(readJsonl(path, { root: dir }), (error: unknown) => {
    assert.ok(error instanceof DataError);
    assert.equal(error.file, 'bad.jsonl');
    assert.equal(error.line, 2);
    assert.equal(error.field, '(json)');
    assert.equal(error.expected, 'a JSON object');
    assert.match(error.message, /^bad\.jsonl:2: \(json\): expected a JSON object, got "\{\\"a\\":" \(not valid JSON: /);
    return true;
  });
});

test('a line that is JSON but not an object is reported', async () => {
  const path = await file('arr.jsonl', '[1,2]\n"s"\n{"ok":true}\n');
  const { items, skipped, issues } = await readJsonl(path, { onError: 'skip', root: dir });
  assert.equal(items.length, 1);
  assert.equal(skipped, 2);
  assert.deepEqual(
    issues.map((i) => i.message),
    [
      'arr.jsonl:1: (json): expected a JSON object, got an array of 2',
      'arr.jsonl:2: (json): expected a JSON object, got "s"',
    ],
  );
});

test('a line that is not UTF-8 is reported at its line and the other lines still parse', async () => {
  const bytes = Buffer.concat([
    Buffer.from('{"a":1}\n{"a":"'),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}\n{"a":3}\n'),
  ]);
  const path = await file('latin.jsonl', bytes);
  const { items, issues } = await readJsonl(path, { onError: 'skip', root: dir });
  assert.deepEqual(
    items.map((r) => r.at.line),
    [1, 3],
  );
  assert.equal(issues.length, 1);
  assert.equal(issues[0]!.line, 2);
  assert.equal(issues[0]!.expected, 'valid UTF-8 text');
});

test('skip mode skips and counts every bad line and keeps the good ones', async () => {
  const path = await file('mixed.jsonl', '{"a":1}\nnope\n{"a":2}\n{\n');
  const { items, skipped, issues } = await readJsonl(path, { onError: 'skip' });
  assert.equal(items.length, 2);
  assert.equal(skipped, 2);
  assert.deepEqual(
    issues.map((i) => [i.line, i.unit, i.field]),
    [
      [2, 'line', '(json)'],
      [4, 'line', '(json)'],
    ],
  );
  assert.equal(issues[0]!.file, path, 'without a root, files are named as given');
});

test('a JSON array file is read with records located by their position in the array', async () => {
  const path = await file('arr.json', '[\n  {"a": 1},\n  7,\n  {"a": 3}\n]\n');
  const { items, issues } = await readRecords(path, { onError: 'skip', root: dir });
  assert.deepEqual(
    items.map((r) => [r.at.unit, r.at.line, r.value.a]),
    [
      ['record', 1, 1],
      ['record', 3, 3],
    ],
  );
  assert.equal(issues[0]!.message, 'arr.json:record 2: (json): expected a JSON object, got number 7');
});

test('a .json file holding JSONL is read line by line', async () => {
  const path = await file('lines.json', '{"a":1}\n{"a":2}\n');
  const { items } = await readRecords(path);
  assert.deepEqual(
    items.map((r) => [r.at.unit, r.at.line]),
    [
      ['line', 1],
      ['line', 2],
    ],
  );
});

test('a file of another kind is reported as a whole-file issue', async () => {
  const path = await file('notes.md', '# hi\n');
  await assert.rejects(
    readRecords(path, { root: dir }),
    /^DataError: notes\.md: \(file\): expected a \.jsonl, \.json or \.parquet file, got "\.md"$/,
  );
});

test('toJsonl writes one compact object per line with \\n endings, keys in insertion order', () => {
  assert.equal(toJsonl([{ b: 1, a: [1, { c: 'x' }] }, { z: null }]), '{"b":1,"a":[1,{"c":"x"}]}\n{"z":null}\n');
  assert.equal(toJsonl([]), '');
});
