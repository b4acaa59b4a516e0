// initial/: the policy before training — the frozen reference policy of the KL term and the
// baseline the ppo_eval gate compares against. Written once, when a run starts fresh, as a sealed
// checkpoint-format dir (model.json, model.bin, checkpoint.json) built under a temp name and
// renamed into place, so it is either complete or absent.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StrategyName } from '../../config.ts';
import { sealCheckpoint } from '../../checkpoints.ts';
import type { NetShape, Params } from '../../mlp.ts';
import { writeModelFiles } from '../../policy.ts';

export async function writeInitialPolicy(
  checkpointDir: string,
  params: Params,
  shape: NetShape,
  maxTurns: number,
  configHash: string,
  backend: string,
  strategy: StrategyName,
): Promise<string> {
  const dir = join(checkpointDir, 'initial');
  if (existsSync(join(dir, 'checkpoint.json'))) return dir;
  await mkdir(checkpointDir, { recursive: true });
  const tmp = join(checkpointDir, `.tmp-initial-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp);
  await writeModelFiles(tmp, shape, params, maxTurns);
  await sealCheckpoint(tmp, {
    format: 'rc1-train-checkpoint-v1',
    step: 0,
    config_hash: configHash,
    engine: 'tfjs',
    strategy,
    backend,
    state: null,
  });
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
  return dir;
}
