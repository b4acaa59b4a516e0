// The Slurm executor's parsing and declaration checks, without a cluster: squeue --json of Slurm
// 22.05 (state a string, exit code a raw wait status) and of 23.02+ (state a list, exit code an
// object), scontrol -o and sacct -P lines, the sbatch command line of a target's resources, and
// a bad `executor` declaration as a usage error naming the target and field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeEnd,
  parseSacct,
  parseScontrol,
  parseSqueueJson,
  sbatchArgs,
} from '../../packages/engine/src/runner/slurm/slurm-cli.ts';
import { TestRig } from '../helpers/rig.ts';

test('squeue --json of Slurm 22.05: the job is picked out of every job listed; exit 768 is exit code 3; a signal is a signal', () => {
  const text = JSON.stringify({
    jobs: [
      { job_id: 4, job_state: 'COMPLETED', exit_code: 0, restart_cnt: 0, state_reason: 'None', batch_host: 'vm' },
      {
        job_id: 5,
        job_state: 'FAILED',
        exit_code: 768,
        restart_cnt: 1,
        state_reason: 'NonZeroExitCode',
        batch_host: 'vm',
      },
      { job_id: 6, job_state: 'FAILED', exit_code: 9, restart_cnt: 0, state_reason: 'None', batch_host: 'vm' },
    ],
  });
  assert.deepEqual(parseSqueueJson(text, '5'), {
    id: '5',
    state: 'FAILED',
    reason: 'NonZeroExitCode',
    exitCode: 3,
    signal: null,
    restarts: 1,
    node: 'vm',
    source: 'squeue',
  });
  assert.equal(parseSqueueJson(text, '6')!.signal, 9);
  assert.equal(parseSqueueJson(text, '7'), null);
});

test('squeue --json of Slurm 23.02 and later: a state list and an exit-code object', () => {
  const text = JSON.stringify({
    jobs: [
      {
        job_id: 9,
        job_state: ['PENDING', 'REQUEUED'],
        exit_code: { status: ['PENDING'], return_code: { set: true, number: 0 } },
        restart_cnt: 2,
        state_reason: 'BeginTime',
        batch_host: '',
      },
      {
        job_id: 10,
        job_state: ['OUT_OF_MEMORY'],
        exit_code: {
          status: ['OUT_OF_MEMORY'],
          return_code: { set: true, number: 0 },
          signal: { id: { set: true, number: 9 } },
        },
        restart_cnt: 0,
        state_reason: 'OutOfMemory',
      },
    ],
  });
  const p = parseSqueueJson(text, '9')!;
  assert.equal(p.state, 'PENDING');
  assert.equal(p.restarts, 2);
  assert.equal(p.exitCode, null, 'no exit code while waiting');
  const oom = parseSqueueJson(text, '10')!;
  assert.equal(oom.signal, 9);
  assert.match(describeEnd(oom), /slurm job 10 ran out of memory \(raise the target's slurm mem\)/);
});

test('scontrol show job -o and sacct -P give the same fields', () => {
  const sc = parseScontrol(
    'JobId=12 JobName=rc1:train JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=1 Restarts=1 BatchFlag=1 ExitCode=0:15 BatchHost=node3',
    '12',
  )!;
  assert.deepEqual(
    {
      state: sc.state,
      reason: sc.reason,
      signal: sc.signal,
      exitCode: sc.exitCode,
      restarts: sc.restarts,
      node: sc.node,
    },
    { state: 'TIMEOUT', reason: 'TimeLimit', signal: 15, exitCode: null, restarts: 1, node: 'node3' },
  );
  assert.match(describeEnd(sc), /reached its time limit/);
  const sa = parseSacct('11|COMPLETED|0:0|0|vm\n12|CANCELLED by 0|0:15|1|vm\n', '12')!;
  assert.equal(sa.state, 'CANCELLED');
  assert.equal(sa.restarts, 1);
});

test("a target's resources become sbatch options; the job is requeueable, appends to its log and runs in the workspace", () => {
  const args = sbatchArgs({
    name: 'rc1:train',
    script: '/w/.rc1/slurm/train/job.sh',
    cwd: '/w',
    output: '/w/.rc1/slurm/train/slurm-%j.out',
    resources: {
      partition: 'gpu',
      gpus: 'a100:2',
      cpus: 8,
      mem: '64G',
      time: '12:00:00',
      sbatchArgs: ['--account=ml'],
    },
  });
  assert.deepEqual(args, [
    '--parsable',
    '--job-name=rc1:train',
    '--chdir=/w',
    '--output=/w/.rc1/slurm/train/slurm-%j.out',
    '--open-mode=append',
    '--requeue',
    '--export=ALL',
    '--partition=gpu',
    '--gpus=a100:2',
    '--cpus-per-task=8',
    '--mem=64G',
    '--time=12:00:00',
    '--account=ml',
    '/w/.rc1/slurm/train/job.sh',
  ]);
});

test('a bad executor declaration is a usage error (exit 64) naming the target, the field and what is expected', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [
  defineTarget({ name: 'a', rule: 'rules/a.ts', outputs: ['out/a.txt'], executor: { kind: 'slurm', mem: 'lots' } }),
], executors: { b: 'local' } });
`,
    'rules/a.ts': `import { defineRule } from 'rc1-build';\nexport default defineRule({ name: 'a', version: 1, run() {} });\n`,
  });
  try {
    const r = rig.run(['a']);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(r.stderr + r.stdout, /target a: executor\.mem: a size with an optional unit, like '16G' or '4000M'/);
    rig.write('rc1.build.ts', rig.read('rc1.build.ts').replace("mem: 'lots'", "mem: '1G'"));
    const r2 = rig.run(['a']);
    assert.equal(r2.code, 64);
    assert.match(r2.stderr + r2.stdout, /definePipeline: executors names unknown target b/);
  } finally {
    rig.cleanup();
  }
});
