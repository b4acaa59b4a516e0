// In-memory tests of the target executor (packages/engine/src/executor/target-executor.ts): every
// port — rebuilder, rule runner, output cache, trace/committer, disk, clock, env, git — is a fake
// that records what it was asked, so decide → restore or run → commit → cache is checked without
// a workspace, a worker or a spawned CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TargetExecutor } from '../../packages/engine/src/executor/target-executor.ts';
import type { ExecutorPorts } from '../../packages/engine/src/executor/ports.ts';
import type { Decision } from '../../packages/engine/src/rebuild/decide.ts';
import type { ResolvedPipeline, ResolvedTarget } from '../../packages/engine/src/graph/resolved.ts';
import type { Fingerprint } from '../../packages/engine/src/hash/fingerprint.ts';
import type { CacheEntry } from '../../packages/engine/src/cache/output-cache.ts';
import type { HashedOutput } from '../../packages/engine/src/runner/protocol.ts';
import type { RuleJob, RuleOutcome, RuleRunner, RunTarget } from '../../packages/engine/src/runner/rule-runner.ts';
import type { TargetRecord } from '../../packages/engine/src/state/trace-log.ts';
import type { BuildEvent } from '../../packages/engine/src/report/events.ts';
import type { BuildState, Slots } from '../../packages/engine/src/scheduler/scheduler.ts';
import { check } from '../../packages/engine/src/api/index.ts';
import { CompileError } from '../../packages/engine/src/config/compile-module.ts';
import { EngineWriteError } from '../../packages/engine/src/util/write-error.ts';

const SECRET = 'sk-test-0123456789';
const SHA = 'a'.repeat(64);

const target = (over: Partial<ResolvedTarget> = {}): ResolvedTarget => ({
  name: 'scores',
  rule: 'rules/score.ts',
  gate: false,
  inputs: [{ group: 'raw', items: [{ kind: 'file', path: 'data/raw.jsonl' }] }],
  outputs: [{ path: 'data/scores.json', dir: false }],
  params: ['score.n'],
  args: { mode: 'fast' },
  env: ['MODE'],
  secrets: ['API_KEY'],
  deps: [],
  ...over,
});

const fp: Fingerprint = {
  format: 2,
  rule: 'rules/score.ts',
  code: { 'rules/score.ts': SHA },
  params: { 'score.n': 3 },
  args: { mode: 'fast' },
  env: { MODE: null },
  profile: 'dev',
  inputs: { raw: { 'data/raw.jsonl': SHA } },
  outputs: ['data/scores.json'],
};
const record = (over: Partial<TargetRecord> = {}): TargetRecord => ({
  name: 'scores',
  key: 'k1',
  fingerprint: fp,
  outputs: [{ path: 'data/scores.json', sha256: SHA, size: 2, dir: false }],
  result: 'ok',
  how: 'ran',
  ms: 1,
  at: '2026-11-26T00:00:00.000Z',
  ...over,
});
const entry: CacheEntry = {
  format: 1,
  target: 'scores',
  key: 'k1',
  outputs: record().outputs,
  result: 'ok',
  summary: 'from cache',
  rule: { name: 'score', version: 1 },
};
const hashed = (tmp: string, sha = SHA): HashedOutput => ({
  path: 'data/scores.json',
  tmp,
  dir: false,
  sha256: sha,
  size: 2,
  files: { '': [sha, 2, 0n, 0n, 0n] },
  statTimeNs: 0n,
});
const reasons = [{ kind: 'never-built' as const }];

/** Ports that record every call in `calls`, in order. */
function rig(
  decision: Decision,
  opts: {
    result?: RuleOutcome;
    materializes?: boolean;
    usesLocalSlot?: boolean;
    /** The runner holds the job a while before it starts it (the worker pool's hand-off) and says so. */
    startsLater?: boolean;
    elsewhere?: CacheEntry;
    previous?: TargetRecord;
  } = {},
) {
  const calls: string[] = [];
  const events: BuildEvent[] = [];
  const jobs: RuleJob[] = [];
  const commits: TargetRecord[] = [];
  const failures: TargetRecord[] = [];
  const stored: { key: string; result: string; sources: string[] }[] = [];
  const reports: { error: string; log_tail: string[] }[] = [];
  const ruleLogs: string[][] = [];
  const dropped: string[] = [];
  let t = 0;
  const targets: RunTarget[] = [];
  const runner: RuleRunner = {
    usesLocalSlot: opts.usesLocalSlot ?? true,
    run: async (job, hooks) => {
      calls.push('run');
      jobs.push(job);
      if (opts.startsLater) {
        calls.push(`started told yet: ${events.some((e) => e.event === 'start')}`);
        await new Promise((r) => setImmediate(r));
        t += 1000; // a second waiting behind another rule
        hooks.started!();
      }
      hooks.log(`calling the API with ${SECRET}`);
      return (
        opts.result ?? {
          ok: true,
          value: {
            rule: { name: 'score', version: 1 },
            summary: `used ${SECRET}`,
            outputs: job.outputs.map((o) => hashed(o.tmp)),
          },
        }
      );
    },
    abortAll: async () => {},
    close: async () => {},
  };
  const ports: ExecutorPorts = {
    rebuilder: {
      decide: async () => {
        calls.push('decide');
        return decision;
      },
      resolveInputs: async () => ({ raw: ['data/raw.jsonl'] }),
    },
    compile: async (rule) => {
      calls.push('compile');
      return `/ws/.rc1/compiled/${rule}.mjs`;
    },
    runners: {
      for: (target) => {
        targets.push(target);
        return runner;
      },
      abortAll: async () => {
        calls.push('abort');
      },
      close: async () => {},
    },
    cache: {
      dir: '/ws/.rc1/cache',
      lookup: async () => {
        calls.push('lookup');
        return opts.elsewhere ?? null;
      },
      materialize: (_e, tmpOf) => {
        calls.push('materialize');
        tmpOf('data/scores.json');
        return opts.materializes ?? true;
      },
      put: (e, sourceOf) => {
        calls.push('cache-put');
        stored.push({ key: e.key, result: e.result, sources: e.outputs.map(sourceOf) });
      },
      stored: (e) => {
        calls.push('cache-stored');
        stored.push({ key: e.key, result: e.result, sources: [] });
      },
    },
    state: {
      previous: () => opts.previous,
      commit: (r) => {
        calls.push('commit');
        commits.push(r);
      },
      recordFailure: (r) => {
        calls.push('record-failure');
        failures.push(r);
      },
    },
    disk: {
      tmpDir: '/ws/.rc1/tmp',
      tempPaths: () => ({ prefix: '7-1-', of: (p) => `/ws/.rc1/tmp/7-1-0-${p.split('/').pop()}` }),
      dropTemp: (prefix) => {
        calls.push('drop-temp');
        dropped.push(prefix);
      },
      hashOutput: (o) => hashed(o.tmp),
      writeRuleLog: (_t, lines) => {
        ruleLogs.push([...lines]);
      },
      ruleLogPath: (n) => `.rc1/logs/${n}.log`,
      writeErrorReport: (r) => {
        calls.push('error-report');
        reports.push(r);
        return 'reports/ERROR_1.json';
      },
    },
    job: {
      root: '/ws',
      profile: 'dev',
      stateDirOf: (n) => `/ws/.rc1/state/${n}`,
      paramsOf: () => ({ score: { n: 3 } }),
      locateParam: async (k) => `configs/dev.yaml (${k})`,
      forced: new Set(),
    },
    env: { MODE: 'fast', API_KEY: SECRET, UNRELATED: 'x' },
    clock: { now: () => (t += 10), date: () => new Date('2026-11-26T12:00:00.000Z') },
    git: {
      start: () => {
        calls.push('git-start');
      },
      get: async () => ({ commit: 'c0ffee', dirty: false }),
    },
    emit: (e) => events.push(e),
    counts: { ran: 0, restored: 0, upToDate: 0, failed: 0, gateFailed: 0, blocked: 0 },
  };
  return { ports, runner, targets, calls, events, jobs, commits, failures, stored, reports, ruleLogs, dropped };
}

function slots(): Slots & { held: number; taken: number } {
  const s = {
    held: 0,
    taken: 0,
    acquire: async () => {
      s.held++;
      s.taken++;
    },
    release: () => {
      s.held--;
    },
  };
  return s;
}
/** The pipeline the executor reads: the target map and the producers of files (no other field is used). */
const pipelineOf = (...ts: ResolvedTarget[]): ResolvedPipeline =>
  ({ targets: new Map(ts.map((x) => [x.name, x])), producers: new Map() }) as unknown as ResolvedPipeline;
const going: BuildState = { interrupted: false, halted: false };

async function execute(r: ReturnType<typeof rig>, t = target(), state: BuildState = going) {
  const sl = slots();
  const outcome = await new TargetExecutor(pipelineOf(t), r.ports).execute(t.name, sl, state);
  return { outcome, slots: sl };
}

test('a fresh target is up to date: no rule runs, nothing is committed or stored', async () => {
  const r = rig({ kind: 'fresh', key: 'k1', fp, record: record() });
  const { outcome, slots: sl } = await execute(r);
  assert.equal(outcome, 'up-to-date');
  assert.deepEqual(r.calls, ['decide']);
  assert.equal(sl.taken, 0);
  assert.equal(r.ports.counts.upToDate, 1);
});

test('a recorded gate failure with the same fingerprint is replayed, not rerun', async () => {
  const r = rig({
    kind: 'fresh',
    key: 'k1',
    fp,
    record: record({ result: 'gate-failed', checks: [check('acc', 0.1, '>=', 0.9)] }),
  });
  const { outcome } = await execute(r, target({ gate: true }));
  assert.equal(outcome, 'gate-failed');
  assert.deepEqual(r.calls, ['decide']);
  assert.ok(r.events.some((e) => e.event === 'gate' && e.replayed && !e.pass));
});

test('a restore decision copies the cached outputs and commits them without running the rule or taking a slot', async () => {
  const r = rig({ kind: 'restore', key: 'k1', fp, entry, reasons });
  const { outcome, slots: sl } = await execute(r);
  assert.equal(outcome, 'restored');
  assert.deepEqual(r.calls, ['decide', 'materialize', 'commit']);
  assert.equal(sl.taken, 0);
  assert.equal(r.commits[0]!.how, 'restored');
  assert.equal(r.commits[0]!.summary, 'from cache');
  assert.equal(r.commits[0]!.at, '2026-11-26T12:00:00.000Z');
  assert.equal(r.ports.counts.restored, 1);
});

test('a corrupt cache entry is dropped and the rule runs instead', async () => {
  const r = rig({ kind: 'restore', key: 'k1', fp, entry, reasons }, { materializes: false });
  const { outcome } = await execute(r);
  assert.equal(outcome, 'ran');
  assert.deepEqual(r.calls, [
    'decide',
    'materialize',
    'drop-temp',
    'compile',
    'git-start',
    'run',
    'commit',
    'cache-put',
  ]);
  assert.ok(r.events.some((e) => e.event === 'warning' && /corrupt/.test(e.message)));
});

test('a local miss that another cache tier holds is restored from it, not run', async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons }, { elsewhere: entry });
  const { outcome, slots: sl } = await execute(r);
  assert.equal(outcome, 'restored');
  assert.deepEqual(r.calls, ['decide', 'lookup', 'materialize', 'commit']);
  assert.equal(sl.taken, 0);
  assert.deepEqual(r.jobs, []);
});

test('a run decision runs the rule in a slot with its env, params and absolute inputs, commits, then stores the outputs in the cache', async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons });
  const { outcome, slots: sl } = await execute(r);
  assert.equal(outcome, 'ran');
  assert.deepEqual(r.calls, ['decide', 'lookup', 'compile', 'git-start', 'run', 'commit', 'cache-put']);
  assert.deepEqual([sl.taken, sl.held], [1, 0]);
  const job = r.jobs[0]!;
  assert.deepEqual(job.env, { MODE: 'fast', API_KEY: SECRET }); // declared names only, from the injected env
  assert.deepEqual(job.inputs, { raw: ['/ws/data/raw.jsonl'] });
  assert.deepEqual(job.params, { score: { n: 3 } });
  assert.equal(job.stateDir, '/ws/.rc1/state/scores');
  assert.deepEqual(r.targets, [{ name: 'scores', secrets: ['API_KEY'] }]); // the runner is chosen by the target's executor
  assert.deepEqual(job.outputs, [{ path: 'data/scores.json', dir: false, tmp: '/ws/.rc1/tmp/7-1-0-scores.json' }]);
  assert.equal(r.commits[0]!.result, 'ok');
  assert.equal(r.commits[0]!.ms, 10);
  assert.equal(r.commits[0]!.summary, 'used ***'); // secrets redacted from what is recorded
  assert.deepEqual(r.stored, [{ key: 'k1', result: 'ok', sources: ['/ws/data/scores.json'] }]);
  assert.deepEqual(r.ruleLogs, [['calling the API with ***']]);
  assert.equal(r.ports.counts.ran, 1);
});

test('a worker that stored the objects and wrote the entry itself: the entry is announced, not copied again; a target with secrets gets no cache key', async () => {
  const r = rig(
    { kind: 'run', key: 'k1', fp, reasons },
    {
      result: {
        ok: true,
        value: {
          rule: { name: 'score', version: 1 },
          cached: true,
          outputs: [hashed('/ws/.rc1/tmp/7-1-0-scores.json')],
        },
      },
    },
  );
  await execute(r, target({ secrets: [] }));
  assert.equal(r.jobs[0]!.cacheKey, 'k1');
  assert.deepEqual(r.calls, ['decide', 'lookup', 'compile', 'git-start', 'run', 'commit', 'cache-stored']);

  const s = rig({ kind: 'run', key: 'k1', fp, reasons });
  await execute(s);
  assert.equal(s.jobs[0]!.cacheKey, undefined); // its summary may need redacting: the engine writes the entry
});

test('a rebuild whose outputs equal the previous record says so (early cutoff); its explain event names the root cause', async () => {
  const r = rig(
    { kind: 'run', key: 'k2', fp, reasons: [{ kind: 'param-changed', key: 'score.n', old: 2, new: 3 }] },
    { previous: record() },
  );
  await execute(r);
  const done = r.events.find((e) => e.event === 'done');
  assert.ok(done && done.event === 'done' && done.unchanged === true);
  const explain = r.events.find((e) => e.event === 'explain');
  assert.ok(explain && explain.event === 'explain' && explain.root);

  const first = rig({ kind: 'run', key: 'k1', fp, reasons });
  await execute(first);
  const d1 = first.events.find((e) => e.event === 'done');
  assert.ok(d1 && d1.event === 'done' && d1.unchanged === undefined);
});

test('a job its runner schedules elsewhere (a batch system) takes no -j slot', async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons }, { usesLocalSlot: false });
  const { outcome, slots: sl } = await execute(r);
  assert.equal(outcome, 'ran');
  assert.equal(sl.taken, 0);
  assert.deepEqual(r.calls, ['decide', 'lookup', 'compile', 'git-start', 'run', 'commit', 'cache-put']);
});

test("a rule's start is told when its runner starts it, not when the job is handed over, and its time counts from then", async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons }, { startsLater: true });
  assert.equal((await execute(r)).outcome, 'ran');
  assert.ok(r.calls.includes('started told yet: false'), 'no start event while the job waited');
  assert.deepEqual(
    r.events.map((e) => e.event),
    ['explain', 'start', 'log', 'done'],
  );
  assert.equal(r.commits[0]!.ms, 10, "the second it waited is not the rule's time");
  // A runner that never says (the default above): the start is told at the hand-over.
  const plain = rig({ kind: 'run', key: 'k1', fp, reasons });
  await execute(plain);
  assert.deepEqual(
    plain.events.map((e) => e.event),
    ['explain', 'start', 'log', 'done'],
  );
});

test('a failed rule commits and stores nothing: temp outputs dropped, the failure recorded, a redacted error report written', async () => {
  const r = rig(
    { kind: 'run', key: 'k1', fp, reasons },
    { result: { ok: false, error: { kind: 'rule-error', message: `401 for key ${SECRET}` } } },
  );
  const { outcome, slots: sl } = await execute(r);
  assert.equal(outcome, 'failed');
  assert.deepEqual(r.calls, [
    'decide',
    'lookup',
    'compile',
    'git-start',
    'run',
    'drop-temp',
    'record-failure',
    'error-report',
  ]);
  assert.equal(sl.held, 0);
  assert.deepEqual(r.commits, []);
  assert.deepEqual(r.stored, []);
  assert.equal(r.failures[0]!.result, 'failed');
  assert.equal(r.failures[0]!.error, '401 for key ***');
  assert.equal(r.reports[0]!.error, '401 for key ***');
  const fail = r.events.find((e) => e.event === 'fail');
  assert.ok(fail && fail.event === 'fail' && fail.log === '.rc1/logs/scores.log; error report reports/ERROR_1.json');
  assert.equal(r.ports.counts.failed, 1);
});

test('a param error names where each key is set', async () => {
  const r = rig(
    { kind: 'run', key: 'k1', fp, reasons },
    {
      result: {
        ok: false,
        error: { kind: 'param-error', message: 'bad', paramIssues: [{ key: 'score.n', message: 'expected a number' }] },
      },
    },
  );
  await execute(r);
  assert.equal(
    r.reports[0]!.error,
    'invalid config for scores (checked by rules/score.ts):\n  configs/dev.yaml (score.n): score.n: expected a number',
  );
});

test('a gate whose checks fail is committed and cached as gate-failed', async () => {
  const r = rig(
    { kind: 'run', key: 'k1', fp, reasons },
    {
      result: {
        ok: true,
        value: {
          rule: { name: 'score', version: 1 },
          checks: [check('acc', 0.1, '>=', 0.9)],
          outputs: [hashed('/ws/.rc1/tmp/7-1-0-scores.json')],
        },
      },
    },
  );
  const { outcome } = await execute(r, target({ gate: true }));
  assert.equal(outcome, 'gate-failed');
  assert.equal(r.commits[0]!.result, 'gate-failed');
  assert.equal(r.stored[0]!.result, 'gate-failed');
  assert.equal(r.ports.counts.gateFailed, 1);
});

test('after an interruption a returning rule commits nothing; after a halt its temp outputs are dropped too', async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons });
  assert.equal((await execute(r, target(), { interrupted: true, halted: false })).outcome, 'failed');
  assert.deepEqual(r.calls, ['decide', 'lookup', 'compile']); // the slot came after the interruption: the rule never started

  let state = { interrupted: false, halted: false };
  const h = rig({ kind: 'run', key: 'k1', fp, reasons });
  const run = h.runner.run;
  h.runner.run = async (job, hooks, tg) => {
    const res = await run(job, hooks, tg);
    state = { interrupted: false, halted: true };
    return res;
  };
  const sl = slots();
  const outcome = await new TargetExecutor(pipelineOf(target()), h.ports).execute('scores', sl, {
    get interrupted() {
      return state.interrupted;
    },
    get halted() {
      return state.halted;
    },
  });
  assert.equal(outcome, 'failed');
  assert.deepEqual(h.calls, ['decide', 'lookup', 'compile', 'git-start', 'run', 'drop-temp']);
  assert.deepEqual(h.commits, []);
});

test('a rule that does not compile fails its target; an engine write error is thrown to halt the build', async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons });
  r.ports.compile = async () => {
    throw new CompileError('rules/score.ts', 'rules/score.ts:3:1: Unexpected "}"');
  };
  assert.equal((await execute(r)).outcome, 'failed');
  const fail = r.events.find((e) => e.event === 'fail');
  assert.ok(fail && fail.event === 'fail' && fail.error.startsWith('rules/score.ts does not compile:'));

  const w = rig({ kind: 'run', key: 'k1', fp, reasons });
  const full = Object.assign(new Error('no space'), { code: 'ENOSPC' });
  w.ports.state.commit = () => {
    throw new EngineWriteError('the output', '/ws/data/scores.json', full, '/ws');
  };
  await assert.rejects(execute(w), EngineWriteError);
  assert.deepEqual(w.stored, []); // nothing cached for an output that was never committed
});

test('cancel asks the runner to stop its rules', async () => {
  const r = rig({ kind: 'run', key: 'k1', fp, reasons });
  await new TargetExecutor(pipelineOf(), r.ports).cancel();
  assert.deepEqual(r.calls, ['abort']);
});
