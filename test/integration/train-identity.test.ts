// A training run's identity through the CLI: the train rule's code closure is part of it, beside
// the config and the data. In a workspace that declares only `train` (train-fixtures.ts):
//   rules/train.ts (code) + configs + scenarios + weights --> train --> .rc1/state/train/{run.json, checkpoints/, previous-*/}
// An edit of a file in the closure retrains under a new run hash (never "up to date … copied out
// again"), the old run is moved to a previous-* dir named in the output, and no more than
// train.keep_previous_runs old runs are kept, the oldest removed first; `clean train` removes the
// state dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SMALL, trainWorkspace } from '../helpers/train-fixtures.ts';

const WORK = '.rc1/state/train';
const SEED = 20250820;

test("editing a file in the trainer's code closure retrains under a new run hash, names where the old run went, and keeps train.keep_previous_runs old runs", () => {
  const rig = trainWorkspace();
  try {
    rig.write(
      'configs/profiles/dev.yaml',
      JSON.stringify({
        ...SMALL,
        ppo: { ...SMALL.ppo, steps: 2, seeds: [SEED] },
        train: { ...SMALL.train, keep_previous_runs: 1 },
      }),
    );
    // The run's work dir and checkpoints: the state dir and checkpoints/rc1 themselves, or their
    // seed_<seed>/ where runs are kept per seed.
    const perSeed = (dir: string): string => (rig.exists(`${dir}/seed_${SEED}`) ? `${dir}/seed_${SEED}` : dir);
    const runHash = (p = `${perSeed(WORK)}/run.json`): string =>
      (JSON.parse(rig.read(p)) as { run_hash: string }).run_hash;
    const previous = (): string[] =>
      fs
        .readdirSync(path.join(rig.dir, perSeed(WORK)))
        .filter((n) => n.startsWith('previous-'))
        .sort();
    const first = rig.run(['train']);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /trained to step 2/);
    const ck = perSeed('checkpoints/rc1');
    assert.equal(fs.readlinkSync(path.join(rig.dir, ck, 'best')), 'best_00002', 'best is a link to best_<step>/');
    assert.ok(rig.exists(`${ck}/best_00002/eval.json`));
    const a = runHash();
    const codeA = (JSON.parse(rig.read(`${perSeed(WORK)}/run.json`)) as { code_hash: string }).code_hash;
    assert.match(codeA, /^[0-9a-f]{64}$/);

    fs.appendFileSync(path.join(rig.dir, 'rules/train.ts'), "\n// an edit of the trainer's code\n");
    const second = rig.run(['train', '--explain']);
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.match(second.stdout, /rc1 explain: train: code rules\/train\.ts changed/);
    assert.doesNotMatch(second.stdout, /copied out again/);
    assert.match(
      second.stdout,
      /trained to step 2 .*previous run moved to \.rc1\/state\/train\/(seed_\d+\/)?previous-[0-9T-]+Z\//,
    );
    const b = runHash();
    assert.notEqual(b, a, 'a code change makes a new run');
    const prev = previous();
    assert.equal(prev.length, 1);
    assert.equal(runHash(`${perSeed(WORK)}/${prev[0]}/run.json`), a, 'the old run is kept aside whole');
    assert.match(
      rig.read(`${perSeed(WORK)}/train.log`),
      /starting over \(the trainer's code changed since the completed run \(code hash [0-9a-f]{12}… → [0-9a-f]{12}…\)\)/,
    );

    fs.appendFileSync(path.join(rig.dir, 'rules/train.ts'), '// another edit\n');
    const third = rig.run(['train', '-v']);
    assert.equal(third.code, 0, third.stdout + third.stderr);
    assert.match(
      third.stdout,
      new RegExp(`removed the oldest previous runs ${prev[0]} \\(train\\.keep_previous_runs: 1\\)`),
    );
    const left = previous();
    assert.equal(left.length, 1);
    assert.notEqual(left[0], prev[0], 'the oldest went first');
    assert.equal(runHash(`${perSeed(WORK)}/${left[0]}/run.json`), b);

    const again = rig.run(['train']);
    assert.match(again.stdout, /0 ran/, 'with nothing changed, nothing runs');

    const clean = rig.run(['clean', 'train']);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.match(clean.stdout, /and their state \(\.rc1\/state\/\)/);
    assert.equal(rig.exists(WORK), false, 'clean removes the training state dir, previous runs included');
  } finally {
    rig.cleanup();
  }
});
