// A run's identity (run-identity.ts) through runTraining: an interrupted run made by other code
// starts over (moved aside) unless resumeAcrossCodeChange is set; then it resumes with a WARNING in
// the log, run.json and the effective config. decideRun's whole table, and previous-* pruning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TrainConfig } from '../../lib/train/index.ts';
import { decideRun, runIdentity, type RunFile } from '../../lib/train/run-identity.ts';
import { moveAside, previousRuns } from '../../lib/train/work-dir.ts';
import { dataGroups, runHash } from '../../lib/train/effective-config.ts';
import { abortAfterStep, smallConfig, trainDataWorkspace, trainIn } from '../helpers/train-fixtures.ts';

function workspace(): string {
  return trainDataWorkspace('rc1-train-id-');
}

async function train(
  root: string,
  config: TrainConfig,
  codeHash: string,
  o: { abortAfterStep?: number; across?: boolean } = {},
) {
  return trainIn(root, config, {
    codeHash,
    resumeAcrossCodeChange: o.across ?? false,
    ...(o.abortAfterStep === undefined ? {} : { onLine: abortAfterStep(o.abortAfterStep) }),
  });
}

const config = smallConfig({
  ppo: { steps: 4 },
  train: { checkpoint: { every: 2, keep_last: 3 }, eval: { every: 2 } },
});

test('an interrupted run made by other code starts over, unless resume_across_code_change: then it resumes with a warning in the log, run.json and the effective config', async () => {
  const root = workspace();
  try {
    const first = await train(root, config, 'code-a', { abortAfterStep: 2 });
    assert.equal(first.result.interrupted, true);
    const fresh = await train(root, config, 'code-b');
    assert.equal(fresh.resumedFrom, null);
    assert.match(
      fresh.lines[0]!,
      /starting over \(the trainer's code changed since the interrupted run .*set train\.resume_across_code_change: true to resume it instead\): the previous run was moved to \.rc1\/state\/train\/previous-/,
    );
    assert.ok(
      fresh.movedAside && fs.existsSync(path.join(fresh.movedAside, 'checkpoints/rc1/latest')),
      'the interrupted run is kept aside',
    );

    const again = workspace();
    try {
      await train(again, config, 'code-a', { abortAfterStep: 2 });
      const resumed = await train(again, config, 'code-b', { across: true });
      assert.ok(resumed.resumedFrom?.endsWith('step_00002'));
      assert.equal(resumed.result.finalStep, 4);
      assert.match(
        resumed.lines.join('\n'),
        /WARNING: the interrupted run is resumed at step 2 across a change of the trainer's code/,
      );
      assert.match(resumed.summary, /^WARNING: resumed across a code change/);
      const run = JSON.parse(fs.readFileSync(path.join(again, '.rc1/state/train/run.json'), 'utf8')) as RunFile;
      assert.equal(run.code_changes?.length, 1);
      assert.equal(run.code_changes?.[0]?.at_step, 2);
      assert.match(
        fs.readFileSync(path.join(resumed.out, 'cfg.yaml'), 'utf8'),
        /WARNING_resumed_across_code_change:\n {2}- at_step: 2\n/,
      );
      assert.match(
        fs.readFileSync(path.join(resumed.out, 'train.log'), 'utf8'),
        /WARNING: the interrupted run is resumed/,
      );
    } finally {
      fs.rmSync(again, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('decideRun: same identity resumes or copies; a config or data change refuses an interrupted run; a code change starts over unless asked', () => {
  const id = runIdentity('cfg', 'data', 'code');
  const run = (over: Partial<RunFile>): RunFile => ({
    run_hash: id.runHash,
    config_hash: 'cfg',
    data_hash: 'data',
    code_hash: 'code',
    status: 'running',
    started: '',
    engine: 'tfjs',
    ...over,
  });
  const otherCode = { run_hash: runIdentity('cfg', 'data', 'old').runHash, code_hash: 'old' };
  const no = { forced: false, resumeAcrossCodeChange: false };
  const yes = { forced: false, resumeAcrossCodeChange: true };
  assert.deepEqual(decideRun(null, false, id, no), { kind: 'fresh', why: null });
  assert.deepEqual(decideRun(run({}), true, id, no), { kind: 'resume', acrossCodeChange: false });
  assert.deepEqual(decideRun(run({ status: 'complete' }), true, id, no), { kind: 'copy', acrossCodeChange: false });
  assert.equal(decideRun(run({}), true, id, { forced: true, resumeAcrossCodeChange: true }).kind, 'fresh');
  assert.equal(decideRun(run(otherCode), true, id, no).kind, 'fresh');
  assert.deepEqual(decideRun(run(otherCode), true, id, yes), { kind: 'resume', acrossCodeChange: true });
  assert.equal(decideRun(run({ ...otherCode, status: 'complete' }), true, id, no).kind, 'fresh');
  assert.deepEqual(decideRun(run({ ...otherCode, status: 'complete' }), true, id, yes), {
    kind: 'copy',
    acrossCodeChange: true,
  });
  assert.deepEqual(decideRun(run({ run_hash: 'x', config_hash: 'other' }), true, id, yes), {
    kind: 'refuse',
    what: 'the train config',
  });
  assert.match(
    (decideRun(run({ run_hash: 'x', data_hash: 'other', code_hash: 'old' }), true, id, yes) as { what: string }).what,
    /input data/,
  );
  const legacy = run({ run_hash: 'v1', data_hash: undefined, code_hash: undefined });
  assert.equal(
    decideRun(legacy, true, id, yes).kind,
    'refuse',
    'a run.json from before code entered the identity is never resumed as if its code were known',
  );
});

test('moving a run aside keeps only the newest keep previous-* dirs', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-prev-'));
  try {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      fs.writeFileSync(path.join(dir, 'run.json'), `{"n": ${i}}`);
      const { dest, pruned } = moveAside(dir, 3, new Date(Date.UTC(2026, 0, 1, 0, 0, i)));
      made.push(path.basename(dest));
      assert.deepEqual(pruned, i >= 3 ? [made[i - 3]] : []);
    }
    assert.deepEqual(previousRuns(dir), made.slice(2));
    assert.equal(fs.readFileSync(path.join(dir, made[4]!, 'run.json'), 'utf8'), '{"n": 4}');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the built-in run's data hash covers the SFT policy's model files (a rebuilt SFT retrains), not its seal time", () => {
  const groups = dataGroups({ engine: 'tfjs', strategy: 'ppo' }, ['round2', 'scenarios', 'weights', 'sft', 'shadow']);
  assert.deepEqual(groups, ['scenarios', 'weights', 'sft']);
  const digests = (bin: string, meta: string) => ({
    scenarios: [{ path: 'data/s.jsonl', sha256: 'a' }],
    weights: [{ path: 'configs/weights.json', sha256: 'b' }],
    sft: [
      { path: 'checkpoints/sft/checkpoint.json', sha256: meta },
      { path: 'checkpoints/sft/model.bin', sha256: bin },
      { path: 'checkpoints/sft/model.json', sha256: 'j' },
    ],
  });
  const h = runHash('cfg', digests('bin1', 'meta1'), groups);
  assert.notEqual(runHash('cfg', digests('bin2', 'meta1'), groups), h, 'a different SFT model is a different run');
  assert.equal(runHash('cfg', digests('bin1', 'meta2'), groups), h, 'a re-sealed identical SFT model is the same run');
});
