// The scoring targets end to end through the CLI, in temp workspaces holding the project's rules
// and configs/scoring*.yaml, declared the way rc1.build.ts declares them:
//   fixtures/scenarios.jsonl --> rollouts_shadow --> scores --> not_simulated_round1 / _round2
//                                       \--> probe_scorer
//   fixtures/runs.jsonl ------> rollouts_file   (the file source)
// Prod cases read fixture copies of dev outputs (fixtures/rollouts.jsonl, fixtures/scores.jsonl),
// so that only the gate under test runs in the prod profile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scoringRig, toJsonlText } from '../helpers/scoring-fixtures.ts';

const noKey = { JUDGE_KEY: '', REWARD_LIVE_MODE: '', RUN_MODE: 'dev' };

test('the dev build scores every rollout with the heuristic, byte-identically across workspaces, and the gates are waived', async () => {
  const a = await scoringRig();
  const b = await scoringRig();
  try {
    const ra = a.run([], noKey);
    assert.equal(ra.code, 0, ra.stdout + ra.stderr);
    assert.equal(b.run([], noKey).code, 0);
    for (const f of [
      'data/rollouts/shadow_rollouts.jsonl',
      'data/scores/scores.jsonl',
      'reports/unstable_samples.jsonl',
      'reports/scorer_metrics.json',
      'reports/preflight/scorer_probe.json',
      'reports/preflight/not_simulated_round1.json',
    ]) {
      assert.equal(a.read(f), b.read(f), `${f} differs between workspaces`);
    }
    const rollouts = a
      .read('data/rollouts/shadow_rollouts.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(rollouts.length, 24 * 4);
    assert.ok(rollouts.every((r) => r.source === 'synthetic'));
    const scores = a
      .read('data/scores/scores.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => s.rollout_id),
      rollouts.map((r) => r.rollout_id),
    );
    for (const s of scores) {
      assert.equal(s.status, 'scored');
      assert.equal(s.samples.length, 3);
      for (const x of s.samples)
        assert.deepEqual([x.provider, x.live, x.billable, x.cached], ['heuristic', false, false, false]);
      assert.equal(s.weight, s.unstable ? 0.5 : 1);
    }
    const unstable = a
      .read('reports/unstable_samples.jsonl')
      .trimEnd()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      unstable.map((u) => u.rollout_id),
      scores.filter((s) => s.unstable).map((s) => s.rollout_id),
    );
    assert.ok(unstable.every((u) => u.item_variance > 0.08));
    const m = JSON.parse(a.read('reports/scorer_metrics.json'));
    assert.deepEqual(
      [m.mode, m.calls, m.billable_calls, m.cache_hits, m.rps, m['429_rate'], m.avg_latency_ms, m.p95_latency_ms],
      ['heuristic', 288, 0, 0, null, null, null, null],
    );
    assert.equal(m.rollouts.synthetic, 96);
    for (const g of ['scorer_probe', 'not_simulated_round1', 'not_simulated_round2']) {
      const rep = JSON.parse(a.read(`reports/preflight/${g}.json`));
      assert.ok(rep.checks.length >= 3);
      for (const c of rep.checks) assert.deepEqual([c.status, c.waived], ['waived', 'profile dev'], `${g}: ${c.name}`);
    }
    assert.match(ra.stdout, /WAIVED \(profile dev\)/);
    assert.doesNotMatch(ra.stdout, /\spass\n/, 'no scoring gate check passes in dev: each is waived');
  } finally {
    a.cleanup();
    b.cleanup();
  }
});

test('in prod without a judge key, probe_scorer and scores fail with the missing variable named, and not_simulated rejects heuristic scores', async () => {
  const rig = await scoringRig();
  try {
    assert.equal(rig.run(['scores', 'rollouts_shadow'], noKey).code, 0);
    rig.write('fixtures/rollouts.jsonl', rig.read('data/rollouts/shadow_rollouts.jsonl'));
    rig.write('fixtures/scores.jsonl', rig.read('data/scores/scores.jsonl'));
    const prod = { ...noKey, RUN_MODE: 'prod' };
    const probe = rig.run(['probe_prod'], prod);
    assert.equal(probe.code, 2, probe.stdout + probe.stderr);
    assert.match(probe.stdout, /live_provider\s+false\s+==\s+true\s+FAIL/);
    assert.match(probe.stdout, /needs an API key in \$JUDGE_KEY, which is not set/);
    assert.doesNotMatch(probe.stdout, /WAIVED/);
    const report = JSON.parse(rig.read('reports/preflight/probe_prod.json'));
    assert.deepEqual(
      report.checks.map((c: { status: string }) => c.status),
      ['fail', 'fail', 'fail'],
    );

    const scores = rig.run(['scores_prod'], prod);
    assert.equal(scores.code, 1);
    assert.match(scores.stdout, /scoring: the live judge .* needs an API key in \$JUDGE_KEY/);
    assert.ok(!rig.exists('prod/scores.jsonl'), 'no scores are written in prod without the live judge');

    const asked = rig.run(['scores_prod'], { ...prod, REWARD_LIVE_MODE: '0' });
    assert.equal(asked.code, 1);
    assert.match(
      asked.stdout,
      /RUN_MODE=prod requires the live judge, but REWARD_LIVE_MODE=0 selects the heuristic provider/,
    );

    const ns = rig.run(['not_simulated_prod'], prod);
    assert.equal(ns.code, 2);
    assert.match(ns.stdout, /heuristic_samples\s+288\s+==\s+0\s+FAIL/);
  } finally {
    rig.cleanup();
  }
});

test('the file source builds rollouts from a model run, and a bad run line fails the target with file, line and field', async () => {
  const rig = await scoringRig();
  try {
    const scenarios = rig
      .read('fixtures/scenarios.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const runs = scenarios
      .slice(0, 3)
      .map((s) => ({ scenario_id: s.id, policy: 'qwen3-4b-sft', trajectory: s.reference }));
    rig.write('fixtures/runs.jsonl', toJsonlText(runs));
    rig.write('configs/scoring.yaml', rig.read('configs/scoring.yaml').replace('source: synthetic', 'source: file'));
    const ok = rig.run(['rollouts_file'], noKey);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const rs = rig
      .read('data/rollouts/file_rollouts.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rs.map((r) => [r.source, r.policy, r.success]),
      runs.map(() => ['file', 'qwen3-4b-sft', true]),
    );
    rig.write(
      'fixtures/runs.jsonl',
      `${toJsonlText(runs)}${JSON.stringify({ scenario_id: scenarios[0].id, policy: 'p', trajectory: { steps: [{ type: 'thought' }], final_answer: 'x' } })}\n`,
    );
    const bad = rig.run(['rollouts_file'], noKey);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stdout,
      /fixtures\/runs\.jsonl:4: trajectory\.steps\[0\]\.text: expected a string, got nothing \(the field is missing\)/,
    );
    assert.doesNotMatch(bad.stdout, /\n\s+at /, 'an expected data error prints no stack trace');
  } finally {
    rig.cleanup();
  }
});
