// markUsed (src/cache/cache-gc.ts): an entry's mtime is its last use; entries the build itself
// wrote already carry this build's time and are not touched a second time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { markUsed } from '../../packages/engine/src/cache/cache-gc.ts';
import { OutputCache } from '../../packages/engine/src/cache/output-cache.ts';

test('markUsed touches the entries it is given, except those this process wrote', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-mark-used-'));
  try {
    const cache = new OutputCache(dir);
    const old = new Date('2020-01-01T00:00:00Z');
    const entry = (key: string): string => {
      cache.putEntry({ target: 't', key, outputs: [], result: 'ok' });
      fs.utimesSync(cache.entryPath(key), old, old);
      return cache.entryPath(key);
    };
    const mine = entry('a'.repeat(64));
    const other = entry('b'.repeat(64));
    cache.written.delete('b'.repeat(64)); // as if an earlier build had written it
    const now = new Date('2024-06-01T00:00:00Z');
    markUsed(cache, ['a'.repeat(64), 'b'.repeat(64), 'c'.repeat(64)], now);
    assert.equal(fs.statSync(mine).mtime.getTime(), old.getTime(), 'written by this process: left alone');
    assert.equal(fs.statSync(other).mtime.getTime(), now.getTime(), 'an older entry is marked used now');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
