// The training work dir's old runs. A run that a build does not continue (--force, or another
// config, data or code) is moved whole into `previous-<ISO time>/` beside the live one, so nothing
// a GPU made is deleted by a rebuild; at most `keep` such dirs are kept (train.keep_previous_runs),
// the oldest removed first. Names sort by time, so the order is the names' order.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const PREVIOUS_PREFIX = 'previous-';
/** What a run consists of in the work dir (everything else there is previous-* dirs). */
const RUN_ENTRIES = ['checkpoints', 'metrics.jsonl', 'train.log', 'run.json', 'config_effective.yaml', 'command'];

/** The previous-* dirs of a work dir, oldest first. */
export function previousRuns(workDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(workDir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(PREVIOUS_PREFIX)).sort();
}

/** Removes all but the newest `keep` previous-* dirs. Returns the names removed, oldest first. */
export function prunePrevious(workDir: string, keep: number): string[] {
  const all = previousRuns(workDir);
  const removed: string[] = [];
  for (const n of all.slice(0, Math.max(0, all.length - keep))) {
    rmSync(join(workDir, n), { recursive: true, force: true });
    removed.push(n);
  }
  return removed;
}

/** Moves the live run into previous-<ts>/ and prunes to `keep`; returns the new dir and the pruned names. */
export function moveAside(workDir: string, keep: number, now = new Date()): { dest: string; pruned: string[] } {
  let name = `${PREVIOUS_PREFIX}${now.toISOString().replace(/[:.]/g, '-')}`;
  for (let i = 1; existsSync(join(workDir, name)); i++)
    name = `${PREVIOUS_PREFIX}${now.toISOString().replace(/[:.]/g, '-')}-${i}`;
  const dest = join(workDir, name);
  mkdirSync(dest, { recursive: true });
  for (const entry of RUN_ENTRIES) {
    if (existsSync(join(workDir, entry))) renameSync(join(workDir, entry), join(dest, entry));
  }
  return { dest, pruned: prunePrevious(workDir, keep) };
}
