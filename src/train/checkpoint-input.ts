// The train target's checkpoint dir as another rule receives it (export_gguf, ppo_eval): among an
// input group's paths, the one directory holding `latest`; and a checkpoint of it resolved to its
// real step dir with its checkpoint.json, refused clearly when it is not the built-in policy.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RuleError } from '../api/index.ts';
import type { CheckpointMeta } from './api.ts';

/** The checkpoint dir among a group's paths: the directory holding `latest`. */
export function checkpointDirOf(paths: readonly string[], target: string): string {
  const dirs = paths.filter((p) => existsSync(join(p, 'latest')) && statSync(p).isDirectory());
  if (dirs.length !== 1) {
    throw new RuleError(`${target}: the \`checkpoints\` input must hold one checkpoint dir with a \`latest\` link (declare target('train'), whose output is checkpoints/rc1/); it holds ${paths.map((p) => basename(p)).join(', ') || 'nothing'}`);
  }
  return dirs[0]!;
}

export interface PolicyCheckpoint { dir: string; name: string; meta: CheckpointMeta }

/** `latest`, `initial`, `best` or a step dir of the checkpoint dir, resolved, holding a built-in policy. */
export function builtInCheckpoint(checkpointDir: string, which: string, target: string): PolicyCheckpoint {
  const link = join(checkpointDir, which);
  if (!existsSync(join(link, 'checkpoint.json'))) {
    throw new RuleError(`${target}: ${basename(checkpointDir)}/${which} is missing or incomplete (no checkpoint.json)${which === 'initial' ? ': the built-in engine writes initial/ (the policy before training) when a run starts; rebuild with --force train' : ''}`);
  }
  const dir = realpathSync(link);
  const meta = JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8')) as CheckpointMeta;
  if (meta.format === 'external' || !existsSync(join(dir, 'model.json'))) {
    throw new RuleError(`${target}: ${basename(checkpointDir)}/${which} (${basename(dir)}) is an external trainer's checkpoint (engine ${meta.engine}), not the built-in policy this rule reads. Evaluate or convert an external model with its own tooling (for a Qwen3 QLoRA run: merge the adapter, convert with llama.cpp's convert_hf_to_gguf.py, evaluate offline with llama.cpp)`);
  }
  return { dir, name: which === basename(dir) ? which : `${which} → ${basename(dir)}`, meta };
}
