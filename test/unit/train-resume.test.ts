// Exact resume through runTraining: N steps straight, and N/2 + interrupt + resume + N/2, give
// byte-identical weights, optimiser moments and metrics (wasm and cpu backends), also at a learning
// rate where the KL controller engages (so its replay of recent states must be restored); steps keep
// increasing; a resume under another config is refused with the --force hint; `forced` starts
// over and says where the old run went; a rerun of a completed run retrains nothing. Every
// metrics line has every field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TrainConfig } from '../../lib/train/index.ts';
import { syntheticRollouts } from '../../lib/rollouts/index.ts';
import { heuristicBase } from '../../lib/scoring/heuristic-provider.ts';
import { abortAfterStep, makeScenarios, smallConfig, trainDataWorkspace, trainIn } from '../helpers/train-fixtures.ts';

function workspace(): string {
  return trainDataWorkspace('rc1-train-');
}

async function train(root: string, config: TrainConfig, o: { abortAfterStep?: number; forced?: boolean } = {}) {
  return trainIn(root, config, {
    ...(o.forced === undefined ? {} : { forced: o.forced }),
    ...(o.abortAfterStep === undefined ? {} : { onLine: abortAfterStep(o.abortAfterStep) }),
  });
}

const sha = (p: string): string => createHash('sha256').update(fs.readFileSync(p)).digest('hex');
const work = (root: string, rel: string): string => path.join(root, '.rc1/state/train', rel);

for (const backend of ['wasm', 'cpu'] as const) {
  test(`${backend}: N steps straight and N/2 + interrupt + resume + N/2 give byte-identical weights, moments and metrics`, async () => {
    const config = smallConfig({
      train: { tfjs: { backend }, checkpoint: { every: 4, keep_last: 3 }, eval: { every: 4 } },
      ppo: { steps: 6 },
    });
    const a = workspace();
    const b = workspace();
    try {
      await train(a, config);
      // The build is interrupted once step 3 is logged (3 is not a checkpoint step): the engine stops
      // and checkpoints the last completed step itself.
      const first = await train(b, config, { abortAfterStep: 3 });
      assert.equal(first.result.interrupted, true);
      assert.equal(first.result.finalStep, 3);
      assert.match(first.lines.join('\n'), /interrupted: checkpointed the last completed step 3/);
      const second = await train(b, config);
      assert.equal(second.resumedFrom !== null, true);
      assert.match(
        second.lines.join('\n'),
        /resuming the interrupted run from .*step_00003 \(step 3; 3 metrics lines kept\)/,
      );
      for (const f of ['model.bin', 'optimizer.bin', 'reference.bin']) {
        assert.equal(
          sha(work(b, `checkpoints/rc1/step_00006/${f}`)),
          sha(work(a, `checkpoints/rc1/step_00006/${f}`)),
          f,
        );
      }
      const strip = (p: string): unknown[] =>
        fs
          .readFileSync(p, 'utf8')
          .trim()
          .split('\n')
          .map((l) => {
            const { time, throughput, updates_per_s, ...rest } = JSON.parse(l);
            void time;
            void throughput;
            void updates_per_s;
            return rest;
          });
      const mb = strip(path.join(second.out, 'metrics.jsonl'));
      assert.deepEqual(
        mb.map((m) => (m as { step: number }).step),
        [1, 2, 3, 4, 5, 6],
      );
      assert.deepEqual(mb, strip(work(a, 'metrics.jsonl')));
    } finally {
      fs.rmSync(a, { recursive: true, force: true });
      fs.rmSync(b, { recursive: true, force: true });
    }
  });
}

test('every metrics line has every field, says the env is simulated, and names the backend', async () => {
  const root = workspace();
  try {
    const r = await train(root, smallConfig({ ppo: { steps: 3 } }));
    const lines = fs
      .readFileSync(path.join(r.out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 3);
    for (const m of lines) {
      for (const k of [
        'step',
        'loss',
        'reward',
        'kl',
        'kl_rollout',
        'kl_coef',
        'kl_engaged',
        'entropy',
        'lr',
        'throughput',
        'updates_per_s',
        'success',
        'episode_len',
        'seed_ratio',
        'backend',
        'engine',
        'strategy',
        'env',
        'time',
      ])
        assert.ok(k in m, k);
      assert.deepEqual(Object.keys(m.loss).sort(), ['entropy', 'kl', 'policy', 'total', 'value']);
      for (const v of [m.reward, m.kl, m.kl_coef, m.entropy, m.lr, m.throughput, ...Object.values(m.loss)])
        assert.ok(Number.isFinite(v), JSON.stringify(m));
      assert.equal(m.env, 'simulated-dialogue-v3');
      assert.equal(m.backend, 'wasm');
      assert.equal(m.engine, 'tfjs');
    }
    assert.match(
      fs.readFileSync(path.join(r.out, 'train.log'), 'utf8'),
      /backend wasm \(tfjs 4\.22\.0, single-threaded/,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('an interrupted run is not resumed under another config: the error says to --force train; forced starts over and says where the old run went', async () => {
  const root = workspace();
  try {
    const config = smallConfig({ ppo: { steps: 6 } });
    await train(root, config, { abortAfterStep: 2 });
    await assert.rejects(
      train(root, smallConfig({ ppo: { steps: 6, lr: 0.002 } })),
      /interrupted run, and the train config changed.*npx rc1-build --force train/s,
    );
    const forced = await train(root, smallConfig({ ppo: { steps: 6, lr: 0.002 } }), { forced: true });
    assert.ok(forced.movedAside && fs.existsSync(path.join(forced.movedAside, 'checkpoints/rc1/latest')));
    assert.match(forced.summary, /previous run moved to .*previous-/);
    assert.match(
      forced.lines[0]!,
      /starting over \(--force train\): the previous run was moved to \.rc1\/state\/train\/previous-/,
    );
    assert.equal(forced.result.finalStep, 6);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("wasm: at a learning rate where the KL controller engages (projection or early stop, before and after the interruption), N steps straight and N/2 + interrupt + resume + N/2 are byte-identical — the controller's replay of recent states is restored", async () => {
  const config = smallConfig({
    train: { checkpoint: { every: 4, keep_last: 3 }, eval: { every: 4 } },
    ppo: { steps: 6, lr: 0.05, target_kl: 0.03, rollout_len: 64 },
  });
  const a = workspace();
  const b = workspace();
  try {
    await train(a, config);
    const first = await train(b, config, { abortAfterStep: 3 });
    assert.equal(first.result.finalStep, 3);
    const second = await train(b, config);
    assert.ok(second.resumedFrom !== null);
    const lines = (p: string) =>
      fs
        .readFileSync(p, 'utf8')
        .trim()
        .split('\n')
        .map((l) => {
          const { time, throughput, updates_per_s, ...rest } = JSON.parse(l);
          void time;
          void throughput;
          void updates_per_s;
          return rest as { step: number; kl_engaged: boolean | null };
        });
    const straight = lines(work(a, 'metrics.jsonl'));
    const engaged = straight.filter((m) => m.kl_engaged === true).map((m) => m.step);
    assert.ok(
      engaged.some((s) => s <= 3) && engaged.some((s) => s > 3),
      `the controller engaged before and after step 3: steps ${engaged.join(', ')}`,
    );
    assert.deepEqual(lines(path.join(second.out, 'metrics.jsonl')), straight);
    for (const f of ['model.bin', 'optimizer.bin', 'reference.bin'])
      assert.equal(sha(work(b, `checkpoints/rc1/step_00006/${f}`)), sha(work(a, `checkpoints/rc1/step_00006/${f}`)), f);
  } finally {
    fs.rmSync(a, { recursive: true, force: true });
    fs.rmSync(b, { recursive: true, force: true });
  }
});

test('a rerun of a completed run with the same config and inputs retrains nothing and copies the same state out', async () => {
  const root = workspace();
  try {
    const config = smallConfig({ ppo: { steps: 2 } });
    const first = await train(root, config);
    const again = await train(root, config);
    assert.match(again.summary, /up to date at step 2/);
    assert.equal(sha(path.join(again.out, 'ck/latest/model.bin')), sha(path.join(first.out, 'ck/latest/model.bin')));
    assert.equal(fs.readlinkSync(path.join(again.out, 'ck/latest')), 'step_00002');
    for (const d of ['initial', 'best']) assert.ok(fs.existsSync(path.join(again.out, 'ck', d, 'model.bin')), d);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

/** A workspace with 45 scenarios' scored synthetic rollouts (4 candidates each): the dpo strategy's inputs. */
const mk = (): string => {
  const root = workspace();
  const scen = makeScenarios(45);
  const rollouts = syntheticRollouts(scen, {
    seed: 3,
    candidates: 4,
    policy: 'fixture',
    rates: {
      wrong_answer: 0.25,
      missing_tool_call: 0.3,
      unnecessary_clarification: 0.3,
      skipped_clarification: 0.4,
      verbosity: 0.2,
    },
  });
  fs.writeFileSync(
    path.join(root, 'data/pool_rollouts.jsonl'),
    rollouts.map((r) => JSON.stringify(r)).join('\n') + '\n',
  );
  fs.writeFileSync(
    path.join(root, 'data/scores.jsonl'),
    rollouts
      .map((r) =>
        JSON.stringify({
          rollout_id: r.rollout_id,
          scenario_id: r.scenario_id,
          status: 'scored',
          scores: heuristicBase(r).scores,
          samples: [],
        }),
      )
      .join('\n') + '\n',
  );
  return root;
};
/** One dpo training run in the workspace (aborted after a step when asked). */
const run = async (root: string, config: TrainConfig, stopAfter?: number) =>
  trainIn(root, config, {
    inputs: {
      scenarios: ['data/scenarios.jsonl'],
      weights: ['data/weights.json'],
      rollouts: ['data/pool_rollouts.jsonl'],
      scores: ['data/scores.jsonl'],
    },
    ...(stopAfter === undefined ? {} : { onLine: abortAfterStep(stopAfter) }),
  });

test('dpo: pairs of best- and worst-reward scored candidates move the policy, and resume is exact too', async () => {
  const config = smallConfig({
    train: { strategy: 'dpo', dpo: { beta: 0.1, batch: 8 }, checkpoint: { every: 4, keep_last: 2 } },
    ppo: { steps: 6 },
  });
  const [a, b] = [mk(), mk()];
  try {
    const straight = await run(a, config);
    assert.match(
      straight.lines.join('\n'),
      /dpo: \d+ preference pairs \(best vs worst RC1 reward among other action sequences\)/,
    );
    const m = fs
      .readFileSync(path.join(straight.out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(m.length, 6);
    assert.ok(m.every((x) => x.strategy === 'dpo' && x.success === null && x.loss.value === 0 && x.kl_coef === 0.1));
    assert.notEqual(
      sha(work(a, 'checkpoints/rc1/step_00006/model.bin')),
      sha(work(a, 'checkpoints/rc1/initial/model.bin')),
      'DPO updates move the policy',
    );
    await run(b, config, 3);
    await run(b, config);
    assert.equal(
      sha(work(b, 'checkpoints/rc1/step_00006/model.bin')),
      sha(work(a, 'checkpoints/rc1/step_00006/model.bin')),
    );
  } finally {
    fs.rmSync(a, { recursive: true, force: true });
    fs.rmSync(b, { recursive: true, force: true });
  }
});

test('dpo: every pair differs in its actions, and the DPO loss falls over training', async () => {
  const root = mk();
  try {
    const config = smallConfig({
      train: { strategy: 'dpo', dpo: { beta: 0.1, batch: 8 }, checkpoint: { every: 40, keep_last: 1 } },
      ppo: { steps: 40, lr: 1e-2 },
    });
    const r = await run(root, config);
    const said = /dpo: (\d+) preference pairs .* (\d+) without a pair \((\d+) of them because/.exec(r.lines.join('\n'));
    assert.ok(said, 'the log counts the pairs and the scenarios without one');
    assert.ok(Number(said[1]) > 0, 'the fixture gives pairs');
    assert.ok(Number(said[3]) > 0, 'some scenarios have only same-action candidates below the best: the filter acts');
    const loss = fs
      .readFileSync(path.join(r.out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { loss: { policy: number } }).loss.policy);
    const mean = (xs: number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
    const [first, last] = [mean(loss.slice(0, 10)), mean(loss.slice(-10))];
    // A pair of identical action paths sits at ln 2 with no gradient; real pairs start there
    // (policy = reference) and fall as the policy separates them.
    assert.ok(Math.abs(loss[0]! - Math.LN2) < 1e-6, `the first step's loss is ln 2 (policy = reference): ${loss[0]}`);
    assert.ok(
      last < first - 0.005,
      `mean DPO loss of the last 10 steps ${last.toFixed(5)} < first 10 ${first.toFixed(5)} - 0.005`,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
