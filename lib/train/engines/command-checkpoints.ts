// The checkpoint half of the `command` engine's contract. The external trainer writes
// `$RC1_CHECKPOINT_DIR/step_XXXXX/` (5 digits at least, zero-padded) and, last, a file named
// COMPLETE inside it: a step dir without COMPLETE is still being written (or was abandoned by a
// crash) and is never used. rc1-build then "adopts" the checkpoint: checkpoints.ts sealCheckpoint
// hashes every file (sha256 per file), fsyncs them and renames `checkpoint.json` (the trainer API's
// CheckpointMeta, format "external") into place; then the checkpoint callback moves `latest` and
// rotates old steps. The trainer never writes checkpoint.json, `latest`, `best/` or `initial/`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JsonValue } from 'rc1-build';
import type { CheckpointInfo } from '../api.ts';
import { META_FILE as CHECKPOINT_META, sealCheckpoint, stepDirName } from '../checkpoints.ts';
import { ContractViolation } from './command-metrics.ts';

export { stepDirName };
export const COMPLETE_MARKER = 'COMPLETE';
const STEP_DIR = /^step_(\d{5,})$/;

export interface StepDir {
  step: number;
  name: string;
  dir: string;
  /** COMPLETE exists: the trainer finished writing it. */
  complete: boolean;
  /** checkpoint.json exists: rc1-build adopted it. */
  adopted: boolean;
}

/** The step_XXXXX dirs of a checkpoint dir, by step (other entries — latest, best, initial — are not steps). */
export function scanStepDirs(checkpointDir: string): StepDir[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(checkpointDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: StepDir[] = [];
  for (const e of entries) {
    const m = STEP_DIR.exec(e.name);
    if (!m || !e.isDirectory()) continue;
    const dir = path.join(checkpointDir, e.name);
    out.push({
      step: Number(m[1]),
      name: e.name,
      dir,
      complete: fs.existsSync(path.join(dir, COMPLETE_MARKER)),
      adopted: fs.existsSync(path.join(dir, CHECKPOINT_META)),
    });
  }
  return out.sort((a, b) => a.step - b.step);
}

/**
 * Removes step dirs after the resume point: what an interrupted run left (half-written dirs, or
 * complete ones whose step the resumed trainer will write again). Returns their names.
 */
export function discardAfter(checkpointDir: string, step: number): string[] {
  const gone: string[] = [];
  for (const d of scanStepDirs(checkpointDir)) {
    if (d.step <= step) continue;
    fs.rmSync(d.dir, { recursive: true, force: true });
    gone.push(d.name);
  }
  return gone;
}

/** Every regular file under dir (relative POSIX paths, sorted); a symlink or special file breaks the contract. */
export function checkpointFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      const childAbs = path.join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(childAbs, childRel);
      else if (e.isFile()) files.push(childRel);
      else
        throw new ContractViolation(
          `${childAbs}: a checkpoint holds regular files and directories only (found a ${e.isSymbolicLink() ? 'symbolic link' : 'special file'})`,
        );
    }
  };
  walk(dir, '');
  return files.sort();
}

export interface AdoptOptions {
  configHash: string;
  backend: string;
}

/** Seals a complete step dir (sha256 per file into checkpoint.json, fsynced) and returns what the checkpoint callback takes. */
export async function adoptCheckpoint(d: StepDir, o: AdoptOptions): Promise<CheckpointInfo> {
  if (checkpointFiles(d.dir).filter((f) => f !== COMPLETE_MARKER).length === 0) {
    throw new ContractViolation(
      `${d.dir}: the checkpoint holds nothing but ${COMPLETE_MARKER}: write the model state first, ${COMPLETE_MARKER} last`,
    );
  }
  let marker: JsonValue = null;
  try {
    marker = JSON.parse(fs.readFileSync(path.join(d.dir, COMPLETE_MARKER), 'utf8')) as JsonValue;
  } catch {
    marker = null;
  }
  const meta = await sealCheckpoint(d.dir, {
    format: 'external',
    step: d.step,
    config_hash: o.configHash,
    engine: 'command',
    strategy: 'external',
    backend: o.backend,
    state: { complete: marker },
  });
  return { step: d.step, dir: d.dir, meta };
}

/**
 * Watches a checkpoint dir for newly completed step dirs (polled: the trainer may write from
 * another machine's mount, where fs.watch sees nothing) and enforces their order.
 */
export class CheckpointWatcher {
  lastStep: number;
  readonly adopted: CheckpointInfo[] = [];

  constructor(
    private readonly checkpointDir: string,
    private readonly bounds: { after: number; max: number },
  ) {
    this.lastStep = bounds.after;
  }

  /** Newly complete step dirs, in step order (not yet adopted). */
  poll(): StepDir[] {
    const fresh: StepDir[] = [];
    for (const d of scanStepDirs(this.checkpointDir)) {
      if (d.step <= this.bounds.after || !d.complete) continue;
      if (this.adopted.some((a) => a.step === d.step)) continue;
      if (d.adopted)
        throw new ContractViolation(
          `${d.dir}: ${CHECKPOINT_META} is written by rc1-build, not by the trainer (close a checkpoint with ${COMPLETE_MARKER})`,
        );
      if (d.step > this.bounds.max)
        throw new ContractViolation(`${d.dir}: step ${d.step} is beyond train.steps (${this.bounds.max})`);
      if (d.step <= this.lastStep)
        throw new ContractViolation(
          `${d.dir}: completed after step ${this.lastStep}: checkpoints must be completed in increasing step order`,
        );
      fresh.push(d);
      this.lastStep = d.step;
    }
    return fresh;
  }

  record(info: CheckpointInfo): void {
    this.adopted.push(info);
  }

  get last(): CheckpointInfo | null {
    return this.adopted.at(-1) ?? null;
  }
}
