// test/run-tier.ts end to end: real test files in a temp dir, run in shared processes. A file's
// root-level before() runs before its tests even when other files share its process, a failing
// test fails the run (exit 1) and is named, and an own-process file runs alone. A process whose
// exit status says 0 while its tests did not all run and pass (process.exit(0) at once or from a
// timer, `process.exitCode = 0` after a failure) fails the run, and so does one that hangs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO } from '../helpers/rig.ts';

const RUNNER = path.join(REPO, 'test', 'run-tier.ts');

function tier(files: Record<string, string>, ...args: string[]): { code: number; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-run-tier-'));
  try {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const r = spawnSync(process.execPath, ['--import', 'tsx', RUNNER, dir, ...args], {
      cwd: REPO,
      encoding: 'utf8',
    });
    return { code: r.status ?? -1, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const WITH_BEFORE = `import { before, test } from 'node:test';
import assert from 'node:assert/strict';
let ready = '';
before(async () => { await new Promise((r) => setTimeout(r, 10)); ready = 'yes'; });
test('before() ran first', () => assert.equal(ready, 'yes'));
`;
const PASSING = (n: number) => `import { test } from 'node:test';
test('passing ${n}', () => {});
`;

test('files share processes; root-level before() hooks run before their tests; all pass: exit 0', () => {
  const r = tier(
    { 'a.test.ts': PASSING(1), 'b.test.ts': WITH_BEFORE, 'c.test.ts': PASSING(2), 'notes.md': 'not a test' },
    '--jobs',
    '2',
  );
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /# 3 files in 2 processes \(2 at a time\): [\d.]+ s; all passed/);
  assert.match(r.out, /✔ before\(\) ran first/);
});

test('a failing test fails the run (exit 1) and is named; an own-process file runs alone', () => {
  const r = tier(
    {
      'a.test.ts': PASSING(1),
      'bad.test.ts': `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('two is three', () => assert.equal(2, 3));\n`,
      'own.test.ts': `// test-tier: own-process\n${PASSING(3)}`,
    },
    '--jobs',
    '1',
  );
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /✖ two is three/);
  assert.match(r.out, /# process 2 of 2 \(1 file: .*own\.test\.ts\): exit 0/);
  assert.match(r.out, /FAILED: process 1 /);
});

const FAILING_LATE = `import { test } from 'node:test';
import assert from 'node:assert/strict';
test('two is three, later', async () => { await new Promise((r) => setTimeout(r, 400)); assert.equal(2, 3); });
`;

test('a test file calling process.exit(0) ends its process early: the run fails naming the process and its files, exit 1', () => {
  const r = tier(
    {
      'a.test.ts': `import { test } from 'node:test';\ntest('exits', () => { process.exit(0); });\n`,
      'b.test.ts': `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('two is three', () => assert.equal(2, 3));\n`,
    },
    '--jobs',
    '1',
  );
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /FAILED: process 1 \(.*a\.test\.ts, .*b\.test\.ts\): it ended without the test summary/);
  assert.doesNotMatch(r.out, /all passed/);
});

test('a failed test then process.exitCode = 0: the process exits 0 but the run fails (exit 1) on its summary', () => {
  const r = tier(
    {
      'a.test.ts': `import { after, test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('two is three', () => assert.equal(2, 3));\nprocess.on('exit', () => { process.exitCode = 0; });\nafter(() => { process.exitCode = 0; });\n`,
    },
    '--jobs',
    '1',
  );
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /exit 0, [\d.]+ s/);
  assert.match(r.out, /FAILED: process 1 \(.*a\.test\.ts\): 1 test\(s\) failed/);
});

test('a passing test whose timer calls process.exit(0) while a slower test of another file fails: exit 1', () => {
  const r = tier(
    {
      'a.test.ts': `import { test } from 'node:test';\ntest('passes, exits soon', () => { setTimeout(() => process.exit(0), 100); });\n`,
      'b.test.ts': FAILING_LATE,
    },
    '--jobs',
    '1',
  );
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /FAILED: process 1 .*it ended without the test summary/);
});

test('a process that hangs (a leaked handle) is killed after --timeout-s and fails naming its files; the others still report', () => {
  const t0 = Date.now();
  const r = tier(
    {
      'a.test.ts': PASSING(1),
      'hang.test.ts': `// test-tier: own-process\r\nimport { test } from 'node:test';\r\ntest('leaks a timer', () => { setInterval(() => {}, 1000); });\r\n`,
    },
    '--jobs',
    '2',
    '--timeout-s',
    '10', // a budget every process gets: the passing one too has to start node and tsx on a loaded machine
  );
  assert.equal(r.code, 1, r.out);
  assert.ok(Date.now() - t0 < 60_000, 'the runner returned soon after the timeout');
  assert.match(r.out, /# process 2 of 2 \(1 file: .*hang\.test\.ts\)/, 'the CRLF own-process file ran alone');
  assert.match(r.out, /FAILED: process 2 \(.*hang\.test\.ts\): killed after 10 s/);
  assert.match(r.out, /# process 1 of 2 \(1 file: .*a\.test\.ts\): exit 0/);
});

test('bad usage is a clear error with exit 2', () => {
  const r = tier({ 'a.test.ts': PASSING(1) }, '--jobs', 'many');
  assert.equal(r.code, 2);
  assert.match(r.out, /--jobs takes a positive integer, got "many"/);
});
