// Per-target state dirs: `.rc1/state/<target>/`, a directory the engine gives each rule
// (`ctx.stateDir`) for state that must outlive one build but is no output — a training run's
// checkpoints, metrics and previous runs, say, so that an interrupted build resumes. The engine
// never hashes, caches or restores what is in it. Whatever must find these dirs (`clean`, `gc`)
// finds them through targetStateDir / TARGET_STATE_ROOT, never through a rule's own path.
import * as path from 'node:path';

/** The folder under the workspace's state dir (`.rc1`) that holds every target's state dir. */
export const TARGET_STATE_ROOT = 'state';

/** Absolute path of a target's state dir, given the workspace's state dir (`<root>/.rc1`). */
export function targetStateDir(stateDir: string, target: string): string {
  return path.join(stateDir, TARGET_STATE_ROOT, target);
}
