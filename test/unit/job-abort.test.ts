// A rule job's stop request (packages/engine/src/runner/job-abort.ts) and ctx.signal through the
// rule harness: the signal is made only when a rule reads ctx.signal, a stop asked before that
// gives a signal already aborted, a stop asked after it fires the signal's abort event, and the
// harness sees a stop without making the signal.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { defineRule } from '../../packages/engine/src/api/index.ts';
import { JobAbort } from '../../packages/engine/src/runner/job-abort.ts';
import { type RuleInvocation, invokeRule } from '../../packages/engine/src/runner/rule-harness.ts';

test('a stop asked before the rule reads ctx.signal gives it a signal that is already aborted', () => {
  const a = new JobAbort();
  assert.equal(a.aborted(), false);
  a.abort();
  assert.equal(a.aborted(), true);
  assert.equal(a.signal.aborted, true);
  assert.equal(a.signal, a.signal, 'one signal per job');
});

test('a stop asked after the rule read ctx.signal fires its abort event once', () => {
  const a = new JobAbort();
  const s = a.signal;
  let fired = 0;
  s.addEventListener('abort', () => fired++);
  assert.equal(s.aborted, false);
  a.abort();
  a.abort();
  assert.equal(s.aborted, true);
  assert.equal(fired, 1);
});

/** Runs `run` under the harness with `abort` as the job's; `seen.reads` counts reads of the hooks' signal. */
async function invoke(
  run: Parameters<typeof defineRule>[0]['run'],
  abort: JobAbort,
  seen = { reads: 0 },
): Promise<{ reads: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-job-abort-'));
  try {
    const inv: RuleInvocation = {
      target: 't',
      gate: false,
      ruleFile: 'rules/t.ts',
      root: dir,
      stateDir: path.join(dir, '.state'),
      profile: 'dev',
      params: {},
      args: {},
      forced: false,
      codeHash: '0'.repeat(64),
      env: {},
      inputs: {},
      outputs: [{ path: 'out.txt', dir: false, tmp: path.join(dir, 'p-0-out.txt') }],
      tmpDir: dir,
      tmpPrefix: 'p-',
    };
    await invokeRule({ default: defineRule({ name: 't', version: 1, run }) }, inv, {
      log: () => {},
      progress: () => {},
      get signal() {
        seen.reads++;
        return abort.signal;
      },
      aborted: () => abort.aborted(),
    });
    return seen;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('a rule that never reads ctx.signal runs without one being made', async () => {
  const a = new JobAbort();
  const { reads } = await invoke((ctx) => fs.writeFileSync(ctx.output('out.txt'), 'x'), a);
  assert.equal(reads, 0);
});

test('a rule that reads ctx.signal gets the job’s, and sees the stop asked while it runs', async () => {
  const a = new JobAbort();
  const seen = { reads: 0 };
  let abortedInRule: boolean | undefined;
  await assert.rejects(
    invoke(
      (ctx) => {
        const s = ctx.signal;
        a.abort(); // the build stops the job while the rule runs
        abortedInRule = s.aborted;
        fs.writeFileSync(ctx.output('out.txt'), 'x');
      },
      a,
      seen,
    ),
    /^Error: interrupted$/,
  );
  assert.equal(abortedInRule, true);
  assert.equal(seen.reads, 1);
});

test('the harness ends a job stopped during its rule as interrupted without making the signal', async () => {
  const a = new JobAbort();
  const seen = { reads: 0 };
  await assert.rejects(
    invoke(
      (ctx) => {
        fs.writeFileSync(ctx.output('out.txt'), 'x');
        a.abort();
      },
      a,
      seen,
    ),
    /^Error: interrupted$/,
  );
  assert.equal(seen.reads, 0);
});
