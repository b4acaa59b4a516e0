// The git state a manifest and an error report record: HEAD's commit and whether tracked files
// differ from it. Asked once per build, and asynchronously: the two `git` runs start when the first
// rule starts and overlap with the rules, instead of blocking the build for ~10–30 ms at the end.
// node:child_process is loaded only then (a no-op never asks).
import type { ExecFileException } from 'node:child_process';
import { createRequire } from 'node:module';

export interface GitInfo { commit: string | null; dirty: boolean | null }

function git(root: string, args: string[]): Promise<string | null> {
  return import('node:child_process').then(({ execFile }) => new Promise((resolve) => {
    execFile('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err: ExecFileException | null, stdout: string) => resolve(err ? null : stdout));
  }));
}

/** HEAD's commit and whether tracked files differ from it; nulls outside a git work tree (or without git). */
export async function gitInfo(root: string): Promise<GitInfo> {
  const [commit, status] = await Promise.all([git(root, ['rev-parse', 'HEAD']), git(root, ['status', '--porcelain', '--untracked-files=no'])]);
  if (commit === null || status === null) return { commit: null, dirty: null };
  return { commit: commit.trim(), dirty: status.trim().length > 0 };
}

/** One git lookup per build, started on first use and shared by every later caller. */
export class GitLookup {
  private pending: Promise<GitInfo> | null = null;
  constructor(private readonly root: string) {}
  /** Start the lookup now (if not yet started), without waiting for it. */
  start(): void {
    this.pending ??= gitInfo(this.root);
  }
  get(): Promise<GitInfo> {
    this.start();
    return this.pending!;
  }
  get started(): boolean {
    return this.pending !== null;
  }
}

/** The same, synchronously: for the rare no-op that finds a manifest without a recorded git state. */
export function gitInfoSync(root: string): GitInfo {
  const { execFileSync } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}
