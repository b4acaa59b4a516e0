// The Slurm job control modules against a real one-node cluster (test/helpers/slurm.ts), without a
// build: submit + follow streams a job's log lines and ends with its state and exit code; many
// jobs followed at once share one squeue call per poll (JobQuery), so slurmctld is not asked once
// per job; cancel ends a running job.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { followJob } from '../../packages/engine/src/runner/slurm/follow-job.ts';
import { JobQuery, cancel, queryJob, submit } from '../../packages/engine/src/runner/slurm/slurm-cli.ts';
import { type Cluster, slurmSkip, startCluster } from '../helpers/slurm.ts';

let cluster: Cluster | null = null;
let dir = '';
before(() => {
  if (!slurmSkip) {
    cluster = startCluster();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-slurm-jobs-'));
  }
});
after(() => {
  cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});
afterEach((t) => cluster?.afterTest(t)); // a failed test prints and keeps the cluster's logs

function script(name: string, body: string): string {
  const f = path.join(dir, `${name}.sh`);
  fs.writeFileSync(f, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return f;
}

const resources = { partition: 'main', mem: '100M', time: '5' };

test('a submitted job is followed to its end: every line of its log in order, then FAILED with exit code 3', {
  skip: slurmSkip,
}, async () => {
  const id = await submit({
    name: 'rc1:test',
    script: script('three', 'for i in 1 2 3; do echo "line $i"; sleep 0.3; done; printf "no newline"; exit 3'),
    cwd: dir,
    output: path.join(dir, 'slurm-%j.out'),
    resources,
  });
  const lines: string[] = [];
  const states: string[] = [];
  const end = await followJob(
    id,
    path.join(dir, `slurm-${id}.out`),
    { log: (l) => lines.push(l), state: (j) => states.push(j.state) },
    { pollMs: 200 },
  );
  assert.deepEqual(lines, ['line 1', 'line 2', 'line 3', 'no newline']);
  assert.equal(end.state, 'FAILED');
  assert.equal(end.exitCode, 3);
  assert.equal(states.at(-1), 'FAILED');
});

test('jobs followed at once share one squeue --json call per poll; cancel ends a running job', {
  skip: slurmSkip,
}, async () => {
  const ids = await Promise.all(
    [1, 2, 3].map((i) =>
      submit({
        name: `rc1:q${i}`,
        script: script(`q${i}`, 'sleep 30'),
        cwd: dir,
        output: path.join(dir, 'slurm-%j.out'),
        resources,
      }),
    ),
  );
  const q = new JobQuery(250, () => ids);
  for (let round = 1; round <= 3; round++) {
    const answers = await Promise.all(ids.map((id) => q.query(id)));
    assert.deepEqual(
      answers.map((a) => a?.id),
      ids,
    );
    assert.equal(q.calls, round, `round ${round}: one squeue call for ${ids.length} jobs`);
    await new Promise((r) => setTimeout(r, 300));
  }
  await Promise.all(ids.map((id) => cancel(id)));
  for (const id of ids) {
    const t0 = Date.now();
    let s = await queryJob(id);
    while (s?.state !== 'CANCELLED' && Date.now() - t0 < 30_000) {
      await new Promise((r) => setTimeout(r, 200));
      s = await queryJob(id);
    }
    assert.equal(s?.state, 'CANCELLED');
  }
});
