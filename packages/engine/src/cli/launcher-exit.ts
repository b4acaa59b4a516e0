// `npx rc1-build …` runs the CLI under npm (npm exec → sh -c → node), and npm does not forward
// SIGTERM: a `kill <npx pid>` (a CI job's timeout, a supervisor) ends npm and leaves the build
// running on, orphaned, holding the workspace lock. So when npm exec is the parent or the
// grandparent, the CLI watches that npm process (pid + start time, so a reused pid is not taken
// for it) and treats its end as a SIGTERM. Only then: a build started from a shell that later
// exits (nohup, a closed terminal) is meant to go on. Running `node_modules/.bin/rc1-build`
// directly avoids the middleman altogether.
import * as fs from 'node:fs';
import { procStat } from '../state/process-identity.ts';

const POLL_MS = 250;

function cmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

function parentOf(pid: number): number | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) || null;
  } catch {
    return null;
  }
}

const isNpm = (argv: string[]): boolean =>
  /^npm( |$)|^npx( |$)|(^|\/)np[mx]$/.test(argv[0] ?? '') || argv.slice(0, 3).some((a) => /np[mx]-cli\.js$/.test(a));

/** The npm process that launched this one (parent, or grandparent through `sh -c`), if any. */
function npmLauncher(): number | null {
  const env = process.env;
  if (env.npm_command !== 'exec' && env.npm_lifecycle_event !== 'npx') return null;
  let pid: number | null = process.ppid;
  for (let depth = 0; depth < 2 && pid && pid > 1; depth++) {
    if (isNpm(cmdline(pid))) return pid;
    pid = parentOf(pid);
  }
  return null;
}

/** Calls `onExit` once if the npm process that launched this one goes away. Returns a stop function. */
export function watchLauncher(onExit: () => void): () => void {
  const npm = npmLauncher();
  const ticks = npm ? procStat(npm)?.startTicks : undefined;
  if (!npm || !ticks) return () => {};
  const timer = setInterval(() => {
    const st = procStat(npm);
    if (!st || st.state === 'Z' || st.state === 'X' || st.startTicks !== ticks) {
      clearInterval(timer);
      onExit();
    }
  }, POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
