// The no-op build's fast path, run by bin/rc1-build.js before the engine is loaded (bundled
// alone as dist/noop.cjs: node:fs and node:path; node:crypto only for a variable that is set,
// node:child_process only for git in a git checkout).
// When the workspace's up-to-date stamp (state/uptodate-stamp.ts) was written for this very
// command line, and nothing it lists has changed, the build would decide every target up to date
// and write nothing but a line of run history. So this takes the workspace lock, checks the
// stamp's paths under it, appends that line and prints the build's last line. On any difference,
// or anything it cannot tell, it answers null and the full build runs as if it had never looked.
// Only what a check that fails needs is loaded with it; the lock, the history, git and colours
// are imported once the quick look found nothing changed (esbuild keeps them lazy in the bundle).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { changedOnDisk, readStamp, stampMismatch, stampText } from '../state/uptodate-stamp.ts';

/** Files the quick look (before the lock) compares: the inputs and code edited last. */
const QUICK_FILES = 64;

export interface FastIo {
  out: (s: string) => void;
  err: (s: string) => void;
  stdout: { isTTY?: boolean };
  /** Why the fast path did not answer, or that it did (RC1_DEBUG=fastpath; tests). */
  why?: (reason: string) => void;
  /** This engine's dist/noop.cjs: a stamp another engine wrote (node_modules/rc1-build re-pointed) does not answer. */
  engineFile?: string;
}

/** The exit code of the no-op this command line would be (0), or null: run the full build. */
export async function fastNoop(
  root: string,
  argv: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  io: FastIo,
): Promise<number | null> {
  const t0 = performance.now();
  const startedAt = new Date();
  const no = (why: string): null => {
    io.why?.(why);
    return null;
  };
  const stateDir = path.join(root, '.rc1');
  const read = readStamp(stateDir);
  if (!read) return no('no stamp');
  const s = read.stamp;
  let salt: string;
  try {
    salt = fs.readFileSync(path.join(stateDir, 'salt'), 'utf8').trim();
  } catch {
    return no('no salt');
  }
  const differs = stampMismatch(s, {
    root,
    cwd,
    argv,
    env,
    salt,
    ...(io.engineFile !== undefined ? { engineFile: io.engineFile } : {}),
  });
  if (differs) return no(differs);
  const early = changedOnDisk(s, QUICK_FILES);
  if (early) return no(`changed: ${early}`);
  const [{ RunHistory, traceStamp }, { WorkspaceLock }, { painter, colourEnabled }, { gitState }, { formatMs }] =
    await Promise.all([
      import('../state/run-history.ts'),
      import('../state/workspace-lock.ts'),
      import('../util/colour.ts'),
      import('../util/git-state.ts'),
      import('../util/timing.ts'),
    ]);
  const git = gitState(root); // as the full build does: asked now, awaited at the end
  const lock = new WorkspaceLock(path.join(stateDir, 'lock'));
  const got = lock.tryAcquire(s.run.command);
  if (!got.ok) {
    void git.catch(() => {});
    return no('the workspace is locked'); // the full build waits or says who holds it
  }
  let ms = 0;
  try {
    if (lock.brokeStale) {
      // What a dead build left (a journal, temp outputs) is the full build's to recover.
      io.err(`rc1-build: broke the workspace lock of pid ${lock.brokeStale.holder.pid}: ${lock.brokeStale.why}\n`);
      return no('a dead build held the lock');
    }
    // Under the lock: no build can be changing the engine's state while the paths are compared.
    if (stampText(stateDir) !== read.text) return no('the stamp changed');
    const changed = changedOnDisk(s);
    if (changed) return no(`changed: ${changed}`);
    const history = new RunHistory(path.join(stateDir, 'runs.jsonl'), s.run.keep);
    const prev = history.lastLine();
    const trace = traceStamp(path.join(stateDir, 'trace.log'));
    // The full build would write a whole state (the trace changed since the last run) or the params.
    if (!prev || prev.trace !== trace || prev.paramsHash !== s.run.paramsHash) return no('the run history differs');
    const g = await git;
    ms = performance.now() - t0;
    history.append(
      {
        at: startedAt.toISOString(),
        ms: Math.round(ms),
        exitCode: 0,
        command: s.run.command,
        profile: s.run.profile,
        ...(s.run.pipeline ? { pipeline: s.run.pipeline } : {}),
        git: g,
        ...(s.run.asked ? { asked: s.run.asked } : {}),
        counts: { ran: 0, restored: 0, upToDate: s.run.upToDate, failed: 0, gateFailed: 0, blocked: 0 },
        outcomes: {},
        trace,
        paramsHash: s.run.paramsHash,
        full: false,
        state: {},
        checks: {},
        metrics: {},
      },
      prev,
    );
  } finally {
    lock.release();
  }
  io.why?.('answered from .rc1/uptodate.json');
  const paint = painter(colourEnabled(io.stdout, env));
  io.out(
    `rc1-build: ${paint(['bold', 'green'], 'ok')} · 0 ran, 0 restored, ${s.run.upToDate} up to date · ${formatMs(ms)}\n`,
  );
  return 0;
}
