// One build of a workspace: takes the lock, runs the scheduler with a reporter, and on SIGINT or
// SIGTERM stops rules, keeps every finished record and releases the lock. Used by the default
// command and by each iteration of `watch`.
import { ConsoleReporter, JsonReporter } from '../report/console-reporter.ts';
import type { Reporter } from '../report/events.ts';
import { Build } from '../scheduler/run-build.ts';
import { watchLauncher } from './launcher-exit.ts';
import { type Workspace, assertPathsOnDisk } from './workspace.ts';
import { closureOf } from '../graph/resolved.ts';

export interface BuildCommandOptions {
  targets: string[];
  jobs: number;
  keepGoing: boolean;
  dryRun: boolean;
  forced: ReadonlySet<string>;
  explain: boolean;
  verbose: boolean;
  json: boolean;
  command: string;
  /** Seconds to queue behind a running build (0: refuse at once; Infinity: no limit). */
  waitS?: number;
}

export interface Io { out: (s: string) => void; err: (s: string) => void; tty: boolean }

export function makeReporter(o: Pick<BuildCommandOptions, 'json' | 'explain' | 'verbose'>, io: Io): Reporter {
  return o.json ? new JsonReporter(io.out) : new ConsoleReporter({ explain: o.explain, verbose: o.verbose, tty: io.tty, out: io.out, err: io.err });
}

/** A build in progress, so a signal handler outside (watch) can interrupt it. */
export interface Running { interrupt(): Promise<void> }

export async function runBuildOnce(ws: Workspace, o: BuildCommandOptions, io: Io, hooks: { installSignals: boolean; onStart?: (r: Running) => void }): Promise<number> {
  // Symlinks that lead an output or input out of the workspace are refused before anything runs.
  assertPathsOnDisk(ws, closureOf(ws.pipeline, o.targets));
  const rep = makeReporter(o, io);
  if (!o.dryRun) {
    if (o.waitS) {
      await ws.lock.acquireWaiting(o.command, o.waitS, (h) => io.err(`rc1-build: waiting for the build holding this workspace (pid ${h.pid} on ${h.host}, ${h.command ?? 'rc1-build'}) to finish\n`));
    } else ws.lock.acquire(o.command);
    if (ws.lock.brokeStale) io.err(`rc1-build: broke the workspace lock of pid ${ws.lock.brokeStale.holder.pid}: ${ws.lock.brokeStale.why}\n`);
    ws.trace.repair();
  }
  const build = new Build(ws, { targets: o.targets, jobs: o.jobs, keepGoing: o.keepGoing, dryRun: o.dryRun, forced: o.forced, workerUrl: new URL('./worker.js', import.meta.url) }, rep);
  const t0 = performance.now();
  const running: Running = {
    interrupt: async () => {
      await build.interrupt(t0);
      ws.lock.release();
      rep.close();
    },
  };
  hooks.onStart?.(running);
  const onSignal = (sig: NodeJS.Signals): void => {
    void running.interrupt().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  let stopLauncherWatch = (): void => {};
  if (hooks.installSignals) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    stopLauncherWatch = watchLauncher(() => onSignal('SIGTERM'));
  }
  try {
    return await build.run();
  } finally {
    await build.close();
    ws.lock.release();
    rep.close();
    if (hooks.installSignals) {
      stopLauncherWatch();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
