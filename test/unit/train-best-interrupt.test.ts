// best_<step>/ is kill-consistent: the held-out eval and the best copy of a checkpoint happen before
// `latest` moves to it. A kill between the checkpoint and its best copy leaves `latest` on the
// previous checkpoint and the step is recomputed on resume; a SIGTERM as the checkpoint is written
// still evaluates it before `latest` moves. Either way best ends up as in an uninterrupted run. Through runTraining with the built-in engine (eval steps 4 and 8; step 4 is the first eval,
// so an uninterrupted run always writes best_00004/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readBestEval } from '../../lib/train/callbacks.ts';
import { bestTarget, listBest } from '../../lib/train/checkpoints.ts';
import { smallConfig, trainDataWorkspace, trainIn } from '../helpers/train-fixtures.ts';

const config = smallConfig({
  train: { checkpoint: { every: 2, keep_last: 10 }, eval: { every: 4 } },
  ppo: { steps: 8 },
});

function workspace(): string {
  return trainDataWorkspace('rc1-best-int-');
}

class Killed extends Error {}

/** One runTraining call; `onLine` sees every log line (and may abort the run or throw, as a kill would end it). */
async function train(root: string, onLine: (line: string, abort: () => void) => void = () => {}) {
  return trainIn(root, config, { onLine });
}

const sha = (p: string): string => createHash('sha256').update(fs.readFileSync(p)).digest('hex');

/** What best is in a work dir: the best_<step>/ dirs, the link, the recorded eval, the weights it names. */
async function bestState(root: string): Promise<unknown> {
  const ck = path.join(root, '.rc1/state/train/checkpoints/rc1');
  return {
    dirs: (await listBest(ck)).map((b) => b.name),
    link: await bestTarget(ck),
    eval: readBestEval(ck),
    weights: sha(path.join(ck, 'best/model.bin')),
    latest: fs.readlinkSync(path.join(ck, 'latest')),
  };
}

test("a SIGTERM or a kill between a checkpoint and its held-out eval: the resumed run's best equals an uninterrupted run's", async () => {
  const roots = [workspace(), workspace(), workspace()];
  const [straight, termed, killed] = roots as [string, string, string];
  try {
    await train(straight);
    const want = await bestState(straight);
    assert.deepEqual(
      (want as { dirs: string[] }).dirs.slice(0, 1),
      ['best_00004'],
      'the first eval writes best_00004/',
    );

    // SIGTERM as step 4's checkpoint is written: it is still evaluated, then latest moves to it.
    const t1 = await train(termed, (l, abort) => {
      if (l.startsWith('checkpoint step_00004')) abort();
    });
    assert.equal(t1.result.interrupted, true);
    assert.match(t1.lines.join('\n'), /held-out eval @ step 4:/);
    assert.equal(fs.readlinkSync(path.join(termed, '.rc1/state/train/checkpoints/rc1/latest')), 'step_00004');
    const t2 = await train(termed);
    assert.match(t2.lines.join('\n'), /resuming the interrupted run from .*step_00004 \(step 4;/);
    assert.deepEqual(await bestState(termed), want);

    // A kill after step 4's eval but before its best copy: the run dies with latest still on step 2.
    await assert.rejects(
      train(killed, (l) => {
        if (l.startsWith('held-out eval @ step 4:')) throw new Killed('killed');
      }),
      Killed,
    );
    assert.equal(fs.readlinkSync(path.join(killed, '.rc1/state/train/checkpoints/rc1/latest')), 'step_00002');
    assert.deepEqual(await listBest(path.join(killed, '.rc1/state/train/checkpoints/rc1')), []);
    const k2 = await train(killed);
    assert.match(k2.lines.join('\n'), /removed step_00004 \(newer than latest: that step is recomputed\)/);
    assert.deepEqual(await bestState(killed), want);
    assert.equal(
      sha(path.join(killed, '.rc1/state/train/checkpoints/rc1/step_00008/model.bin')),
      sha(path.join(straight, '.rc1/state/train/checkpoints/rc1/step_00008/model.bin')),
    );
  } finally {
    for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
  }
});
