// The preflight checks (docs/rc1.md, target preflight_checks) beside the weights
// file's (weights-file.ts): the PPO run config (configs/ppo_scale.yaml, key ppo) and free disk.
//   ppo.simulate == false, ppo.live_mode == true (waived outside prod: the dev profile has no live
//   judge), ppo.datasets == pool.mix (the seed pool's task mix), ppo.steps ≥ min_steps,
//   ppo.target_kl within [lo, hi], distinct ppo.seeds ≥ min_seeds, ppo.finetune.method ==
//   finetune_method (qlora), ppo.use_overclar_penalty == true, ppo.reward.beta == reward.beta
//   (training uses the reward the shadow run evaluated); every threshold from preflight.ppo
//   (prod values in configs/evaluation.yaml, the dev profile's own small ones over them).
//   disk: free space (statfs, blocks available to this user) of the workspace's filesystem in
//   GiB (2^30 bytes, as the seeds' shutil check) > min_free_disk_gb. Measured when the gate runs:
//   it is not part of the gate's key, so after freeing space rerun it with --force. The check
//   records only whether the space is above the threshold (and the threshold): the measured
//   figure differs per machine and minute, so it goes to the rule's log, never into the report,
//   which must hash the same wherever the same inputs are built.
import { statfsSync } from 'node:fs';
import { check, gatePasses, waive, type Check } from 'rc1-build';
import type { PpoConfig, PreflightConfig } from './config.ts';

const sortedKeys = (o: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]!]),
  );

export function ppoChecks(
  ppo: PpoConfig,
  o: { preflight: Pick<PreflightConfig, 'ppo'>; poolMix: Record<string, number>; rewardBeta: number; profile: string },
): Check[] {
  const t = o.preflight.ppo;
  const file = 'configs/ppo_scale.yaml';
  const live = check(
    'ppo.live_mode',
    ppo.live_mode,
    '==',
    true,
    `${file}: live_mode must be true: training scores with the live judge`,
  );
  return [
    check('ppo.simulate', ppo.simulate, '==', false, `${file}: simulate must be false (RC1: no simulated anything)`),
    o.profile === 'prod' ? live : waive(live, `profile ${o.profile}`),
    check(
      'ppo.datasets',
      sortedKeys(ppo.datasets),
      '==',
      sortedKeys(o.poolMix),
      `${file}: datasets must be the seed pool's task mix (pool.mix)`,
    ),
    check('ppo.steps', ppo.steps, '>=', t.min_steps, `${file}: steps below preflight.ppo.min_steps`),
    check('ppo.target_kl', ppo.target_kl, 'in', t.target_kl, `${file}: target_kl outside [${t.target_kl.join(', ')}]`),
    check(
      'ppo.seeds',
      new Set(ppo.seeds).size,
      '>=',
      t.min_seeds,
      `${file}: list at least ${t.min_seeds} distinct seeds`,
    ),
    check(
      'ppo.finetune.method',
      ppo.finetune.method,
      '==',
      t.finetune_method,
      `${file}: finetune.method must be ${t.finetune_method}`,
    ),
    check(
      'ppo.use_overclar_penalty',
      ppo.use_overclar_penalty,
      '==',
      true,
      `${file}: use_overclar_penalty must be true (the over-clarification penalty is part of the reward)`,
    ),
    check(
      'ppo.reward.beta',
      ppo.reward.beta,
      '==',
      o.rewardBeta,
      `${file}: reward.beta must equal reward.beta of configs/evaluation.yaml, the β the shadow run evaluated`,
    ),
  ];
}

/** Free space of the filesystem holding `dir`, in GiB. */
export function freeDiskGiB(dir: string): number {
  const s = statfsSync(dir);
  return (Number(s.bavail) * Number(s.bsize)) / 2 ** 30;
}

/** Free space above min_free_disk_gb, recorded as pass/fail against the threshold (not the figure). */
export function diskCheck(freeGiB: number, minGiB: number): Check {
  return check(
    'disk.free_gb_above_min',
    freeGiB > minGiB,
    '==',
    true,
    `free disk space above ${minGiB} GiB for checkpoints, logs and quantised models, or move the workspace (the measured figure is in the rule's log)`,
  );
}

/** The log line with the measured figure (kept out of the report). */
export function diskLogLine(freeGiB: number, minGiB: number): string {
  return `disk: ${(Math.round(freeGiB * 10) / 10).toFixed(1)} GiB free on the workspace's filesystem (preflight.min_free_disk_gb ${minGiB})`;
}

/** The seeds' OK lines, for the checks that passed (waived ones say so). */
export function okLines(
  groups: { weights: Check[]; ppo: Check[]; disk: Check & { minGiB: number } },
  weightsSha: string,
): string[] {
  const lines: string[] = [];
  const allPass = (cs: Check[]): boolean => gatePasses(cs);
  const waived = (cs: Check[]): string => {
    const w = cs.filter((c) => c.status === 'waived').map((c) => c.name);
    return w.length ? ` (waived: ${w.join(', ')})` : '';
  };
  if (allPass(groups.weights)) lines.push(`WEIGHTS_OK sha256=${weightsSha}`);
  if (allPass(groups.ppo)) lines.push(`PPO_CFG_OK${waived(groups.ppo)}`);
  if (groups.disk.pass) lines.push(`DISK_OK >${String(groups.disk.minGiB)}GB`);
  return lines;
}
