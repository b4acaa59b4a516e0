// Targets with `executor: { kind: 'slurm' }`, through the real CLI, on a real one-node Slurm
// cluster (test/helpers/slurm.ts starts one with test/servers/slurm-up.sh unless SLURM_CONF names
// a running one). The cluster shares the workspace with the build (staging: shared-fs).
//   data/in.txt --> upper (slurm) --> out/upper.txt
// A job's outputs are committed, in the manifest and cached like a local run's; a failing rule and
// a job that dies without a result fail the build (exit 1) with an ERROR report holding the job's
// log; Ctrl-C cancels the job (scancel: gone from squeue); a requeued job runs the train rule again,
// which resumes from its checkpoint to the weights of a straight run; a job scancelled from outside
// fails the target and the next build resumes; slurmd SIGKILLed mid-job does not stop the job; a
// job orphaned by a SIGKILLed build is cancelled by the next build, which resumes the rule; a
// secret reaches the rule on the node but never job.json or the job's log.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { parse, stringify } from 'yaml';
import { trainPipeline, writeToyTrainerFiles } from '../helpers/command-fixtures.ts';
import { REPO, TestRig } from '../helpers/rig.ts';
import {
  COUNT_RULE,
  type Cluster,
  inQueue,
  jobFields,
  requeueAndRelease,
  slurmSkip,
  startCluster,
  waitFor,
} from '../helpers/slurm.ts';

let cluster: Cluster | null = null;
before(() => {
  if (!slurmSkip) cluster = startCluster();
});
after(() => cluster?.stop());
afterEach((t) => cluster?.afterTest(t)); // a failed test prints and keeps the cluster's logs

const SLURM = "executor: { kind: 'slurm', partition: 'main', mem: '300M', time: '10', pollS: 0.2, graceS: 5 },";

const UPPER_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({
  name: 'upper', version: 1,
  async run(ctx) {
    const text = fs.readFileSync(ctx.inputs('src')[0], 'utf8');
    ctx.log('upper: on node ' + (process.env.SLURMD_NODENAME ?? '(not in a slurm job)') + ', job ' + (process.env.SLURM_JOB_ID ?? '-'));
    if (ctx.env.UPPER_TOKEN) ctx.log('upper: token ' + ctx.env.UPPER_TOKEN + ' has ' + ctx.env.UPPER_TOKEN.length + ' chars');
    if (text.startsWith('fail')) throw new Error('upper: the input asks this rule to fail');
    if (text.startsWith('die')) process.kill(process.pid, 'SIGKILL');
    if (text.startsWith('slow')) {
      for (let i = 1; i <= 600 && !ctx.signal.aborted; i++) { ctx.log('tick ' + i); await new Promise((r) => setTimeout(r, 100)); }
    }
    fs.writeFileSync(ctx.output('out/upper.txt'), text.toUpperCase());
    return { summary: text.length + ' chars' };
  },
});
`;

function upperRig(input: string): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['upper'],
  targets: [
    defineTarget({ name: 'upper', rule: 'rules/upper.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/upper.txt'], secrets: ['UPPER_TOKEN'],
      ${SLURM} }),
  ],
});
`,
    'rules/upper.ts': UPPER_RULE,
    'data/in.txt': input,
  });
}

function jobIdOf(text: string): string {
  const m = /slurm: submitted job (\d+)/.exec(text);
  assert.ok(m, `a job was submitted:\n${text}`);
  return m[1]!;
}

test('a target with executor slurm runs as a batch job on the node; its output is committed, in the manifest and cached like a local run', {
  skip: slurmSkip,
}, () => {
  const rig = upperRig('hello slurm\n');
  try {
    const token = 'tok-slurm-secret-98765';
    const r = rig.run(['-v'], { UPPER_TOKEN: token });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const id = jobIdOf(r.stdout);
    assert.match(
      r.stdout,
      /upper: token \*\*\* has 22 chars/,
      'the secret reached the rule on the node, redacted in its log',
    );
    for (const f of ['.rc1/slurm/upper/job.json', `.rc1/slurm/upper/slurm-${id}.out`, 'logs/upper.log'])
      assert.doesNotMatch(rig.read(f), /tok-slurm-secret/, f);
    assert.equal(jobFields(id).JobState, 'COMPLETED');
    assert.equal(rig.read('out/upper.txt'), 'HELLO SLURM\n');
    const log = rig.read('logs/upper.log');
    assert.match(log, new RegExp(`upper: on node \\S+, job ${id}\\n`), 'the rule ran inside the Slurm job');
    assert.match(log, /rc1-build: upper: running its rule on/);
    const manifest = JSON.parse(rig.read('reports/build/manifest.json')) as {
      artifacts: { path: string; sha256: string; target: string }[];
    };
    const a = manifest.artifacts.find((x) => x.path === 'out/upper.txt');
    assert.equal(a?.target, 'upper');
    assert.equal(
      a?.sha256,
      execFileSync('sha256sum', [path.join(rig.dir, 'out/upper.txt')], { encoding: 'utf8' }).split(' ')[0],
    );

    const again = rig.run(['--json'], { UPPER_TOKEN: token });
    assert.equal(again.code, 0);
    assert.ok(
      again.events.some((e) => e.event === 'skip' && e.target === 'upper'),
      'up to date: no second job',
    );
    assert.equal(rig.run(['clean', 'upper']).code, 0);
    const restored = rig.run(['--json'], { UPPER_TOKEN: token });
    assert.equal(restored.code, 0, restored.stdout + restored.stderr);
    assert.ok(
      restored.events.some((e) => e.event === 'restore' && e.target === 'upper'),
      'restored from the local cache',
    );
    assert.doesNotMatch(restored.stdout, /submitted job/, 'no job for a restore');
    assert.equal(rig.read('out/upper.txt'), 'HELLO SLURM\n');
  } finally {
    rig.cleanup();
  }
});

test("a rule that fails in its job fails the build with exit 1 and an ERROR report holding the job's log", {
  skip: slurmSkip,
}, () => {
  const rig = upperRig('fail please\n');
  try {
    const r = rig.run([]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const id = jobIdOf(rig.read('logs/upper.log'));
    assert.equal(jobFields(id).JobState, 'FAILED');
    assert.equal(jobFields(id).ExitCode, '1:0');
    assert.match(r.stdout, /FAILED\s+upper: Error: upper: the input asks this rule to fail/);
    const m = /error report (reports\/ERROR_\S+\.json)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const report = JSON.parse(rig.read(m[1]!)) as { target: string; kind: string; error: string; log_tail: string[] };
    assert.equal(report.target, 'upper');
    assert.equal(report.kind, 'rule-error');
    assert.ok(
      report.log_tail.some((l) => l.startsWith(`slurm: submitted job ${id}`)),
      report.log_tail.join('\n'),
    );
    assert.ok(
      report.log_tail.some((l) => /upper: on node \S+, job \d+/.test(l)),
      "the node's lines are in the report",
    );
    assert.equal(rig.exists('out/upper.txt'), false);
  } finally {
    rig.cleanup();
  }
});

test('a job that dies without a result (SIGKILL on the node) fails the target with its Slurm state', {
  skip: slurmSkip,
}, () => {
  const rig = upperRig('die now\n');
  try {
    const r = rig.run([]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const id = jobIdOf(rig.read('logs/upper.log'));
    assert.match(
      r.stdout,
      new RegExp(
        `upper: slurm job ${id} failed \\(killed by signal 9, reason \\w+\\); the job's log: \\.rc1/slurm/upper/slurm-${id}\\.out`,
      ),
    );
    assert.match(rig.read(/error report (reports\/ERROR_\S+\.json)/.exec(r.stdout)![1]!), /slurm job \d+ failed/);
  } finally {
    rig.cleanup();
  }
});

test('Ctrl-C of the build cancels the job: scancel, the job leaves squeue, exit 130, no output', {
  skip: slurmSkip,
}, async () => {
  const rig = upperRig('slow\n');
  try {
    const child = rig.spawn(['-v']);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await waitFor('the rule to tick inside its job', () => /tick 3\b/.test(out));
    const id = jobIdOf(out);
    assert.equal(jobFields(id).JobState, 'RUNNING');
    child.kill('SIGINT');
    const code = await new Promise((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 130, out);
    assert.match(out, new RegExp(`slurm: interrupted: cancelling job ${id} \\(scancel\\)`));
    assert.match(out, /INTERRUPTED/);
    assert.equal(inQueue(id), false, 'the job is gone from squeue when the build exits');
    assert.equal(jobFields(id).JobState, 'CANCELLED');
    assert.equal(rig.exists('out/upper.txt'), false);
    assert.equal(
      fs.existsSync(path.join(rig.dir, '.rc1/slurm/upper/submitted.json')),
      false,
      'no job left on record as running',
    );
  } finally {
    rig.cleanup();
  }
});

// ---------------------------------------------------------------- requeue: train resumes

/** RC1's train rule with the command engine's toy trainer (python3), `steps` steps, as a Slurm job. */
function trainRig(steps: number, env: Record<string, string>): TestRig {
  const rig = new TestRig({
    'rc1.build.ts': trainPipeline(SLURM),
    'rules/train.ts': fs.readFileSync(path.join(REPO, 'rules/train.ts'), 'utf8'),
  });
  const read = (f: string): Record<string, Record<string, unknown>> =>
    parse(fs.readFileSync(path.join(REPO, 'configs', f), 'utf8')) as Record<string, Record<string, unknown>>;
  rig.write(
    'configs/train.yaml',
    stringify({
      train: {
        ...read('train.yaml').train!,
        engine: 'command',
        checkpoint: { every: 1, keep_last: 20 },
        command: { argv: ['python3', 'examples/trainers/toy_trainer.py'], cwd: '.', env, grace_s: 3, poll_ms: 25 },
      },
    }),
  );
  rig.write(
    'configs/ppo_scale.yaml',
    stringify({ ppo: { ...read('ppo_scale.yaml').ppo, steps, batch: 16, seeds: [7] } }),
  );
  writeToyTrainerFiles(rig);
  fs.cpSync(path.join(REPO, 'lib'), path.join(rig.dir, 'lib'), { recursive: true }); // the rule imports RC1's libraries by relative path
  return rig;
}

test('a requeued job (scontrol requeue) runs train again, which resumes from its checkpoint to the weights of a straight run', {
  skip: slurmSkip,
}, async () => {
  const straight = trainRig(8, {});
  const requeued = trainRig(8, { TOY_STEP_DELAY: '0.4' });
  try {
    const s = straight.run(['train']);
    assert.equal(s.code, 0, s.stdout + s.stderr);
    const want = straight.read('checkpoints/rc1/seed_7/step_00008/weights.json');

    const child = requeued.spawn(['-v', 'train']);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const latest = path.join(requeued.dir, '.rc1/state/train/seed_7/checkpoints/rc1/latest');
    await waitFor(
      'a checkpoint of the first run',
      () => fs.existsSync(latest) && Number(/step_(\d+)/.exec(fs.readlinkSync(latest))?.[1]) >= 2,
    );
    const id = jobIdOf(out);
    // Slurm holds a requeued job back for a while (BeginTime); release it as soon as Slurm can launch it
    // again (requeueAndRelease: past the second of the requeue), as an admin would.
    await requeueAndRelease(id);
    const code = await new Promise((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0, out);
    assert.equal(jobFields(id).Restarts, '1');
    assert.match(out, new RegExp(`slurm: job ${id} was requeued \\(restart 1`));
    const log = requeued.read('logs/train.log');
    assert.match(log, /resuming the interrupted run from .*step_0000\d \(step \d/);
    assert.match(log, /toy_trainer: resumed from .*step_0000\d at step \d/);
    const steps = requeued
      .read('reports/metrics.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepEqual(steps, [1, 2, 3, 4, 5, 6, 7, 8], 'steps keep increasing across the requeue, none twice');
    assert.equal(requeued.read('checkpoints/rc1/seed_7/step_00008/weights.json'), want);
  } finally {
    straight.cleanup();
    requeued.cleanup();
  }
});

test("sbatch refusing the job (an unknown partition) fails the target with Slurm's message", {
  skip: slurmSkip,
}, () => {
  const rig = upperRig('hello\n');
  try {
    rig.write('rc1.build.ts', rig.read('rc1.build.ts').replace("partition: 'main'", "partition: 'no_such_partition'"));
    const r = rig.run([]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /upper: Slurm refused the job \(sbatch\): sbatch: error: .*[Pp]artition/);
  } finally {
    rig.cleanup();
  }
});

// ---------------------------------------------------------------- jobs killed mid-run

function countRig(): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [
  defineTarget({ name: 'count', rule: 'rules/count.ts', outputs: ['out/count.txt'], ${SLURM} }),
] });
`,
    'rules/count.ts': COUNT_RULE,
  });
}

/** Spawns `rc1-build -v count` and collects its output. */
function spawnCount(rig: TestRig): {
  child: import('node:child_process').ChildProcess;
  out: () => string;
  exit: Promise<number | null>;
} {
  const child = rig.spawn(['-v', 'count']);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return { child, out: () => out, exit: new Promise((r) => child.once('exit', (c) => r(c))) };
}

test('a job cancelled outside the build (scancel) fails the target, saying so; the next build resumes the rule from its state', {
  skip: slurmSkip,
}, async () => {
  const rig = countRig();
  try {
    const b = spawnCount(rig);
    await waitFor('step 2 in the job', () => /count: step 2\b/.test(b.out()));
    const id = jobIdOf(b.out());
    execFileSync('scancel', [id]);
    assert.equal(await b.exit, 1, b.out());
    assert.match(
      b.out(),
      new RegExp(
        `FAILED\\s+count: count: slurm job ${id} was cancelled outside this build \\(\\w+\\): the rule was stopped on the node; the job's log: \\.rc1/slurm/count/slurm-${id}\\.out`,
      ),
    );
    const r = rig.run(['--json', 'count']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(
      r.events.some((e) => e.event === 'log' && /^count: resuming after step [2-7]$/.test(String(e.line))),
      r.stdout,
    );
    const progress = r.events.filter((e) => e.event === 'progress' && e.target === 'count') as {
      done: number;
      total: number;
      unit: string;
    }[];
    assert.ok(progress.length > 0, "the rule's ctx.progress on the node reaches the build");
    assert.deepEqual({ total: progress.at(-1)!.total, unit: progress.at(-1)!.unit }, { total: 8, unit: 'steps' });
    assert.match(rig.read('out/count.txt'), /^counted to 8, started at 0, [2-7]\n$/);
  } finally {
    rig.cleanup();
  }
});

test('slurmd killed with SIGKILL mid-job: the job goes on (slurmstepd is its own process) and the build completes once slurmd is back', {
  skip: slurmSkip,
}, async () => {
  const pids = path.join(path.dirname(process.env.SLURM_CONF!), 'pids', 'slurmd');
  assert.ok(fs.existsSync(pids), `the cluster was started by test/servers/slurm-up.sh (${pids} names its slurmd)`);
  const rig = countRig();
  try {
    const b = spawnCount(rig);
    await waitFor('step 2 in the job', () => /count: step 2\b/.test(b.out()));
    process.kill(Number(fs.readFileSync(pids, 'utf8')), 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1000));
    const d = spawn('slurmd', ['-D'], { cwd: path.dirname(process.env.SLURM_CONF!), detached: true, stdio: 'ignore' });
    d.unref();
    fs.writeFileSync(pids, `${d.pid}\n`);
    assert.equal(await b.exit, 0, b.out());
    assert.match(rig.read('out/count.txt'), /^counted to 8, started at 0\n$/, 'one run, never restarted');
  } finally {
    rig.cleanup();
  }
});

test('a build killed with SIGKILL leaves its job running; the next build cancels it and runs the rule again, resuming from its state', {
  skip: slurmSkip,
}, async () => {
  const rig = countRig();
  try {
    const b = spawnCount(rig);
    await waitFor('step 2 in the job', () => /count: step 2\b/.test(b.out()));
    const id = jobIdOf(b.out());
    b.child.kill('SIGKILL');
    await b.exit;
    assert.equal(jobFields(id).JobState, 'RUNNING', 'the orphan job runs on');
    const r = rig.run(['-v', 'count']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `slurm: cancelling job ${id} \\(RUNNING\\), left by an earlier build \\(pid ${b.child.pid} on \\S+\\) that did not finish`,
      ),
    );
    assert.equal(jobFields(id).JobState, 'CANCELLED');
    assert.notEqual(jobIdOf(r.stdout), id);
    assert.match(rig.read('out/count.txt'), /^counted to 8, started at 0, [2-8]\n$/);
  } finally {
    rig.cleanup();
  }
});

test("the pipeline's executors map sends a target to Slurm over its own executor; 'slurm' alone takes the cluster's defaults", {
  skip: slurmSkip,
}, () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline(({ profile }) => ({
  executors: profile === 'laptop' ? {} : { upper: 'slurm' },
  targets: [defineTarget({ name: 'upper', rule: 'rules/upper.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/upper.txt'], executor: 'local' })],
}));
`,
    'rules/upper.ts': UPPER_RULE,
    'data/in.txt': 'mapped\n',
  });
  try {
    const r = rig.run(['-v', 'upper']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /slurm: submitted job \d+ \(cluster defaults\)/);
    assert.equal(rig.read('out/upper.txt'), 'MAPPED\n');
  } finally {
    rig.cleanup();
  }
});
