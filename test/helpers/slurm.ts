// A Slurm cluster for the tests of the Slurm executor: the one SLURM_CONF names when it answers
// (sinfo), else a one-node cluster started on 127.0.0.1 by test/servers/slurm-up.sh (ports 6817 and
// 6818) and stopped again after the tests. Without Slurm installed the tests are skipped with the
// reason — except under CI=true, where they fail: CI must install it (slurmctld slurmd slurm-client munge).
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
  stop(): void;
}

function answers(): boolean {
  return spawnSync('sinfo', ['-h', '-o', '%T'], { encoding: 'utf8', timeout: 10_000 }).stdout?.trim().length > 0;
}

/** The cluster for this test file; sets SLURM_CONF for the CLIs the tests spawn. Throws when none can be had. */
export function startCluster(): Cluster {
  if (!onPath('sbatch')) throw new Error(`Slurm is not installed, and CI=true requires these tests: ${INSTALL}`);
  if (process.env.SLURM_CONF && answers()) return { conf: process.env.SLURM_CONF, stop: () => undefined };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-slurm-test-'));
  const up = spawnSync('bash', [path.join(REPO, 'test/servers/slurm-up.sh')], {
    env: { ...process.env, DIR: dir },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (up.status !== 0)
    throw new Error(`test/servers/slurm-up.sh failed (exit ${up.status}):\n${up.stdout}${up.stderr}`);
  process.env.SLURM_CONF = path.join(dir, 'slurm.conf');
  return {
    conf: process.env.SLURM_CONF,
    stop: () => {
      spawnSync('bash', [path.join(REPO, 'test/servers/slurm-down.sh')], {
        env: { ...process.env, DIR: dir },
        stdio: 'ignore',
        timeout: 120_000,
      });
      fs.rmSync(dir, { recursive: true, force: true });
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
