// `train` with `train.engine: command`, through the CLI, in a workspace of its own:
//   round2_pass.json, scenarios, weights --> train (the toy trainer as a child process) --> checkpoints/rc1/, metrics, log
// The toy trainer trains and its final checkpoint's hashes reach the manifest; a build killed with
// SIGKILL mid-run resumes from `latest` to byte-identical weights; trainers that exit non-zero,
// write no checkpoint or write malformed metrics fail the build with a clear message and an ERROR
// report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { TRAINER_BASE_ENV } from '../../lib/train/engines/command.ts';
import { trainPipeline, writeToyTrainerFiles } from '../helpers/command-fixtures.ts';
import { REPO, TestRig } from '../helpers/rig.ts';

const PIPELINE = trainPipeline("secrets: ['TRAINER_TOKEN'],");

/** A workspace whose train target runs `argv` (relative to the workspace) for `steps` steps, with train.command.env `env`. */
function commandRig(argv: string[], steps = 6, env: Record<string, string> = {}, seeds: number[] = [7]): TestRig {
  const rig = new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/train.ts': fs.readFileSync(path.join(REPO, 'rules/train.ts'), 'utf8'),
  }).withRc1Lib();
  const read = (f: string): Record<string, Record<string, unknown>> =>
    parse(fs.readFileSync(path.join(REPO, 'configs', f), 'utf8')) as Record<string, Record<string, unknown>>;
  const train = read('train.yaml').train!;
  rig.write(
    'configs/train.yaml',
    stringify({
      train: {
        ...train,
        engine: 'command',
        checkpoint: { every: 2, keep_last: 5 },
        command: { argv, cwd: '.', env, grace_s: 5, poll_ms: 25 },
      },
    }),
  );
  rig.write('configs/ppo_scale.yaml', stringify({ ppo: { ...read('ppo_scale.yaml').ppo, steps, batch: 16, seeds } }));
  writeToyTrainerFiles(rig);
  return rig;
}

const TOY = ['python3', 'examples/trainers/toy_trainer.py'];

function errorReport(rig: TestRig, stdout: string): { kind: string; error: string; target: string } {
  const m = /error report (reports\/ERROR_\d{8}T\d{9}Z(?:-\d+)?\.json)/.exec(stdout);
  assert.ok(m, stdout);
  return JSON.parse(rig.read(m[1]!)) as { kind: string; error: string; target: string };
}

test("train with the command engine runs the toy trainer; the final checkpoint's sha256 per file is in the manifest", () => {
  const rig = commandRig(TOY);
  try {
    const r = rig.run(['train']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/latest')), 'seed_7/latest');
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/seed_7/latest')), 'step_00006');
    const metrics = rig
      .read('reports/metrics.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; engine: string; backend: string });
    assert.deepEqual(
      metrics.map((m) => m.step),
      [1, 2, 3, 4, 5, 6],
    );
    assert.equal(metrics[0]!.engine, 'command');
    assert.match(rig.read('logs/train.log'), /trainer: toy_trainer: done at step 6/);
    const meta = JSON.parse(rig.read('checkpoints/rc1/seed_7/step_00006/checkpoint.json')) as {
      format: string;
      files: Record<string, string>;
    };
    assert.equal(meta.format, 'external');
    const manifest = JSON.parse(rig.read('reports/build/manifest.json')) as {
      artifacts: { path: string; sha256: string; target: string }[];
    };
    for (const [f, sha] of Object.entries(meta.files)) {
      const a = manifest.artifacts.find((x) => x.path === `checkpoints/rc1/seed_7/step_00006/${f}`);
      assert.ok(a, `manifest lists ${f}`);
      assert.equal(a.sha256, sha, f);
      assert.equal(a.target, 'train');
    }
  } finally {
    rig.cleanup();
  }
});

test("the trainer gets the declared env and secrets, train.command.env and a minimal base, never the build's whole environment; RC1_CONFIG_JSON holds every train and ppo setting", () => {
  // The wrapper records what the trainer sees, then runs the toy trainer with the contract's arguments.
  const wrapper = [
    'sh',
    '-c',
    'env > trainer-env.txt && cp "$RC1_CONFIG_JSON" trainer-config.json && exec python3 examples/trainers/toy_trainer.py "$@"',
    'sh',
  ];
  const rig = commandRig(wrapper, 2, { FROM_TRAIN_COMMAND_ENV: 'yes' });
  try {
    const r = rig.run(['train'], {
      LEAKY_BUILD_VAR: 'must-not-reach-the-trainer',
      CUDA_VISIBLE_DEVICES: '3',
      TRAINER_TOKEN: 'tok-secret-123456',
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const env = new Map(
      rig
        .read('trainer-env.txt')
        .trimEnd()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
    );
    assert.equal(env.get('CUDA_VISIBLE_DEVICES'), '3', 'device selectors pass');
    assert.equal(env.get('TRAINER_TOKEN'), 'tok-secret-123456', 'declared secrets pass');
    assert.equal(env.get('FROM_TRAIN_COMMAND_ENV'), 'yes');
    assert.ok(env.has('PATH') && env.has('HOME'));
    assert.equal(env.has('LEAKY_BUILD_VAR'), false, 'an undeclared variable of the build stays out');
    assert.equal(env.has('RC1_TEST_COUNTER'), false);
    const allowed = new Set([
      ...TRAINER_BASE_ENV,
      'TRAINER_TOKEN',
      'FROM_TRAIN_COMMAND_ENV',
      'PWD',
      'OLDPWD',
      'SHLVL',
      '_',
    ]);
    assert.deepEqual(
      [...env.keys()].filter((k) => !allowed.has(k) && !k.startsWith('RC1_')),
      [],
      'nothing else',
    );
    const cfg = JSON.parse(rig.read('trainer-config.json'));
    assert.equal(cfg.contract, 1);
    assert.equal(cfg.train.seed, 7);
    assert.equal(cfg.train.ppo.target_kl, 0.03);
    assert.deepEqual(cfg.ppo.seeds, [7]);
    assert.equal(cfg.ppo.base_model, 'Qwen/Qwen3-4B-Thinking-2507');
    assert.deepEqual(cfg.ppo.finetune, {
      method: 'qlora',
      lora: {
        r: 16,
        alpha: 32,
        dropout: 0.05,
        target_modules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
      },
      qlora: { bits: 4, quant_type: 'nf4', double_quant: true, compute_dtype: 'bfloat16' },
    });
    assert.deepEqual(cfg.overclar, { alpha: 0.07, cap: 3 });
    const effective = parse(rig.read('reports/config_effective.yaml')) as {
      trainer_settings: { ppo: { finetune: unknown } };
    };
    assert.deepEqual(
      effective.trainer_settings.ppo.finetune,
      cfg.ppo.finetune,
      'the report shows every setting the trainer was handed',
    );
    for (const f of ['logs/train.log', 'reports/config_effective.yaml', 'trainer-config.json'])
      assert.equal(rig.read(f).includes('tok-secret-123456'), false, f);

    // Every setting the trainer is handed is part of the run: a LoRA rank change retrains.
    const ppo = parse(rig.read('configs/ppo_scale.yaml')) as { ppo: { finetune: { lora: { r: number } } } };
    ppo.ppo.finetune.lora.r = 8;
    rig.write('configs/ppo_scale.yaml', stringify(ppo));
    const again = rig.run(['train'], { TRAINER_TOKEN: 'tok-secret-123456' });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.doesNotMatch(again.stdout, /copied out again/);
    assert.match(again.stdout, /trained to step 2 .*previous run moved to/);
  } finally {
    rig.cleanup();
  }
});

test('with two seeds in ppo.seeds the trainer runs twice, each run with its own train.seed, work dir and outputs', () => {
  const record =
    'python3 -c \'import json, os; print(json.load(open(os.environ["RC1_CONFIG_JSON"]))["train"]["seed"], os.environ["RC1_CHECKPOINT_DIR"])\' >> runs.txt';
  const rig = commandRig(
    ['sh', '-c', `${record} && exec python3 examples/trainers/toy_trainer.py "$@"`, 'sh'],
    2,
    {},
    [7, 8],
  );
  try {
    const r = rig.run(['train']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const runs = rig
      .read('runs.txt')
      .trimEnd()
      .split('\n')
      .map((l) => l.split(' '));
    assert.deepEqual(
      runs.map(([seed]) => seed),
      ['7', '8'],
      'one invocation per seed, train.seed = that seed',
    );
    assert.deepEqual(
      runs.map(([, dir]) => path.relative(rig.dir, dir!)),
      ['.rc1/state/train/seed_7/checkpoints/rc1', '.rc1/state/train/seed_8/checkpoints/rc1'],
    );
    for (const seed of [7, 8])
      assert.equal(fs.readlinkSync(path.join(rig.dir, `checkpoints/rc1/seed_${seed}/latest`)), 'step_00002');
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/latest')), 'seed_7/latest');
    assert.notEqual(
      rig.read('checkpoints/rc1/seed_7/step_00002/weights.json'),
      rig.read('checkpoints/rc1/seed_8/step_00002/weights.json'),
      'the seeds train differently',
    );
    const metrics = rig
      .read('reports/metrics.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { seed: number; step: number });
    assert.deepEqual(
      metrics.map((m) => `${m.seed}:${m.step}`),
      ['7:1', '7:2', '8:1', '8:2'],
    );
  } finally {
    rig.cleanup();
  }
});

test('a build killed with SIGKILL mid-run resumes from latest on the next build, and the weights match a straight run', async () => {
  const straight = commandRig(TOY, 8);
  const killed = commandRig(TOY, 8, { TOY_STEP_DELAY: '0.5' });
  try {
    assert.equal(straight.run(['train']).code, 0);
    const want = straight.read('checkpoints/rc1/seed_7/step_00008/weights.json');

    const child = killed.spawn(['train']);
    const latest = path.join(killed.dir, '.rc1/state/train/seed_7/checkpoints/rc1/latest');
    const t0 = Date.now();
    while (!fs.existsSync(latest) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 25));
    assert.ok(fs.existsSync(latest), 'a checkpoint was adopted before the kill');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const killedAt = Number(/step_(\d+)/.exec(fs.readlinkSync(latest))![1]);
    assert.ok(killedAt < 8);

    const r = killed.run(['train']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const log = killed.read('logs/train.log');
    assert.match(log, /resuming the interrupted run from .*step_0000\d \(step \d/);
    assert.match(log, /toy_trainer: resumed from .*step_0000\d at step \d/);
    const steps = killed
      .read('reports/metrics.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepEqual(steps, [1, 2, 3, 4, 5, 6, 7, 8], 'steps keep increasing across the resume, none twice');
    assert.equal(killed.read('checkpoints/rc1/seed_7/step_00008/weights.json'), want);
  } finally {
    straight.cleanup();
    killed.cleanup();
  }
});

test("Ctrl-C of the build reaches the trainer's process group; the next build resumes and finishes", async () => {
  const rig = commandRig(TOY, 8, { TOY_STEP_DELAY: '0.5' });
  try {
    const child = rig.spawn(['train']);
    const latest = path.join(rig.dir, '.rc1/state/train/seed_7/checkpoints/rc1/latest');
    const t0 = Date.now();
    while (!fs.existsSync(latest) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGINT');
    const code = await new Promise((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 130);
    const log = fs.readFileSync(path.join(rig.dir, '.rc1/state/train/seed_7/train.log'), 'utf8');
    assert.match(log, /build interrupted: SIGTERM to the trainer's process group/);
    assert.match(log, /toy_trainer: signal 15: stopped after step \d/);
    const r = rig.run(['train']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(rig.read('logs/train.log'), /resuming the interrupted run/);
    assert.equal(fs.readlinkSync(path.join(rig.dir, 'checkpoints/rc1/seed_7/latest')), 'step_00008');
  } finally {
    rig.cleanup();
  }
});

test('a trainer that exits non-zero fails train with its exit code, its last output and an ERROR report', () => {
  const rig = commandRig(['python3', 'crash.py']);
  try {
    rig.write(
      'crash.py',
      'import sys\nprint("loading base model", flush=True)\nprint("RuntimeError: CUDA out of memory", file=sys.stderr)\nsys.exit(7)\n',
    );
    const r = rig.run(['train']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /the trainer exited with code 7/);
    assert.match(r.stdout, /\| RuntimeError: CUDA out of memory/);
    const rep = errorReport(rig, r.stdout);
    assert.equal(rep.target, 'train');
    assert.match(rep.error, /the trainer exited with code 7/);
  } finally {
    rig.cleanup();
  }
});

test('a trainer that writes no checkpoint fails train naming the missing step dir and COMPLETE marker', () => {
  const rig = commandRig(['python3', 'nockpt.py'], 3);
  try {
    rig.write(
      'nockpt.py',
      'import json, os\nwith open(os.environ["RC1_METRICS"], "a") as f:\n    for s in (1, 2, 3): f.write(json.dumps({"step": s, "loss": 1.0, "reward": 0.5, "kl": 0.0}) + "\\n")\n',
    );
    const r = rig.run(['train']);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /the trainer exited 0 but wrote no complete checkpoint: expected .*step_00003\/ closed by a COMPLETE file/,
    );
    assert.match(errorReport(rig, r.stdout).error, /wrote no complete checkpoint/);
  } finally {
    rig.cleanup();
  }
});

test('a trainer that writes a malformed metrics line fails train with file:line and field', () => {
  const rig = commandRig(['python3', 'bad.py'], 3);
  try {
    rig.write(
      'bad.py',
      'import os\nopen(os.environ["RC1_METRICS"], "a").write(\'{"step": 1, "loss": 0.9, "reward": 0.1, "kl": 0}\\n{"step": 2, "loss": 0.8, "reward": 0.2}\\n\')\n',
    );
    const r = rig.run(['train']);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /the trainer broke the command contract: \.rc1\/state\/train\/seed_7\/command\/metrics\.jsonl:2: kl: expected a number, got nothing \(the field is missing\)/,
    );
    assert.match(errorReport(rig, r.stdout).error, /metrics\.jsonl:2: kl/);
  } finally {
    rig.cleanup();
  }
});
