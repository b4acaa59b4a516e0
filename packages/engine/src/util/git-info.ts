// The git state a manifest and an error report record: HEAD's commit and whether tracked files
// differ from it (git-state.ts: one `git status`, none outside a git work tree). Asked once per
// build, asynchronously: it starts when the first rule starts and overlaps with the rules, instead
// of blocking the build for ~10–30 ms at the end. A no-op never asks.
import { createRequire } from 'node:module';
import { type GitState, gitState } from './git-state.ts';

export type GitInfo = GitState;

/** One git lookup per build, started on first use and shared by every later caller. */
export class GitLookup {
  private pending: Promise<GitInfo> | null;
  /** `asked`: a lookup already under way (the run history's), used instead of asking again. */
  constructor(
    private readonly root: string,
    asked?: Promise<GitInfo>,
  ) {
    this.pending = asked ?? null;
  }
  /** Start the lookup now (if not yet started), without waiting for it. */
  start(): void {
    this.pending ??= gitState(this.root);
  }
  get(): Promise<GitInfo> {
    this.start();
    return this.pending!;
  }
}

/** The same, synchronously: for the rare no-op that finds a manifest without a recorded git state. */
export function gitInfoSync(root: string): GitInfo {
  const { execFileSync } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}
