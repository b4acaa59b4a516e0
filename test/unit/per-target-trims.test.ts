// Per-target work the main thread no longer does on a build from clean, and what each keeps:
//   - a cache the build created answers a miss without looking (output-cache.ts emptyAtStart),
//     but still serves what this process wrote;
//   - a target with nothing to log and no old log costs no look at logs/ (report/rule-log.ts);
//   - a commit's own move needs its source: a missing one is an error, where only a journal's
//     replay after a crash skips a move already made (state/commit-outputs.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { ruleLogsPresent, writeRuleLog } from '../../packages/engine/src/report/rule-log.ts';
import { outputRecords } from '../../packages/engine/src/state/commit-outputs.ts';
import type { TargetRecord } from '../../packages/engine/src/state/trace-log.ts';
import { EngineWriteError } from '../../packages/engine/src/util/write-error.ts';
import { commitRig } from '../fixtures/commit/commit-rig.ts';

const tmpRoot = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-trims-'));

function entry(key: string) {
  return {
    target: 't',
    key,
    outputs: [{ path: 'out/t.txt', sha256: 'a'.repeat(64), size: 1, dir: false }],
    result: 'ok' as const,
    rule: { name: 'r', version: 1 },
  };
}

test('a cache created for this build misses without looking, serves what this process stored, and looks again once the build ends', () => {
  const root = tmpRoot();
  try {
    const dir = path.join(root, 'cache');
    const other = new OutputCache(dir); // another process sharing the folder
    other.putEntry(entry('k-other'));
    const cache = new OutputCache(dir);
    assert.ok(cache.get('k-other'), 'an ordinary cache reads the entry');
    cache.emptyAtStart = true;
    assert.equal(
      cache.get('k-other'),
      null,
      'a build that created the cache takes it as empty: a miss, never a wrong entry',
    );
    other.putEntry(entry('k-mine')); // as a rule worker of this build writes it
    cache.stored(entry('k-mine')); // …and tells the engine
    assert.equal(cache.get('k-mine')?.key, 'k-mine', 'what this process stored is served');
    cache.emptyAtStart = false;
    assert.equal(cache.get('k-other')?.key, 'k-other');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('rule logs: a listed old log is removed when a rule logs nothing; a new one is written and then known; no folder means none', () => {
  const root = tmpRoot();
  try {
    assert.deepEqual(ruleLogsPresent(root), new Set(), 'no logs/ folder: no logs');
    fs.mkdirSync(path.join(root, 'logs'));
    fs.writeFileSync(path.join(root, 'logs', 'old.log'), 'stale\n');
    const present = ruleLogsPresent(root)!;
    assert.deepEqual(present, new Set(['old.log']));
    writeRuleLog(root, 'old', [], present);
    assert.equal(
      fs.existsSync(path.join(root, 'logs', 'old.log')),
      false,
      'the old log of a rule that logged nothing is gone',
    );
    writeRuleLog(root, 'new', ['one line'], present);
    assert.equal(fs.readFileSync(path.join(root, 'logs', 'new.log'), 'utf8'), 'one line\n');
    writeRuleLog(root, 'new', [], present);
    assert.equal(
      fs.existsSync(path.join(root, 'logs', 'new.log')),
      false,
      'a log written in this build is known, and removed',
    );
    // A target whose log sits in a subfolder is looked up as before.
    fs.mkdirSync(path.join(root, 'logs', 'grp'));
    fs.writeFileSync(path.join(root, 'logs', 'grp', 'x.log'), 'stale\n');
    writeRuleLog(root, 'grp/x', [], present);
    assert.equal(fs.existsSync(path.join(root, 'logs', 'grp', 'x.log')), false);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a commit whose output vanished before its move is an engine write error naming it, not a record of a file that is not there', () => {
  const root = tmpRoot();
  const { tmp, committer, trace } = commitRig(root, true);
  try {
    const hashed = {
      path: 'out/t.txt',
      tmp: path.join(tmp, 'gone-0-t.txt'), // never written: the rule's output is not there
      dir: false,
      sha256: 'a'.repeat(64),
      size: 1,
      files: { '': ['a'.repeat(64), 1, 0n, 0n, 0n] as [string, number, bigint, bigint, bigint] },
      statTimeNs: 0n,
    };
    const record = {
      name: 't',
      key: 'k',
      fingerprint: { inputs: {} },
      outputs: outputRecords([hashed]),
      result: 'ok',
      how: 'ran',
      ms: 1,
      at: '2026-01-01T00:00:00.000Z',
    } as unknown as TargetRecord;
    assert.throws(
      () => committer.commit(record, [hashed]),
      (e: unknown) => e instanceof EngineWriteError && /out\/t\.txt/.test(e.message),
    );
    assert.equal(trace.records.has('t'), false, 'nothing recorded');
  } finally {
    trace.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
