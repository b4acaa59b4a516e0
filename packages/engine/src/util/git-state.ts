// The git state of a workspace (HEAD commit and whether tracked files differ from it), asked of
// git asynchronously so a caller can start it early and await it later: the run history records
// it for every build, and a no-op build must not wait for git.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Whether root or a directory above it holds .git (no git process for a workspace outside git). */
function insideGit(root: string): boolean {
  for (let d = path.resolve(root); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

export interface GitState {
  commit: string | null;
  dirty: boolean | null;
}

/** `git status --porcelain=v2 --branch`: one process gives both the commit and the dirty state. */
export async function gitState(root: string): Promise<GitState> {
  if (!insideGit(root)) return { commit: null, dirty: null };
  const { execFile } = await import('node:child_process'); // not loaded by commands that never ask
  return new Promise((resolve) => {
    execFile(
      'git',
      ['status', '--porcelain=v2', '--branch', '--untracked-files=no'],
      { cwd: root, maxBuffer: 64 << 20 },
      (err, stdout) => {
        if (err) {
          resolve({ commit: null, dirty: null });
          return;
        }
        let commit: string | null = null;
        let dirty = false;
        for (const line of stdout.split('\n')) {
          if (line.startsWith('# branch.oid ')) {
            const oid = line.slice('# branch.oid '.length).trim();
            commit = /^[0-9a-f]{40,64}$/.test(oid) ? oid : null; // "(initial)": no commit yet
          } else if (line && !line.startsWith('#')) dirty = true;
        }
        resolve({ commit, dirty });
      },
    );
  });
}

/** The commit a revision names (`HEAD~1`, a tag, a short hash), or null. */
export async function revParse(root: string, rev: string): Promise<string | null> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: root }, (err, stdout) =>
      resolve(err ? null : stdout.trim() || null),
    );
  });
}
