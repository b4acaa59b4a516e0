// The `command` engine against its contract, driven directly (no build): the reference toy
// trainer runs, checkpoints, is interrupted and resumes to byte-identical weights; trainers that
// break a clause (non-zero exit, no checkpoint, malformed or non-increasing metrics, a checkpoint
// without COMPLETE) fail with a message naming the clause, file:line and field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TrainResult } from '../../lib/train/api.ts';
import { commandEngine } from '../../lib/train/engines/command.ts';
import { makeContext, trainConfig } from '../helpers/command-fixtures.ts';
import { REPO } from '../helpers/rig.ts';

const TOY = path.join(REPO, 'examples/trainers/toy_trainer.py');

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-cmd-'));
}

function script(root: string, name: string, body: string): string {
  const p = path.join(root, name);
  fs.writeFileSync(p, body);
  return p;
}

async function rejects(p: Promise<TrainResult>, re: RegExp): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.equal((e as Error).name, 'RuleError', (e as Error).stack);
    assert.match((e as Error).message, re);
    return (e as Error).message;
  }
  assert.fail('expected the engine to fail');
}

test('the toy trainer trains to train.steps; every metrics line and checkpoint reaches the callbacks with sha256 per file', async () => {
  const root = tmp();
  try {
    const run = makeContext(root, trainConfig(6, ['python3', TOY]));
    const res = await commandEngine.run(run.ctx);
    assert.equal(res.finalStep, 6);
    assert.equal(res.interrupted, false);
    assert.equal(res.metricsLines, 6);
    assert.deepEqual(
      run.steps.map((m) => m.step),
      [1, 2, 3, 4, 5, 6],
    );
    assert.equal(run.steps[0]!.engine, 'command');
    assert.equal(run.steps[0]!.backend, 'python-stdlib');
    assert.deepEqual(
      run.checkpoints.map((c) => c.step),
      [2, 4, 6],
    );
    const final = run.checkpoints.at(-1)!;
    assert.equal(res.finalCheckpoint, final.dir);
    const meta = JSON.parse(fs.readFileSync(path.join(final.dir, 'checkpoint.json'), 'utf8'));
    assert.equal(meta.format, 'external');
    assert.deepEqual(Object.keys(meta.files).sort(), [
      'COMPLETE',
      'optimizer.json',
      'rng.json',
      'trainer_state.json',
      'weights.json',
    ]);
    const { createHash } = await import('node:crypto');
    for (const [f, h] of Object.entries(meta.files as Record<string, string>)) {
      assert.equal(
        createHash('sha256')
          .update(fs.readFileSync(path.join(final.dir, f)))
          .digest('hex'),
        h,
        f,
      );
    }
    assert.ok(
      run.log.some((l) => l.startsWith('trainer: toy_trainer: done at step 6')),
      run.log.join('\n'),
    );
    assert.ok(run.log.some((l) => l.includes(`${meta.files['weights.json']}  weights.json`)));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('an interrupted toy trainer stops on SIGTERM with a checkpoint, and the resumed run ends with byte-identical weights', async () => {
  const straight = tmp();
  const split = tmp();
  try {
    const a = makeContext(straight, trainConfig(8, ['python3', TOY]));
    await commandEngine.run(a.ctx);
    const want = fs.readFileSync(path.join(a.checkpoints.at(-1)!.dir, 'weights.json'));

    const b = makeContext(split, trainConfig(8, ['python3', TOY, '--step-delay', '0.3']));
    const first = commandEngine.run(b.ctx);
    while (b.checkpoints.length === 0) await new Promise((r) => setTimeout(r, 20));
    b.abort.abort();
    const r1 = await first;
    assert.equal(r1.interrupted, true);
    assert.ok(r1.finalStep >= 2 && r1.finalStep < 8, `stopped at ${r1.finalStep}`);
    const c = makeContext(split, trainConfig(8, ['python3', TOY]), { step: r1.finalStep, dir: r1.finalCheckpoint! });
    const r2 = await commandEngine.run(c.ctx);
    assert.equal(r2.finalStep, 8);
    assert.equal(c.steps[0]!.step, r1.finalStep + 1, 'steps continue after the resume point');
    assert.ok(c.log.some((l) => l.includes('toy_trainer: resumed from')));
    assert.deepEqual(fs.readFileSync(path.join(r2.finalCheckpoint!, 'weights.json')), want);
  } finally {
    fs.rmSync(straight, { recursive: true, force: true });
    fs.rmSync(split, { recursive: true, force: true });
  }
});

test('a trainer that exits non-zero fails the run with its exit code and last output', async () => {
  const root = tmp();
  try {
    const p = script(
      root,
      'crash.py',
      'import sys\nprint("loading Qwen3-4B", flush=True)\nprint("CUDA out of memory", file=sys.stderr)\nsys.exit(3)\n',
    );
    const msg = await rejects(
      commandEngine.run(makeContext(root, trainConfig(4, ['python3', p])).ctx),
      /the trainer exited with code 3/,
    );
    assert.match(msg, /\| CUDA out of memory/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a trainer that exits 0 without a complete checkpoint breaks clause 2', async () => {
  const root = tmp();
  try {
    const p = script(
      root,
      'nockpt.py',
      [
        'import json, os',
        'with open(os.environ["RC1_METRICS"], "a") as f:',
        '    for s in range(1, 5): f.write(json.dumps({"step": s, "loss": 1.0, "reward": 0.5, "kl": 0.01}) + "\\n")',
        'os.makedirs(os.path.join(os.environ["RC1_CHECKPOINT_DIR"], "step_00004"), exist_ok=True)',
        'open(os.path.join(os.environ["RC1_CHECKPOINT_DIR"], "step_00004", "weights.bin"), "w").write("x")',
      ].join('\n'),
    );
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(4, ['python3', p])).ctx),
      /exited 0 but wrote no complete checkpoint: expected .*step_00004\/ closed by a COMPLETE file/,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a malformed metrics line is a contract error naming file:line and field, and the trainer is stopped', async () => {
  const root = tmp();
  try {
    const p = script(
      root,
      'badmetrics.py',
      [
        'import json, os, time',
        'with open(os.environ["RC1_METRICS"], "a") as f:',
        '    f.write(json.dumps({"step": 1, "loss": 1.0, "reward": 0.5, "kl": 0.01}) + "\\n")',
        '    f.write(json.dumps({"step": 2, "loss": 1.0, "reward": "high", "kl": 0.01}) + "\\n")',
        '    f.flush()',
        '    time.sleep(60)',
      ].join('\n'),
    );
    const t0 = Date.now();
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(4, ['python3', p])).ctx),
      /broke the command contract: \.rc1\/state\/train\/command\/metrics\.jsonl:2: reward: expected a number, got "high"/,
    );
    assert.ok(Date.now() - t0 < 20_000, 'the trainer was stopped, not waited for');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('metrics steps that do not increase, or a line that is not JSON, break clause 1', async () => {
  const root = tmp();
  try {
    const repeat = script(
      root,
      'repeat.py',
      'import os\nopen(os.environ["RC1_METRICS"], "a").write(\'{"step": 1, "loss": 1, "reward": 0, "kl": 0}\\n{"step": 1, "loss": 1, "reward": 0, "kl": 0}\\n\')\n',
    );
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(4, ['python3', repeat])).ctx),
      /metrics\.jsonl:2: step: expected a step greater than 1 \(steps must increase; the previous line was step 1\), got 1/,
    );
    const garbage = script(
      root,
      'garbage.py',
      'import os\nopen(os.environ["RC1_METRICS"], "a").write("step=1 loss=0.3\\n")\n',
    );
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(4, ['python3', garbage])).ctx),
      /metrics\.jsonl:1: \(json\): expected one JSON object per line, got "step=1 loss=0.3"/,
    );
    const missing = script(
      root,
      'missing.py',
      'import os\nopen(os.environ["RC1_METRICS"], "a").write(\'{"step": 1, "loss": 1, "reward": 0}\\n\')\n',
    );
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(4, ['python3', missing])).ctx),
      /metrics\.jsonl:1: kl: expected a number, got nothing \(the field is missing\)/,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a trainer that stops short of train.steps, or cannot be started, fails clearly', async () => {
  const root = tmp();
  try {
    const short = script(
      root,
      'short.py',
      [
        'import json, os',
        'd = os.path.join(os.environ["RC1_CHECKPOINT_DIR"], "step_00002")',
        'os.makedirs(d, exist_ok=True)',
        'open(os.path.join(d, "w.bin"), "w").write("w")',
        'open(os.path.join(d, "COMPLETE"), "w").write("{}")',
        'open(os.environ["RC1_METRICS"], "a").write(\'{"step": 1, "loss": 1, "reward": 0, "kl": 0}\\n{"step": 2, "loss": 1, "reward": 0, "kl": 0}\\n\')',
      ].join('\n'),
    );
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(6, ['python3', short])).ctx),
      /exited 0 at step 2 of 6 \(train\.steps\): its last complete checkpoint is step_00002/,
    );
    await rejects(
      commandEngine.run(makeContext(root, trainConfig(6, ['no-such-trainer-xyz'])).ctx),
      /cannot start the trainer "no-such-trainer-xyz": spawn no-such-trainer-xyz ENOENT/,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a trainer left running by a build killed outright is stopped before a new one starts', async () => {
  const root = tmp();
  const { spawn } = await import('node:child_process');
  const argv = ['python3', '-c', 'import time; time.sleep(120)', 'orphan-marker'];
  const orphan = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore' });
  orphan.unref();
  try {
    await new Promise((r) => orphan.once('spawn', r));
    // 'spawn' can come while the child is still inside exec (a vfork-style spawn resumes the parent
    // before the new program's arguments are in place): /proc/<pid>/cmdline then reads empty, and an
    // orphan whose command line cannot be checked is rightly left alone. A real orphan has long
    // finished its exec; wait for this one's.
    const cmdline = (): string[] => {
      try {
        return fs.readFileSync(`/proc/${orphan.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      } catch {
        return [];
      }
    };
    for (let i = 0; i < 200 && cmdline().at(-1) !== 'orphan-marker'; i++) await new Promise((r) => setTimeout(r, 10));
    const gone = new Promise((r) => orphan.once('exit', r));
    const run = makeContext(root, trainConfig(2, ['python3', TOY]));
    const dir = path.join(run.ctx.paths.workDir, 'command');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'trainer.pid'),
      JSON.stringify({ pid: orphan.pid, argv, started: '2026-01-01T00:00:00.000Z' }),
    );
    const res = await commandEngine.run(run.ctx);
    assert.equal(res.finalStep, 2);
    assert.ok(
      run.log.some((l) => l.includes(`stopped trainer pid ${orphan.pid} left running by an earlier build`)),
      run.log.join('\n'),
    );
    await gone;
    assert.equal(fs.existsSync(path.join(dir, 'trainer.pid')), false, 'the pid file goes with the trainer');
  } finally {
    try {
      process.kill(-orphan.pid!, 'SIGKILL');
    } catch {
      /* already stopped */
    }
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('an orphan is recognised by its arguments whatever an interpreter or shim made of argv[0]', async () => {
  const { sameCommand } = await import('../../lib/train/engines/command-process.ts');
  const argv = ['python3', 'train.py', '--config', 'c.yaml'];
  assert.equal(sameCommand(argv, argv), true);
  assert.equal(
    sameCommand(['/usr/bin/env', 'bash', '/root/.pyenv/shims/python3', 'train.py', '--config', 'c.yaml'], argv),
    true,
  );
  assert.equal(sameCommand(['/root/.pyenv/versions/3.11.7/bin/python3', 'train.py', '--config', 'c.yaml'], argv), true);
  assert.equal(
    sameCommand(
      ['/usr/bin/python3', '/usr/local/bin/accelerate', 'launch', 'ppo.py'],
      ['accelerate', 'launch', 'ppo.py'],
    ),
    true,
  );
  assert.equal(sameCommand(['/usr/bin/python3', 'other.py', '--config', 'c.yaml'], argv), false);
  assert.equal(sameCommand(['/usr/bin/node', 'train.py', '--config', 'c.yaml'], argv), false);
});
