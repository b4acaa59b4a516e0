// OutputCache.put stores the objects and then the entry, with or without a remote tier listening
// (onPut): the entry is what a later restore looks up, for every target whose entry the engine
// writes itself (one with secrets, one run as a Slurm job).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { hashFileSync } from '../../packages/engine/src/hash/hash-file.ts';

test('put() writes the entry when no remote tier listens, and tells the remote tier when one does', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-cache-put-'));
  try {
    const file = path.join(dir, 'out.txt');
    fs.writeFileSync(file, 'hello\n');
    const sha = hashFileSync(file);
    const entry = (key: string) => ({
      target: 't',
      key,
      outputs: [{ path: 'out.txt', dir: false, sha256: sha, size: 6 }],
      result: 'ok' as const,
      rule: { name: 'r', version: 1 },
    });
    const alone = new OutputCache(path.join(dir, 'cache'));
    alone.put(entry('a'.repeat(64)), () => file);
    assert.ok(alone.has('a'.repeat(64)), 'the entry is written without a remote tier');
    const heard: string[] = [];
    alone.onPut = (e) => heard.push(e.key);
    alone.put(entry('b'.repeat(64)), () => file);
    assert.ok(alone.has('b'.repeat(64)));
    assert.deepEqual(heard, ['b'.repeat(64)]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
