// The fast tier's runner (test/run-tier.ts): how it deals test files to processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planShards } from '../run-tier.ts';

const f = (file: string, bytes: number, own = false) => ({ file, bytes, own });

test('files go largest first to the process with the fewest bytes so far; each process lists its files sorted', () => {
  const shards = planShards([f('a', 10), f('b', 50), f('c', 30), f('d', 25), f('e', 5)], 2);
  assert.deepEqual(
    shards.map((s) => ({ files: s.files, bytes: s.bytes })),
    [
      { files: ['a', 'b'], bytes: 60 },
      { files: ['c', 'd', 'e'], bytes: 60 },
    ],
  );
});

test('a file marked own-process gets a process of its own, after the shared ones; never more shared processes than files', () => {
  const shards = planShards([f('a', 10), f('slow', 99, true), f('b', 20)], 4);
  assert.deepEqual(
    shards.map((s) => s.files),
    [['b'], ['a'], ['slow']],
  );
});

test('the split depends on the files only, not on the order they are listed in', () => {
  const files = [f('x', 7), f('y', 7), f('z', 3), f('w', 12)];
  assert.deepEqual(planShards(files, 2), planShards([...files].reverse(), 2));
});
