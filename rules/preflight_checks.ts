// preflight_checks (docs/rc1.md): the weights file valid (all 7 dimensions,
// each ≥ 0, sum 1 ± preflight.weights.sum_tolerance, each ≤ preflight.weights.max_weight) with a
// `WEIGHTS_OK sha256=<sha256 of configs/weights.json>` line; the PPO run config (param ppo, from
// configs/ppo_scale.yaml and the profile) against preflight.ppo; free disk against
// preflight.min_free_disk_gb (lib/evaluation/preflight.ts, weights-file.ts): the report records
// pass/fail against the threshold; the measured free space goes to the log (it would make the
// report differ per machine).
// Input groups: weights (configs/weights.json; other files of the weights target are passed
// over), ppo_config (configs/ppo_scale.yaml: hashed into the report; the values checked are the
// resolved `ppo` param, profile overlay included). Output [0]: reports/preflight/checks.json.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { defineRule } from 'rc1-build';
import {
  diskCheck,
  diskLogLine,
  freeDiskGiB,
  okLines,
  ppoChecks,
  ppoSchema,
  preflightSchema,
  rewardSchema,
  sha256File,
  weightsChecks,
} from '../lib/evaluation/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'preflight_checks',
  version: 1,
  params: z.object({
    ppo: ppoSchema,
    preflight: preflightSchema.omit({ rounds: true }),
    reward: rewardSchema.pick({ beta: true }),
    pool: z.object({ mix: z.record(z.string(), z.number()) }),
  }),
  async run(ctx) {
    const weightsFile = ctx.input('weights');
    const ppoFiles = ctx.inputs('ppo_config');
    const { ppo, preflight, reward, pool } = ctx.params;
    const w = weightsChecks(readFileSync(weightsFile), {
      sumTolerance: preflight.weights.sum_tolerance,
      maxWeight: preflight.weights.max_weight,
    });
    const ppoCs = ppoChecks(ppo, { preflight, poolMix: pool.mix, rewardBeta: reward.beta, profile: ctx.profile });
    const free = freeDiskGiB(ctx.root);
    const disk = diskCheck(free, preflight.min_free_disk_gb);
    ctx.log(diskLogLine(free, preflight.min_free_disk_gb));
    const lines = okLines(
      { weights: w.checks, ppo: ppoCs, disk: { ...disk, minGiB: preflight.min_free_disk_gb } },
      w.sha256,
    );
    for (const l of lines) ctx.log(l);
    ctx.progress(1, 1);
    return {
      checks: [...w.checks, ...ppoCs, disk],
      report: {
        lines,
        weights: { path: relative(ctx.root, weightsFile), sha256: w.sha256, weights: w.weights },
        ppo_config: {
          files: ppoFiles.map((f) => ({ path: relative(ctx.root, f), sha256: sha256File(f) })),
          effective: ppo,
        },
        disk: {
          path: '.',
          min_free_gib: preflight.min_free_disk_gb,
          above_min: disk.pass,
          unit: 'GiB (2^30 bytes)',
          measured:
            'statfs of the workspace when the gate ran (not part of its key); the figure is in the log, not here, so the report is the same on every machine',
        },
      },
      summary: lines.join('; ') || 'no OK line: see the failed checks',
    };
  },
});
