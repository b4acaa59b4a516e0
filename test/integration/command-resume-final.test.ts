// A command-engine run interrupted after its FINAL checkpoint was adopted (latest → step_<steps>,
// run.json still "running"): the next build resumes at start step = train.steps. There is nothing
// left to train, so the trainer must not be asked for a checkpoint it cannot write; the run
// completes from the adopted checkpoint, with its metrics, and the outputs are written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TrainConfig } from '../../lib/train/index.ts';
import { trainConfig } from '../helpers/command-fixtures.ts';
import { trainIn } from '../helpers/train-fixtures.ts';
import { REPO } from '../helpers/rig.ts';

const TOY = path.join(REPO, 'examples/trainers/toy_trainer.py');

function workspace(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-cmd-final-'));
  const lines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({
      id: `s${i}`,
      needs_clarification: i % 3 === 0,
      messages: [{ role: 'user', content: `Alice paid ${i} dollars for ${i} apples: what is one apple?` }],
    }),
  );
  fs.writeFileSync(path.join(root, 'scenarios.jsonl'), `${lines.join('\n')}\n`);
  return root;
}

async function train(root: string, config: TrainConfig, abortOn: RegExp | null) {
  return trainIn(root, config, {
    inputs: { scenarios: ['scenarios.jsonl'] },
    onLine: (l, abort) => {
      if (abortOn?.test(l)) abort();
    },
  });
}

test('a command-engine run interrupted right after its final checkpoint was adopted completes on the next build from that checkpoint, without running the trainer again', async () => {
  const root = workspace();
  try {
    const config = trainConfig(4, ['python3', TOY]);
    const first = await train(root, config, /^command: checkpoint step_00004 complete/);
    assert.equal(first.result.interrupted, true, first.lines.join('\n'));
    const run = JSON.parse(fs.readFileSync(path.join(root, '.rc1/state/train/run.json'), 'utf8'));
    assert.equal(run.status, 'running', 'the interrupt left the run unfinished');
    assert.equal(
      fs.readlinkSync(path.join(root, '.rc1/state/train/checkpoints/rc1/latest')),
      'step_00004',
      'latest names the final checkpoint',
    );

    const second = await train(root, config, null);
    assert.equal(second.result.interrupted, false);
    assert.equal(second.result.finalStep, 4);
    assert.equal(second.resumedFrom, path.join(root, '.rc1/state/train/checkpoints/rc1/step_00004'));
    assert.ok(
      !second.lines.some((l) => l.startsWith('command: starting')),
      `the trainer is not started with nothing left to train:\n${second.lines.join('\n')}`,
    );
    assert.ok(
      second.lines.some((l) => /nothing left to train/.test(l)),
      second.lines.join('\n'),
    );
    const metrics = fs
      .readFileSync(path.join(second.out, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).step);
    assert.deepEqual(metrics, [1, 2, 3, 4], 'the first build’s metrics lines are the run’s');
    assert.ok(fs.existsSync(path.join(second.out, 'ck/step_00004/COMPLETE')), 'the final checkpoint is in the outputs');
    const done = JSON.parse(fs.readFileSync(path.join(root, '.rc1/state/train/run.json'), 'utf8'));
    assert.equal(done.status, 'complete');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
