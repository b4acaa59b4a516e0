// best_<step>/ and the `best` link (checkpoints.ts): each improvement writes its own best_<step>/
// and moves the link; an earlier best_<step>/ hashes the same before and after later improvements;
// rotation (keep_last) never removes what `best` or `latest` names; a kill between the new dir and
// the link swap is rolled forward; a best/ directory left by an older version is replaced cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  bestTarget,
  listBest,
  repairCheckpointDir,
  rotate,
  saveBest,
  updateLatest,
  verifyCheckpoint,
  writeCheckpoint,
} from '../../lib/train/checkpoints.ts';
import { readBestEval } from '../../lib/train/callbacks.ts';

const META = {
  format: 'rc1-train-checkpoint-v1' as const,
  config_hash: 'a'.repeat(64),
  engine: 'tfjs' as const,
  strategy: 'ppo' as const,
  backend: 'wasm',
  state: null,
};

/** sha256 over every file of a dir (relative path + content), with each file's inode and mtime: a rewrite in place shows. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  for (const f of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const p = path.join(dir, f);
    const st = fs.statSync(p);
    if (st.isFile()) h.update(`${f}\0${st.ino}\0${st.mtimeMs}\0`).update(fs.readFileSync(p));
  }
  return h.digest('hex');
}

async function step(dir: string, s: number): Promise<string> {
  const info = await writeCheckpoint(dir, s, META, async (d) =>
    fs.writeFileSync(path.join(d, 'model.bin'), `weights of step ${s}`),
  );
  await updateLatest(dir, path.basename(info.dir));
  return info.dir;
}

test('each improvement writes best_<step>/ and moves the best link; an earlier best_<step>/ is never modified; rotation spares what best and latest name', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-best-'));
  try {
    assert.equal(await saveBest(dir, await step(dir, 2), { result: { step: 2, reward: 0.1 } }), 'best_00002');
    assert.equal(await bestTarget(dir), 'best_00002');
    const first = treeHash(path.join(dir, 'best_00002'));
    assert.equal(readBestEval(dir)?.step, 2);

    assert.equal(await saveBest(dir, await step(dir, 4), { result: { step: 4, reward: 0.2 } }), 'best_00004');
    assert.equal(await bestTarget(dir), 'best_00004');
    assert.equal(treeHash(path.join(dir, 'best_00002')), first, 'best_00002/ is untouched by the next improvement');
    assert.equal(fs.readFileSync(path.join(dir, 'best/model.bin'), 'utf8'), 'weights of step 4');
    assert.equal((await verifyCheckpoint(path.join(dir, 'best'))).ok, true);

    const kept = treeHash(path.join(dir, 'best_00004'));
    for (const s of [6, 8, 10]) await step(dir, s);
    const removed = await rotate(dir, 1);
    assert.deepEqual(removed.sort(), ['best_00002', 'step_00002', 'step_00004', 'step_00006', 'step_00008']);
    assert.deepEqual(
      (await listBest(dir)).map((b) => b.name),
      ['best_00004'],
      'keep_last 1 keeps the one best names',
    );
    assert.equal(treeHash(path.join(dir, 'best_00004')), kept);
    assert.equal(fs.readlinkSync(path.join(dir, 'latest')), 'step_00010');

    // Saving the same step again (a re-evaluated checkpoint) never rewrites the named dir.
    assert.equal(
      await saveBest(dir, path.join(dir, 'step_00010'), { result: { step: 10, reward: 0.3 } }),
      'best_00010',
    );
    const ten = treeHash(path.join(dir, 'best_00010'));
    await saveBest(dir, path.join(dir, 'step_00010'), { result: { step: 10, reward: 0.9 } });
    assert.equal(treeHash(path.join(dir, 'best_00010')), ten);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a kill after best_<step>/ was renamed in but before the link moved is rolled forward; an old best/ directory is replaced by the link', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-best-'));
  try {
    const s2 = await step(dir, 2);
    fs.cpSync(s2, path.join(dir, 'best'), { recursive: true }); // a best/ directory as an older version wrote it
    fs.writeFileSync(path.join(dir, 'best/eval.json'), '{"result": {"step": 2, "reward": 0.1}}\n');
    await saveBest(dir, await step(dir, 4), { result: { step: 4, reward: 0.2 } });
    assert.equal(fs.lstatSync(path.join(dir, 'best')).isSymbolicLink(), true);
    assert.equal(await bestTarget(dir), 'best_00004');

    fs.cpSync(path.join(dir, 'best_00004'), path.join(dir, 'best_00006'), { recursive: true });
    fs.symlinkSync('best_00004', path.join(dir, `.best-${process.pid + 1}`)); // a temp link the kill left
    const notes = await repairCheckpointDir(dir);
    assert.equal(await bestTarget(dir), 'best_00006');
    assert.ok(
      notes.some((n) => /best → best_00006 \(rolled forward/.test(n)),
      notes.join('\n'),
    );
    assert.equal(fs.existsSync(path.join(dir, `.best-${process.pid + 1}`)), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
