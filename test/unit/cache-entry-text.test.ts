// A cache entry's file is JSON.stringify of the entry, byte for byte, written without scanning its
// inline base64 (packages/engine/src/cache/output-cache.ts, entryText): the same bytes for every
// shape of entry, and the entry written by put() reads back and restores as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type CacheEntry, OutputCache, entryText } from '../../packages/engine/src/cache/output-cache.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

/** A deterministic random source (a test that fails prints the seed's case). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomEntry(r: () => number): CacheEntry {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const outputs = Array.from({ length: Math.floor(r() * 3) }, (_, i) => {
    const bytes = crypto.randomBytes(Math.floor(r() * 300));
    return { path: `out/"q\\${i}\n.txt`, sha256: sha256Hex(bytes), size: bytes.length, dir: false, bytes };
  });
  const inline: Record<string, string> = {};
  for (const o of outputs) if (r() < 0.7) inline[o.sha256] = o.bytes.toString('base64');
  if (r() < 0.1) inline['123'] = ''; // an integer-like key: ordered first, as JSON.stringify orders it
  const members: [string, unknown][] = [
    ['format', 2],
    ['target', pick(['t', 'ünï "quoted" \\ \u2028', ''])],
    ['key', sha256Hex(String(r()))],
    ['outputs', outputs.map(({ bytes: _, ...o }) => o)],
    ['result', pick(['ok', 'gate-failed'])],
    ['checks', pick([undefined, [{ name: 'n', ok: true, value: 0.5 }]])],
    ['summary', pick([undefined, 'a summary\nwith a line'])],
    ['rule', pick([undefined, { name: 'concat', version: 1 }])],
  ];
  // inline last (what putEntry writes), elsewhere, or absent
  const where = r();
  if (where < 0.6) members.push(['inline', inline]);
  else if (where < 0.8) members.splice(Math.floor(r() * members.length), 0, ['inline', inline]);
  else if (where < 0.9) members.push(['inline', {}]);
  if (r() < 0.2)
    for (let i = members.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
  return Object.fromEntries(members) as unknown as CacheEntry;
}

test('the entry text is JSON.stringify of the entry, byte for byte, for 2 000 random entries (inline last, elsewhere, empty, absent; undefined members; any key order)', () => {
  const r = rng(12);
  for (let i = 0; i < 2000; i++) {
    const e = randomEntry(r);
    assert.equal(entryText(e), JSON.stringify(e), `case ${i}`);
  }
  // Only inline, or inline after members that are all undefined.
  const only = { inline: { ab: 'QQ==' } } as unknown as CacheEntry;
  assert.equal(entryText(only), JSON.stringify(only));
  const undef = { summary: undefined, inline: { ab: 'QQ==' } } as unknown as CacheEntry;
  assert.equal(entryText(undef), JSON.stringify(undef));
});

test('an entry written by put() with inline outputs is that text, reads back and restores the bytes', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-entry-text-'));
  try {
    const cache = new OutputCache(path.join(root, 'cache'));
    const body = crypto.randomBytes(5000);
    const file = path.join(root, 'a.out');
    fs.writeFileSync(file, body);
    const sha = sha256Hex(body);
    cache.put(
      {
        target: 'a',
        key: 'k'.repeat(64),
        outputs: [{ path: 'out/a', sha256: sha, size: body.length, dir: false }],
        result: 'ok',
        summary: 'with "quotes"',
      },
      () => file,
    );
    const text = fs.readFileSync(cache.entryPath('k'.repeat(64)), 'utf8');
    assert.equal(text, JSON.stringify(JSON.parse(text)), 'the file is JSON.stringify of what it holds');
    const e = cache.get('k'.repeat(64))!;
    assert.equal(e.inline?.[sha], body.toString('base64'));
    const to = path.join(root, 'restored');
    assert.ok(cache.materialize(e, () => to));
    assert.deepEqual(fs.readFileSync(to), body);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
