// The train target's checkpoint dir as another rule receives it (export_gguf, ppo_eval): among an
// input group's paths, the one directory holding `latest`; and a checkpoint of it resolved to its
// real step dir with its checkpoint.json, refused clearly when it is not the built-in policy; and
// the check that every seed's run started from the SFT policy it is judged against.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { RuleError } from 'rc1-build';
import type { CheckpointMeta } from './api.ts';

/** The checkpoint dir among a group's paths: the directory holding `latest`. */
export function checkpointDirOf(paths: readonly string[], target: string): string {
  const dirs = paths.filter((p) => existsSync(join(p, 'latest')) && statSync(p).isDirectory());
  if (dirs.length !== 1) {
    throw new RuleError(
      `${target}: the \`checkpoints\` input must hold one checkpoint dir with a \`latest\` link (declare target('train'), whose output is checkpoints/rc1/); it holds ${paths.map((p) => basename(p)).join(', ') || 'nothing'}`,
    );
  }
  return dirs[0]!;
}

export interface PolicyCheckpoint {
  dir: string;
  name: string;
  meta: CheckpointMeta;
}

/** `latest`, `initial`, `best` or a step dir of the checkpoint dir, resolved, holding a built-in policy. */
export function builtInCheckpoint(checkpointDir: string, which: string, target: string): PolicyCheckpoint {
  const link = join(checkpointDir, which);
  if (!existsSync(join(link, 'checkpoint.json'))) {
    throw new RuleError(
      `${target}: ${basename(checkpointDir)}/${which} is missing or incomplete (no checkpoint.json)${which === 'initial' ? ': the built-in engine writes initial/ (the policy before training) when a run starts; rebuild with --force train' : ''}`,
    );
  }
  const dir = realpathSync(link);
  const meta = JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8')) as CheckpointMeta;
  if (meta.format === 'external' || !existsSync(join(dir, 'model.json'))) {
    throw new RuleError(
      `${target}: ${basename(checkpointDir)}/${which} (${basename(dir)}) is an external trainer's checkpoint (engine ${meta.engine}), not the built-in policy this rule reads. Evaluate or convert an external model with its own tooling (for a Qwen3 QLoRA run: merge the adapter, convert with llama.cpp's convert_hf_to_gguf.py, evaluate offline with llama.cpp)`,
    );
  }
  return { dir, name: which === basename(dir) ? which : `${which} → ${basename(dir)}`, meta };
}

/**
 * Refuses unless every seed's `initial/` (the policy its run started from, its KL reference) holds
 * the same model.bin, byte for byte, as the SFT policy in `sftDir`: otherwise gains and KL would be
 * measured against a policy the runs never started from.
 */
export function assertStartedFromSft(
  sftDir: string,
  runs: readonly { seed: number; dir: string }[],
  target: string,
  root: string,
): void {
  const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
  const sftBin = join(sftDir, 'model.bin');
  if (!existsSync(sftBin))
    throw new RuleError(
      `${target}: ${relative(root, sftBin)} is missing: the \`sft\` input holds no model.bin (rebuild sft)`,
    );
  const want = sha(sftBin);
  for (const r of runs) {
    const init = builtInCheckpoint(r.dir, 'initial', target);
    const got = sha(join(init.dir, 'model.bin'));
    if (got !== want) {
      throw new RuleError(
        `${target}: ${relative(root, join(r.dir, 'initial', 'model.bin'))} (sha256 ${got.slice(0, 12)}…) differs from the SFT policy ${relative(root, sftBin)} (sha256 ${want.slice(0, 12)}…): seed ${r.seed} did not start from this sft model, so PPO cannot be judged against it; rebuild train after sft (\`npx rc1-build train\`)`,
      );
    }
  }
}
