// The PyTorch reference trainer (examples/trainers/torch_ppo) under `train.engine: command`, through
// the CLI, at a tiny CPU size: SFT then PPO steps with RC1's reward, metrics lines, safetensors
// checkpoints closed by COMPLETE that reach the manifest; a build stopped with SIGTERM mid-run
// resumes from `latest` to byte-identical weights. Skipped, saying why, where no python3 on this
// machine imports torch (CI installs Debian's python3-torch in .ci/run). One intra-op thread: the
// suite runs two files at a time on two cores.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { trainPipeline } from '../helpers/command-fixtures.ts';
import { REPO, TestRig } from '../helpers/rig.ts';

const PIPELINE = trainPipeline();

/** The first python that imports torch, or null. */
function torchPython(): string | null {
  for (const py of ['python3', '/usr/bin/python3']) {
    if (spawnSync(py, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0) return py;
  }
  return null;
}
const PY = torchPython();
const SKIP = PY ? false : 'no python3 here imports torch (Debian: apt-get install python3-torch; .ci/run installs it)';
const TRAINER = path.join(REPO, 'examples/trainers/torch_ppo');

/** Scenarios in the balanced pool's format: gsm8k sums (some under-specified) and strategyqa yes/no. */
function scenarios(): string {
  const out = [];
  for (let i = 0; i < 24; i++) {
    const a = 3 + i;
    const b = 5 + (i % 7);
    const needs = i % 4 === 0;
    const sq = i % 3 === 2;
    out.push(
      JSON.stringify(
        sq
          ? {
              id: `s${i}`,
              task: 'strategyqa',
              difficulty: 'medium',
              needs_clarification: false,
              clarification: null,
              gold_answer: i % 2 ? 'yes' : 'no',
              tools: ['wiki'],
              context: [],
              messages: [{ role: 'user', content: `Is ${a} larger than ${b}?` }],
              reference: {
                steps: [{ type: 'thought', text: `${a} compared with ${b}.` }],
                final_answer: a > b ? 'yes' : 'no',
              },
            }
          : {
              id: `s${i}`,
              task: 'gsm8k',
              difficulty: needs ? 'hard' : 'easy',
              needs_clarification: needs,
              clarification: needs ? `It was ${b}.` : null,
              tools: ['calc'],
              context: [],
              gold_answer: String(a + b),
              messages: [
                {
                  role: 'user',
                  content: needs
                    ? `Ann has ${a} apples and gets a certain number more. How many now?`
                    : `Ann has ${a} apples and gets ${b} more. How many now?`,
                },
              ],
              reference: {
                steps: [
                  ...(needs ? [{ type: 'clarify', ask: 'How many more does she get?', reply: `It was ${b}.` }] : []),
                  { type: 'tool_call', tool: 'calc', input: `${a}+${b}`, output: String(a + b) },
                ],
                final_answer: String(a + b),
              },
            },
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

function torchRig(steps: number): TestRig {
  const rig = new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/train.ts': fs.readFileSync(path.join(REPO, 'rules/train.ts'), 'utf8'),
  }).withRc1Lib();
  const read = (f: string): Record<string, Record<string, unknown>> =>
    parse(fs.readFileSync(path.join(REPO, 'configs', f), 'utf8')) as Record<string, Record<string, unknown>>;
  const train = read('train.yaml').train!;
  const argv = [
    PY!,
    path.join(TRAINER, 'train.py'),
    '--size',
    'tiny',
    '--vocab-size',
    '300',
    '--sft-steps',
    '4',
    '--sft-rows',
    '4',
    '--seq',
    '64',
    '--gen-batch',
    '8',
    '--max-new',
    '12',
  ];
  rig.write(
    'configs/train.yaml',
    stringify({
      train: {
        ...train,
        engine: 'command',
        ppo: { ...(train.ppo as object), epochs: 1 },
        checkpoint: { every: 2, keep_last: 5 },
        command: { argv, cwd: '.', env: { OMP_NUM_THREADS: '1' }, grace_s: 30, poll_ms: 25 },
      },
    }),
  );
  rig.write(
    'configs/ppo_scale.yaml',
    stringify({ ppo: { ...read('ppo_scale.yaml').ppo, steps, lr: 1e-4, batch: 4, seeds: [7] } }),
  );
  rig.write('configs/evaluation.yaml', stringify({ overclar: { alpha: 0.07, cap: 3 } }));
  rig.write(
    'configs/weights.json',
    `${JSON.stringify({ weights: { correctness: 0.3, reasoning: 0.2, clarity: 0.1, conciseness: 0.1, clarification: 0.1, tool_use: 0.1, format_safety: 0.1 } })}\n`,
  );
  rig.write('reports/preflight/round2_pass.json', '{"round": "round2", "pass": true}\n');
  rig.write('data/scenarios.jsonl', scenarios());
  return rig;
}

interface Line {
  step: number;
  phase: string;
  loss: number;
  reward: number;
  kl: number;
  backend: string;
  engine: string;
  tool_calls?: number;
  no_answer?: number;
}

let straight: TestRig | null = null;
let straightRun: { code: number | null; stdout: string; stderr: string } | null = null;
before(() => {
  if (SKIP) return;
  straight = torchRig(8);
  straightRun = straight.run(['train']);
});
after(() => straight?.cleanup());

test("the torch trainer's self-checks pass: cached decoding equals full recomputation, safetensors round trip, task metrics", {
  skip: SKIP,
}, () => {
  const r = spawnSync(PY!, [path.join(TRAINER, 'selftest.py')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /ok {3}decode \(cpu, float32\)/);
});

test('train with the command engine runs the torch trainer: SFT then PPO steps, safetensors checkpoints closed by COMPLETE in the manifest', {
  skip: SKIP,
}, () => {
  const rig = straight!;
  assert.equal(straightRun!.code, 0, straightRun!.stdout + straightRun!.stderr);
  assert.equal(fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/seed_7/latest')), 'step_00008');
  const lines = rig
    .read('.rc1/state/train/seed_7/command/metrics.jsonl')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  assert.deepEqual(
    lines.map((m) => m.step),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.deepEqual(
    lines.map((m) => m.phase),
    ['sft', 'sft', 'sft', 'sft', 'ppo', 'ppo', 'ppo', 'ppo'],
  );
  assert.ok(lines[3]!.loss < lines[0]!.loss, `SFT loss falls: ${lines[0]!.loss} -> ${lines[3]!.loss}`);
  assert.ok(lines.every((m) => m.backend === 'torch-cpu-fp32' && Number.isFinite(m.reward) && Number.isFinite(m.kl)));
  assert.ok(
    lines.filter((m) => m.phase === 'sft').every((m) => m.kl === 0),
    'no KL during SFT: there is no reference policy yet',
  );
  assert.ok(
    lines.filter((m) => m.phase === 'ppo').every((m) => Number.isFinite(m.tool_calls) && Number.isFinite(m.no_answer)),
    'PPO lines count the executed tool calls',
  );
  const dir = 'checkpoints/rc1/seed_7/step_00008';
  for (const f of [
    'model.safetensors',
    'reference.safetensors',
    'optimizer.pt',
    'scheduler.pt',
    'rng.pt',
    'trainer_state.json',
    'vocab.json',
    'COMPLETE',
  ]) {
    assert.ok(fs.existsSync(path.join(rig.dir, dir, f)), `${dir}/${f}`);
  }
  const meta = JSON.parse(rig.read(`${dir}/checkpoint.json`)) as { files: Record<string, string> };
  const manifest = JSON.parse(rig.read('reports/build/manifest.json')) as {
    artifacts: { path: string; sha256: string }[];
  };
  assert.equal(
    manifest.artifacts.find((a) => a.path === `${dir}/model.safetensors`)?.sha256,
    meta.files['model.safetensors'],
  );
});

test("a build stopped with SIGTERM mid-run checkpoints, resumes from latest on the next build, and ends with the straight run's weights", {
  skip: SKIP,
}, async () => {
  const rig = torchRig(8);
  try {
    const child = rig.spawn(['train']);
    const latest = path.join(rig.dir, '.rc1/state/train/seed_7/checkpoints/rc1/latest');
    const t0 = Date.now();
    while (!fs.existsSync(latest) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 25));
    assert.ok(fs.existsSync(latest), 'a checkpoint was adopted before the stop');
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    const log = fs.readFileSync(path.join(rig.dir, '.rc1/state/train/seed_7/train.log'), 'utf8');
    assert.match(log, /torch_ppo: signal 15: checkpointed step \d/);
    const stoppedAt = Number(/step_(\d+)/.exec(fs.readlinkSync(latest))![1]);
    assert.ok(stoppedAt < 8, `stopped at step ${stoppedAt}`);
    const r = rig.run(['train']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(rig.read('logs/train.log'), /torch_ppo: resumed from .*step_0000\d at step \d/);
    const steps = rig
      .read('reports/metrics.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepEqual(steps, [1, 2, 3, 4, 5, 6, 7, 8], 'steps keep increasing across the resume, none twice');
    const want = fs.readFileSync(path.join(straight!.dir, 'checkpoints/rc1/seed_7/step_00008/model.safetensors'));
    assert.ok(
      fs.readFileSync(path.join(rig.dir, 'checkpoints/rc1/seed_7/step_00008/model.safetensors')).equals(want),
      'byte-identical weights',
    );
  } finally {
    rig.cleanup();
  }
});
