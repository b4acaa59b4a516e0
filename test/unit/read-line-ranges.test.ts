// readLineRanges (lib/difficulty/lines.ts) yields a file's lines as byte ranges: every line once, in
// order, with its 1-based number and the offset after it, '\r\n' accepted, a last line without '\n'
// kept; with `from`, exactly the lines that start at or after that byte. Checked against a plain
// split of the whole file, on files whose lines cross chunk ends (small chunks), including lines
// longer than a chunk, a '\r\n' cut between chunks, blank lines and no final newline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { readLineRanges } from '../../lib/difficulty/lines.ts';

interface Line {
  text: string;
  line: number;
  offset: number;
}

/** The lines of `bytes` that start at or after `from`, by a split of the whole file (line numbers from 1 at the first of them). */
function expected(bytes: Buffer, from: number): Line[] {
  const out: Line[] = [];
  let start = 0;
  let n = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(10, start);
    const end = nl === -1 ? bytes.length : nl;
    const after = nl === -1 ? bytes.length : nl + 1;
    if (start >= from) {
      n += 1;
      let e = end;
      if (nl !== -1 && e > start && bytes[e - 1] === 13) e -= 1;
      out.push({ text: bytes.toString('latin1', start, e), line: n, offset: after });
    }
    start = after;
  }
  return out;
}

async function read(file: string, o: { from?: number; chunkBytes?: number }): Promise<Line[]> {
  const out: Line[] = [];
  for await (const r of readLineRanges(file, o))
    out.push({ text: r.buf.toString('latin1', r.start, r.end), line: r.line, offset: r.offset });
  return out;
}

test('readLineRanges yields every line of files whose lines cross chunk ends, and from a byte offset exactly the lines that start there or later', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-lines-'));
  try {
    const rng = createRng(7);
    const pieces = ['a', 'bc', 'x'.repeat(40), '', '\r', '{"id":"s-1"}', 'é'];
    for (let f = 0; f < 40; f++) {
      let text = '';
      const lines = rng.int(12);
      for (let i = 0; i < lines; i++) {
        for (let k = rng.int(4); k > 0; k--) text += pieces[rng.int(pieces.length)];
        text += rng.next() < 0.2 ? '\r\n' : '\n';
      }
      if (rng.next() < 0.5) text += 'last line without a newline';
      const bytes = Buffer.from(text, 'utf8');
      const file = path.join(dir, `f${f}.jsonl`);
      fs.writeFileSync(file, bytes);
      for (const chunkBytes of [1, 3, 7, 64, 1 << 22]) {
        for (const from of [
          0,
          1,
          2,
          5,
          17,
          Math.floor(bytes.length / 2),
          bytes.length - 1,
          bytes.length,
          bytes.length + 9,
        ]) {
          if (from < 0) continue;
          assert.deepEqual(
            await read(file, { from, chunkBytes }),
            expected(bytes, from),
            `file ${f} (${JSON.stringify(text)}), from ${from}, chunks of ${chunkBytes}`,
          );
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
