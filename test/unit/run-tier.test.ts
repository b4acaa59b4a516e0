// The fast tier's runner (test/run-tier.ts): how it deals test files to processes, which files it
// runs alone, and when it trusts a process's report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OWN_PROCESS, planShards, reportProblems } from '../run-tier.ts';

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

const line = (o: object) => `${JSON.stringify(o)}\n`;
const SUMMARY = (fail: number, cancelled = 0) =>
  [
    `tests ${2 + fail}`,
    'suites 0',
    `pass 2`,
    `fail ${fail}`,
    `cancelled ${cancelled}`,
    'skipped 0',
    'todo 0',
    'duration_ms 12.5',
  ]
    .map((message) => line({ type: 'diagnostic', message }))
    .join('');
const PASSES =
  line({ type: 'pass', name: 'x', file: '/t/a.test.ts', nesting: 0 }) +
  line({ type: 'pass', name: 'y', file: '/t/b.test.ts', nesting: 0 });

test("a process's report passes only with its summary, fail 0, cancelled 0 and a test from each of its files", () => {
  assert.deepEqual(reportProblems(['/t/a.test.ts', '/t/b.test.ts'], PASSES + SUMMARY(0)), []);
  assert.match(reportProblems(['/t/a.test.ts', '/t/b.test.ts'], PASSES).join(), /ended without the test summary/);
  assert.match(
    reportProblems(['/t/a.test.ts', '/t/b.test.ts'], `${PASSES}{"type":"diagn`).join(),
    /without the test summary/,
  );
  assert.deepEqual(reportProblems(['/t/a.test.ts', '/t/b.test.ts'], PASSES + SUMMARY(1)), ['1 test(s) failed']);
  assert.deepEqual(reportProblems(['/t/a.test.ts', '/t/b.test.ts'], PASSES + SUMMARY(0, 2)), ['2 test(s) cancelled']);
  assert.match(
    reportProblems(['/t/a.test.ts', '/t/c.test.ts'], PASSES + SUMMARY(0)).join(),
    /no test reported by .*c\.test\.ts/,
  );
});

test('the own-process mark is found on a line of its own in LF and CRLF files, not inside another line', () => {
  assert.ok(OWN_PROCESS.test('// a\n// test-tier: own-process\nimport x;\n'));
  assert.ok(OWN_PROCESS.test('// a\r\n// test-tier: own-process\r\nimport x;\r\n'));
  assert.ok(!OWN_PROCESS.test("const s = '// test-tier: own-process';\n"));
});
