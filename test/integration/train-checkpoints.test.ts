// Checkpoint directories: sealed step dirs verify, a corrupted file is caught, rotation spares
// `latest`, and — the crash test — a writer SIGKILLed at random moments, again and again, always
// leaves `latest` on a complete checkpoint and best/ complete (after the repair every start runs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  latestTarget,
  listSteps,
  materialize,
  repairCheckpointDir,
  rotate,
  updateLatest,
  verifyCheckpoint,
  writeCheckpoint,
} from '../../lib/train/checkpoints.ts';
import { REPO } from '../helpers/rig.ts';

const META = {
  format: 'rc1-train-checkpoint-v1' as const,
  config_hash: 'a'.repeat(64),
  engine: 'tfjs' as const,
  strategy: 'ppo' as const,
  backend: 'wasm',
  state: null,
};

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-ckpt-'));
}

test('a written checkpoint verifies; a changed byte or a missing file makes it incomplete', async () => {
  const dir = tmp();
  try {
    const info = await writeCheckpoint(dir, 7, META, async (d) => {
      fs.writeFileSync(path.join(d, 'model.bin'), 'abc');
      fs.mkdirSync(path.join(d, 'sub'));
      fs.writeFileSync(path.join(d, 'sub/x'), 'y');
    });
    assert.equal(path.basename(info.dir), 'step_00007');
    assert.deepEqual(Object.keys(info.meta.files).sort(), ['model.bin', 'sub/x']);
    assert.equal((await verifyCheckpoint(info.dir)).ok, true);
    fs.writeFileSync(path.join(info.dir, 'model.bin'), 'abd');
    const bad = await verifyCheckpoint(info.dir);
    assert.equal(bad.ok, false);
    assert.match(!bad.ok ? bad.problem : '', /model\.bin has sha256/);
    fs.rmSync(path.join(info.dir, 'sub/x'));
    fs.writeFileSync(path.join(info.dir, 'model.bin'), 'abc');
    assert.match(((await verifyCheckpoint(info.dir)) as { problem: string }).problem, /sub\/x is missing/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('rotation keeps the last K step dirs and the one latest names; materialize copies dirs and the link', async () => {
  const dir = tmp();
  const out = tmp();
  try {
    for (const s of [1, 2, 3, 4, 5])
      await writeCheckpoint(dir, s, META, async (d) => fs.writeFileSync(path.join(d, 'w'), String(s)));
    await updateLatest(dir, 'step_00002');
    const removed = await rotate(dir, 2);
    assert.deepEqual(removed, ['step_00001', 'step_00003']);
    assert.deepEqual(
      (await listSteps(dir)).map((s) => s.step),
      [2, 4, 5],
    );
    await materialize(dir, path.join(out, 'ck'));
    assert.equal(fs.readlinkSync(path.join(out, 'ck/latest')), 'step_00002');
    assert.equal(fs.readFileSync(path.join(out, 'ck/latest/w'), 'utf8'), '2');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('repair removes temp dirs and step dirs newer than latest (they are recomputed on resume)', async () => {
  const dir = tmp();
  try {
    for (const s of [1, 2, 3])
      await writeCheckpoint(dir, s, META, async (d) => fs.writeFileSync(path.join(d, 'w'), String(s)));
    await updateLatest(dir, 'step_00002');
    fs.mkdirSync(path.join(dir, '.tmp-step_00004-123'));
    const notes = await repairCheckpointDir(dir);
    assert.equal(notes.length, 2, notes.join('\n'));
    assert.deepEqual(
      (await listSteps(dir)).map((s) => s.step),
      [1, 2],
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGKILL at random moments while checkpoints are written always leaves latest on a complete checkpoint', async () => {
  const dir = tmp();
  const writer = path.join(REPO, 'test/helpers/checkpoint-writer.ts');
  let kills = 0;
  let seenSteps = 0;
  try {
    for (let round = 0; round < 12; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', writer, dir], {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once('data', () => resolve());
        child.once('exit', (c) => reject(new Error(`writer exited early (${c})`)));
      });
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 250)));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      kills += 1;
      const latest = await latestTarget(dir);
      if (latest === null) continue;
      const v = await verifyCheckpoint(path.join(dir, latest));
      assert.ok(v.ok, `round ${round}: latest → ${latest} is incomplete: ${!v.ok ? v.problem : ''}`);
      seenSteps = Math.max(seenSteps, v.ok ? v.meta.step : 0);
      await repairCheckpointDir(dir);
      if (fs.existsSync(path.join(dir, 'best'))) {
        const b = await verifyCheckpoint(path.join(dir, 'best'));
        assert.ok(b.ok, `round ${round}: best/ is incomplete: ${!b.ok ? b.problem : ''}`);
      }
    }
    assert.equal(kills, 12);
    assert.ok(seenSteps >= 3, `the writer made progress across kills (latest step ${seenSteps})`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
