// An append-only state file read again in a long-lived process (packages/engine/src/state/
// parsed-state.ts readParsedGrowing, the trace log's extendTrace): when the file only grew from
// the bytes last parsed, only the appended text is parsed, and the result is what a parse of the
// whole file gives; a rewrite in place, a truncation, a replacement (new inode) or a kept parse
// that ended mid-line is parsed whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deepFreeze, forgetParsedState, readParsedGrowing } from '../../packages/engine/src/state/parsed-state.ts';
import {
  type ParsedTrace,
  TRACE_FORMAT,
  type TargetRecord,
  TraceLog,
  extendTrace,
  parseTrace,
} from '../../packages/engine/src/state/trace-log.ts';

function tmpFile(name: string): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-growing-')), name);
}

/** A line-counting parse: the value is the list of lines; counts which path made it. */
function lineRig() {
  const calls = { parse: 0, extend: [] as string[] };
  const parse = (text: string): string[] => {
    calls.parse++;
    return text.split('\n').filter((l) => l !== '');
  };
  const extend = (kept: string[], appended: string): string[] | null => {
    calls.extend.push(appended);
    return [...kept, ...appended.split('\n').filter((l) => l !== '')];
  };
  return { calls, read: (file: string) => readParsedGrowing(file, parse, extend, deepFreeze) };
}

test('a file that only grew is parsed from its appended bytes; any other change is parsed whole', () => {
  forgetParsedState();
  const file = tmpFile('log');
  const { calls, read } = lineRig();
  fs.writeFileSync(file, 'a\nb\n');
  assert.deepEqual(read(file), ['a', 'b']); // the first read: the one-command path
  assert.deepEqual(read(file), ['a', 'b']);
  assert.equal(calls.parse, 2);
  fs.appendFileSync(file, 'c\nd\n');
  assert.deepEqual(read(file), ['a', 'b', 'c', 'd']);
  assert.deepEqual(calls.extend, ['c\nd\n'], 'only the appended text');
  assert.equal(calls.parse, 2);
  // Rewritten in place, the same size, one earlier byte changed: the whole file.
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, 'B', 2);
  fs.closeSync(fd);
  fs.appendFileSync(file, 'e\n');
  assert.deepEqual(read(file), ['a', 'B', 'c', 'd', 'e']);
  assert.equal(calls.parse, 3);
  // Truncated, then grown past its old size with other bytes: the whole file.
  fs.truncateSync(file, 4);
  fs.appendFileSync(file, 'x\ny\nz\nw\n');
  assert.deepEqual(read(file), ['a', 'B', 'x', 'y', 'z', 'w']);
  assert.equal(calls.parse, 4);
  // Truncated, shorter: the whole file.
  fs.truncateSync(file, 6);
  assert.deepEqual(read(file), ['a', 'B', 'x']);
  assert.equal(calls.parse, 5);
  // Replaced by rename with the same first bytes and more (a new inode): the whole file.
  fs.writeFileSync(`${file}.tmp`, 'a\nB\nx\nq\n');
  fs.renameSync(`${file}.tmp`, file);
  assert.deepEqual(read(file), ['a', 'B', 'x', 'q']);
  assert.equal(calls.parse, 6);
  // Touched, the bytes unchanged: the kept value, nothing parsed.
  const before = read(file);
  const t = new Date(Date.now() + 5000);
  fs.utimesSync(file, t, t);
  assert.equal(read(file), before);
  assert.equal(calls.parse, 6);
  assert.equal(calls.extend.length, 1);
  assert.ok(Object.isFrozen(before), 'a kept value is frozen');
  // Removed: null; created again: the whole file.
  fs.rmSync(file);
  assert.equal(read(file), null);
  fs.writeFileSync(file, 'a\nB\nx\nq\nr\n');
  assert.deepEqual(read(file), ['a', 'B', 'x', 'q', 'r']);
  assert.equal(calls.parse, 7);
});

const rec = (name: string, key: string, i: number): TargetRecord =>
  ({
    name,
    key,
    fingerprint: { inputs: { src: { [`src/${name}`]: key } } },
    outputs: [{ path: `out/${name}`, sha256: key, size: i, dir: false }],
    result: 'ok',
    how: 'ran',
    ms: i,
    at: '2026-01-01T00:00:00.000Z',
  }) as unknown as TargetRecord;

/** A deterministic pseudo-random sequence (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const plain = (p: ParsedTrace) => ({ ...p, records: [...p.records] });

test('the trace read again after random appends, torn tails, repairs, truncations, rewrites and compactions equals a parse of the whole file', () => {
  const names = ['a', 'b', 'c', 'd', 'é', 'ü→x', '日本', 'e'];
  let extended = 0;
  let whole = 0;
  for (let seed = 1; seed <= 12; seed++) {
    forgetParsedState();
    const random = rng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    const file = tmpFile('trace.log');
    const extend = (kept: ParsedTrace, appended: string): ParsedTrace | null => {
      const r = extendTrace(kept, appended);
      if (r !== null) extended++;
      return r;
    };
    const parse = (text: string): ParsedTrace => {
      whole++;
      return parseTrace(text);
    };
    const freeze = (t: ParsedTrace): void => {
      for (const r of t.records.values()) deepFreeze(r);
    };
    let log = new TraceLog(file);
    log.repair();
    for (let step = 0; step < 120; step++) {
      const op = random();
      if (op < 0.45) {
        const n = 1 + Math.floor(random() * 4);
        for (let i = 0; i < n; i++) log.put(rec(pick(names), `k${step}-${i}`, step));
      } else if (op < 0.55) {
        log.remove(pick(names));
      } else if (op < 0.62) {
        // A build killed mid-line: a torn tail; sometimes completed by a later append.
        log.close();
        const line = JSON.stringify(rec(pick(names), `torn${step}`, step)) + '\n';
        const cut = 1 + Math.floor(random() * (line.length - 1));
        fs.appendFileSync(file, line.slice(0, cut));
        if (random() < 0.5) fs.appendFileSync(file, line.slice(cut));
        log = new TraceLog(file);
      } else if (op < 0.68) {
        // The next build: repair (cuts a torn tail) and go on appending.
        log.close();
        log = new TraceLog(file);
        log.repair();
      } else if (op < 0.73) {
        // Truncated anywhere (a line cut in two, bytes of a multibyte name included).
        log.close();
        fs.truncateSync(file, Math.floor(random() * fs.statSync(file).size));
        log = new TraceLog(file);
        log.repair();
      } else if (op < 0.8) {
        // One earlier byte rewritten in place, the size unchanged.
        log.close();
        const size = fs.statSync(file).size;
        if (size > 0) {
          const fd = fs.openSync(file, 'r+');
          fs.writeSync(fd, pick(['x', '"', '{', '\n', '1']), Math.floor(random() * size));
          fs.closeSync(fd);
        }
        log = new TraceLog(file);
        log.repair();
      } else if (op < 0.86) {
        // Compaction: the live records written anew (a new inode), then more appends.
        log.close();
        const body = [
          JSON.stringify({ format: TRACE_FORMAT }),
          ...[...log.records.values()].map((r) => JSON.stringify(r)),
        ];
        fs.writeFileSync(`${file}.tmp`, body.join('\n') + '\n');
        fs.renameSync(`${file}.tmp`, file);
        log = new TraceLog(file);
      } else if (op < 0.88) {
        // Another format version: everything rebuilds, the log starts again.
        log.close();
        fs.writeFileSync(file, JSON.stringify({ format: TRACE_FORMAT + 1 }) + '\n');
        log = new TraceLog(file);
        log.repair();
      }
      // The server's read (kept, extended or whole) against a fresh parse of the whole file.
      const got = readParsedGrowing(file, parse, extend, freeze)!;
      const want = parseTrace(fs.readFileSync(file, 'utf8'));
      assert.deepEqual(plain(got), plain(want), `seed ${seed}, step ${step}`);
    }
    log.close();
  }
  assert.ok(extended > 200, `the appended lines alone were parsed ${extended} times`);
  assert.ok(whole > 50, `the whole file was parsed ${whole} times`);
});

test('extendTrace does not extend a parse that ended mid-line, in another format or empty', () => {
  const good = parseTrace(`${JSON.stringify({ format: TRACE_FORMAT })}\n${JSON.stringify(rec('a', 'k', 1))}\n`);
  assert.notEqual(extendTrace(good, `${JSON.stringify(rec('b', 'k', 2))}\n`), null);
  assert.equal(good.records.size, 1, 'the kept parse is not changed');
  assert.equal(extendTrace(parseTrace(`${JSON.stringify({ format: TRACE_FORMAT })}\n{"na`), 'me":1}\n'), null);
  assert.equal(extendTrace(parseTrace(`${JSON.stringify({ format: 0 })}\n`), '{}\n'), null);
  assert.equal(extendTrace(parseTrace(''), `${JSON.stringify({ format: TRACE_FORMAT })}\n`), null);
});
