// round1 and round2_pass (rules/round_gate.ts), compiled as the engine compiles it and run with a
// fake context on gate reports written as the engine writes them (target, profile, pass, checks):
//   gate reports + artifacts --> round1 --> round1.json --\
//   gate reports + artifacts -------------------------------> round2_pass
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { check, gatePasses, waive, type Check, type Rule } from '../../packages/engine/src/api/index.ts';
import { compileRule, runEvalRule } from '../helpers/evaluation-fixtures.ts';

let dir = '';
let rule: Rule;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-eval-rounds-'));
  rule = await compileRule('round_gate', dir);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ROUNDS = { round1: ['alpha', 'beta'], round2: ['alpha', 'beta', 'gamma'] };

/** A workspace with gate reports alpha, beta, gamma and one artifact; `waived` makes beta's check waived. */
function workspace(
  name: string,
  o: { profile?: string; waived?: boolean; failing?: boolean; lie?: boolean } = {},
): string {
  const root = join(dir, name);
  const profile = o.profile ?? 'dev';
  mkdirSync(root, { recursive: true });
  const report = (target: string, checks: Check[]) => {
    const path = join(root, `${target}.json`);
    writeFileSync(path, JSON.stringify({ extra: 1, target, profile, pass: gatePasses(checks), checks }));
    return path;
  };
  const betaCheck = check('live', false, '==', true, 'use the live judge');
  report('alpha', [
    check('spearman', o.failing ? 0.5 : 0.8, '>=', 0.75),
    { ...check('n', 10, '>', 0), ...(o.lie ? { value: 0 } : {}) },
  ]);
  report('beta', [o.waived ? waive(betaCheck, `profile ${profile}`) : check('live', true, '==', true)]);
  report('gamma', [check('cache_hit_rate', 0.1, '<', 0.95)]);
  writeFileSync(join(root, 'data.jsonl'), '{"x":1}\n');
  return root;
}

async function round(root: string, n: 1 | 2, profile = 'dev') {
  const reports = (n === 1 ? ROUNDS.round1 : ROUNDS.round2).map((t) => join(root, `${t}.json`));
  const run = await runEvalRule(rule, {
    params: { preflight: { rounds: ROUNDS } },
    root,
    profile,
    args: { round: n },
    outputs: [`round${n}.json`],
    inputs: {
      reports,
      artifacts: [join(root, 'data.jsonl')],
      ...(n === 2 ? { round1: [join(root, 'round1.json')] } : {}),
    },
  });
  const checks = run.result.checks!;
  if (n === 1)
    writeFileSync(
      join(root, 'round1.json'),
      JSON.stringify({ ...run.result.report, target: 'round1', profile, pass: gatePasses(checks), checks }),
    );
  return { ...run, pass: gatePasses(checks) };
}
const failed = (checks: Map<string, { status: string }>): string[] =>
  [...checks].filter(([, c]) => c.status === 'fail').map(([n]) => n);

test('round 1 re-states every gate check under <gate>.<check> with its value, and vouches for every file by sha256', async () => {
  const root = workspace('r1');
  const r1 = await round(root, 1);
  assert.equal(r1.pass, true);
  assert.deepEqual(
    [...r1.checks.keys()],
    [
      'reports.missing',
      'reports.profile_mismatch',
      'reports.inconsistent',
      'reports.not_passed',
      'alpha.spearman',
      'alpha.n',
      'beta.live',
    ],
  );
  assert.equal(r1.checks.get('alpha.spearman')!.value, 0.8);
  const vouched = (r1.result.report as { vouched: Record<string, string> }).vouched;
  assert.deepEqual(Object.keys(vouched), ['alpha.json', 'beta.json', 'data.jsonl']);
  assert.ok(Object.values(vouched).every((s) => /^[0-9a-f]{64}$/.test(s)));
});

test('round 1 fails when a gate of the round has no report, when a re-stated check fails, and when a report contradicts its own numbers', async () => {
  const root = workspace('r1-fail', { failing: true, lie: true });
  const r1 = await round(root, 1);
  assert.deepEqual(failed(r1.checks), ['reports.inconsistent', 'reports.not_passed', 'alpha.spearman', 'alpha.n']);
  assert.deepEqual(r1.checks.get('reports.inconsistent')!.value, ['alpha.n']);
  const missing = await runEvalRule(rule, {
    params: { preflight: { rounds: ROUNDS } },
    root,
    args: { round: 1 },
    outputs: ['round1.json'],
    inputs: { reports: [join(root, 'alpha.json')], artifacts: [] },
  });
  assert.deepEqual(missing.checks.get('reports.missing')!.value, ['beta']);
});

test('round 2 passes in dev with round-1 waivers listed as waived, never as passes', async () => {
  const root = workspace('r2-dev', { waived: true });
  assert.equal((await round(root, 1)).pass, true);
  const r2 = await round(root, 2);
  assert.equal(r2.pass, true);
  const w = r2.checks.get('waived_checks')!;
  assert.deepEqual([w.status, w.value], ['waived', 2]);
  assert.deepEqual((r2.result.report as { waived: string[] }).waived, ['round1: beta.live', 'beta.live']);
  assert.equal(r2.checks.get('beta.live')!.status, 'waived');
});

test('round 2 is refused in prod when any round-1 check was waived', async () => {
  const root = workspace('r2-prod', { profile: 'prod', waived: true });
  assert.equal((await round(root, 1, 'prod')).pass, true, 'round 1 itself lists the waiver');
  const r2 = await round(root, 2, 'prod');
  assert.equal(r2.pass, false);
  assert.deepEqual(failed(r2.checks), ['waived_checks']);
  assert.equal(r2.checks.get('waived_checks')!.status, 'fail');
});

test('round 2 passes in prod when nothing was waived, and fails when a vouched file changed after round 1', async () => {
  const root = workspace('r2-change', { profile: 'prod' });
  await round(root, 1, 'prod');
  assert.deepEqual(failed((await round(root, 2, 'prod')).checks), []);
  writeFileSync(join(root, 'data.jsonl'), '{"x":2}\n');
  const r2 = await round(root, 2, 'prod');
  assert.deepEqual(failed(r2.checks), ['vouched.changed']);
  assert.deepEqual(r2.checks.get('vouched.changed')!.value, ['data.jsonl']);
});

test('round 2 fails when round 1 did not pass or came from another profile', async () => {
  const root = workspace('r2-r1fail', { failing: true });
  await round(root, 1);
  assert.deepEqual(failed((await round(root, 2)).checks), [
    'round1.failed_checks',
    'reports.not_passed',
    'alpha.spearman',
  ]);
  const other = workspace('r2-profile');
  await round(other, 1, 'dev');
  const r2 = await round(other, 2, 'prod');
  assert.ok(failed(r2.checks).includes('round1.profile') && failed(r2.checks).includes('reports.profile_mismatch'));
});
