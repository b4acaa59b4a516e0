// A Slurm cluster for the tests of the Slurm executor: the one SLURM_CONF names when it answers
// (sinfo), else a one-node cluster started on 127.0.0.1 by test/servers/slurm-up.sh (ports 6817 and
// 6818) and stopped again after the tests; test files that start one take turns (a lock file). Without Slurm installed the tests are skipped with the
// reason — except under CI=true, where they fail: CI must install it (slurmctld slurmd slurm-client munge).
// A test that fails prints what slurmctld and slurmd logged during it and keeps the cluster's logs
// (afterEach → Cluster.afterTest), since stop() removes the cluster's directory.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO } from './rig.ts';

const INSTALL = 'apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge';

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Why the Slurm tests cannot run here (false: they can). Under CI=true never a reason: they must run. */
export const slurmSkip: string | false =
  onPath('sbatch') || process.env.CI === 'true' ? false : `Slurm is not installed (${INSTALL})`;

export interface Cluster {
  conf: string;
  /**
   * For afterEach: when the test failed, prints the lines slurmctld and slurmd logged during it and
   * copies the cluster's logs to a directory that stays (its path printed), so that a failure in
   * CI explains itself after the cluster's own directory is removed.
   */
  afterTest(t: { name: string }): void;
  stop(): void;
}

/** The daemons' log files a slurm.conf names (SlurmctldLogFile, SlurmdLogFile), with the files beside them. */
function logFiles(conf: string): string[] {
  let text = '';
  try {
    text = fs.readFileSync(conf, 'utf8');
  } catch {
    return [];
  }
  const named = [...text.matchAll(/^\s*(?:SlurmctldLogFile|SlurmdLogFile|JobCompLoc)\s*=\s*(\S+)/gim)].map(
    (m) => m[1]!,
  );
  const dir = path.dirname(conf);
  const beside = ['slurmctld.out', 'slurmd.out'].map((f) => path.join(dir, f));
  return [conf, ...named, ...beside].filter((f, i, all) => all.indexOf(f) === i && fs.existsSync(f));
}

const MAX_PRINTED_LINES = 150;

/** afterTest for the cluster of `conf`: log sizes are noted after each test, so a failure prints its own lines. */
function failureLogs(conf: string): (t: { name: string }) => void {
  const size = (f: string): number => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  let from = new Map(logFiles(conf).map((f) => [f, size(f)]));
  let kept: string | null = null;
  return (t) => {
    const files = logFiles(conf);
    // TestContext.passed (Node 20.12+); before it, node:test's exit code once a test has failed
    const passed = (t as { passed?: boolean }).passed;
    if (passed === false || (passed === undefined && process.exitCode)) {
      kept ??= fs.mkdtempSync(
        path.join(os.tmpdir(), `rc1-slurm-logs-${new Date().toISOString().replace(/[:.]/g, '')}-`),
      );
      const lines: string[] = [`slurm: test "${t.name}" failed; the cluster's logs are kept in ${kept}`];
      for (const f of files) {
        fs.copyFileSync(f, path.join(kept, path.basename(f)));
        if (f === conf || f.endsWith('.out')) continue; // the daemons' stderr repeats their log files
        const text = fs
          .readFileSync(f)
          .subarray(from.get(f) ?? 0)
          .toString('utf8')
          .trimEnd();
        if (!text) continue;
        const all = text.split('\n');
        lines.push(
          `--- ${path.basename(f)} during the test${all.length > MAX_PRINTED_LINES ? ` (its last ${MAX_PRINTED_LINES} of ${all.length} lines)` : ''}:`,
          ...all.slice(-MAX_PRINTED_LINES),
        );
      }
      console.log(lines.join('\n'));
    }
    from = new Map(files.map((f) => [f, size(f)]));
  };
}

function answers(): boolean {
  return spawnSync('sinfo', ['-h', '-o', '%T'], { encoding: 'utf8', timeout: 10_000 }).stdout?.trim().length > 0;
}

const LOCK = path.join(os.tmpdir(), 'rc1-slurm-tests.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Every one-node cluster listens on 6817/6818, and the slow tier runs test files two at a time
 * (--test-concurrency=2): one test process at a time holds the cluster. Waits for a holder that
 * is alive; takes over the lock of one that died. Returns the release.
 */
function takeClusterLock(timeoutMs = 30 * 60_000): () => void {
  const t0 = Date.now();
  for (;;) {
    // The pid is written whole under a name of our own, then linked to LOCK (atomic, EEXIST when
    // held): a reader never sees the lock empty and judges a live holder dead.
    const mine = `${LOCK}.${process.pid}`;
    fs.writeFileSync(mine, String(process.pid));
    let linked = false;
    try {
      fs.linkSync(mine, LOCK);
      linked = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      fs.rmSync(mine, { force: true });
    }
    if (linked) {
      return () => {
        try {
          if (fs.readFileSync(LOCK, 'utf8') === String(process.pid)) fs.rmSync(LOCK);
        } catch {
          /* gone */
        }
      };
    }
    let holder = 0;
    try {
      holder = Number(fs.readFileSync(LOCK, 'utf8'));
    } catch {
      continue; // released between the two calls
    }
    if (!Number.isInteger(holder) || holder <= 0 || !alive(holder)) {
      fs.rmSync(LOCK, { force: true });
      continue;
    }
    if (Date.now() - t0 > timeoutMs)
      throw new Error(
        `the one-node Slurm cluster has been held by test process ${holder} for ${timeoutMs / 60_000} min (${LOCK})`,
      );
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
}

/** The cluster for this test file; sets SLURM_CONF for the CLIs the tests spawn. Throws when none can be had. */
export function startCluster(): Cluster {
  if (!onPath('sbatch')) throw new Error(`Slurm is not installed, and CI=true requires these tests: ${INSTALL}`);
  if (process.env.SLURM_CONF && answers())
    return { conf: process.env.SLURM_CONF, afterTest: failureLogs(process.env.SLURM_CONF), stop: () => undefined };
  const release = takeClusterLock();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-slurm-test-'));
  const up = spawnSync('bash', [path.join(REPO, 'test/servers/slurm-up.sh')], {
    env: { ...process.env, DIR: dir },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (up.status !== 0) {
    spawnSync('bash', [path.join(REPO, 'test/servers/slurm-down.sh')], {
      env: { ...process.env, DIR: dir },
      stdio: 'ignore',
    });
    release();
    throw new Error(`test/servers/slurm-up.sh failed (exit ${up.status}):\n${up.stdout}${up.stderr}`);
  }
  process.env.SLURM_CONF = path.join(dir, 'slurm.conf');
  return {
    conf: process.env.SLURM_CONF,
    afterTest: failureLogs(process.env.SLURM_CONF),
    stop: () => {
      spawnSync('bash', [path.join(REPO, 'test/servers/slurm-down.sh')], {
        env: { ...process.env, DIR: dir },
        stdio: 'ignore',
        timeout: 120_000,
      });
      fs.rmSync(dir, { recursive: true, force: true });
      release();
    },
  };
}

/** `scontrol show job -o ID` fields (JobState, Restarts, ExitCode, …); {} when Slurm no longer knows the job. */
export function jobFields(id: string): Record<string, string> {
  let text = '';
  try {
    text = execFileSync('scontrol', ['show', 'job', '-o', id], { encoding: 'utf8' });
  } catch {
    return {};
  }
  return Object.fromEntries(
    text
      .trim()
      .split(/\s+/)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** Whether `squeue -j ID` (default states: pending, running, completing…) still lists the job. */
export function inQueue(id: string): boolean {
  const r = spawnSync('squeue', ['-h', '-j', id, '-o', '%T'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim().length > 0;
}

export async function waitFor(what: string, cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** How far past the second of the requeue the release waits (the controller's clock against this host's). */
const RELEASE_MARGIN_MS = 250;

/**
 * `scontrol requeue ID` of a running job, then its release, as an admin would (Slurm holds a
 * requeued job back: BeginTime): `scontrol update JobId=ID StartTime=now` once the job is pending
 * again, `beforeRelease` holds (what else the test needs first) and the clock has passed the
 * second in which the job was requeued.
 *
 * That last wait is Slurm's rule, not caution: the requeue revokes the job's launch credential
 * on its node, stamped with slurmctld's clock in whole seconds, and slurmd launches a later run
 * only with a credential made in a later second (slurm_cred_revoked: ctime <= revoked). Released
 * within the requeue's second, the next run is refused ("Job N already killed, do not launch
 * batch job" in slurmd.log) and slurmctld ends the job FAILED with exit code 1 ("Killing
 * non-startable batch JobId=N: Job credential revoked"): the build then rightly reports a failed
 * job. Slurm's own hold (BeginTime: the requeue plus the credential's lifetime) exists to avoid
 * this; a release right after a first run that stopped within a second defeated it.
 */
export async function requeueAndRelease(id: string, beforeRelease?: () => Promise<void>): Promise<void> {
  execFileSync('scontrol', ['requeue', id]);
  const requeuedBy = Date.now(); // slurmctld stamped the revocation during the call: at or before this
  await waitFor(`job ${id} to be pending again after scontrol requeue`, () => jobFields(id).JobState === 'PENDING');
  await beforeRelease?.();
  const release = (Math.floor(requeuedBy / 1000) + 1) * 1000 + RELEASE_MARGIN_MS;
  if (Date.now() < release) await new Promise((r) => setTimeout(r, release - Date.now()));
  execFileSync('scontrol', ['update', `JobId=${id}`, 'StartTime=now']);
}

/** A rule that counts to 8 in its state dir (0.75 s a step: once a test sees step 2, ~4.5 s are left to interrupt it), resuming after the last step it saved; logs where its state is. */
export const COUNT_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({
  name: 'count', version: 1,
  async run(ctx) {
    const saved = path.join(ctx.stateDir, 'step');
    let step = fs.existsSync(saved) ? Number(fs.readFileSync(saved, 'utf8')) : 0;
    fs.appendFileSync(path.join(ctx.stateDir, 'starts'), step + '\\n');
    ctx.log('count: state in ' + ctx.stateDir);
    if (step) ctx.log('count: resuming after step ' + step);
    while (step < 8 && !ctx.signal.aborted) {
      await new Promise((r) => setTimeout(r, 750));
      fs.writeFileSync(saved, String(++step));
      ctx.log('count: step ' + step);
      ctx.progress(step, 8, 'steps');
    }
    if (ctx.signal.aborted) throw new Error('interrupted');
    fs.writeFileSync(ctx.output('out/count.txt'), 'counted to ' + step + ', started at ' + fs.readFileSync(path.join(ctx.stateDir, 'starts'), 'utf8').trim().split('\\n').join(', ') + '\\n');
  },
});
`;
