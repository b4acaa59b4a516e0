// One build of a workspace: takes the lock, runs the scheduler with a reporter, and on SIGINT or
// SIGTERM stops rules, keeps every finished record and releases the lock. Used by the default
// command and by each iteration of `watch`.
import { ConsoleReporter, JsonReporter } from '../report/console-reporter.ts';
import type { Reporter } from '../report/events.ts';
import { Build } from '../build/run-build.ts';
import { WorkerPool } from '../runner/worker-pool.ts';
import { closureOf } from '../graph/resolved.ts';
import { checkRequirements } from '../rebuild/requirements.ts';
import { afterBuildGc } from './gc.ts';
import { forgetSize, startSize } from '../cache/cache-gc.ts';
import { watchLauncher } from './launcher-exit.ts';
import { type Workspace, assertNoRuleSourceOutputs, assertPathsOnDisk } from '../workspace/workspace.ts';
import { phase } from '../util/timing.ts';
import { validateParams } from '../config/validate-params.ts';
import { type RemoteFlag, openRemoteCache } from '../cache/remote/open-remote.ts';
import { RunRecorder, historyOf, recordRun } from '../report/run-recorder.ts';
import { checkedManifestPaths } from '../report/manifest-state.ts';
import type { RunCounts } from '../state/run-history.ts';
import { forgetStamp, writeStamp } from '../state/uptodate-stamp.ts';
import { gitState } from '../util/git-state.ts';
import { colourEnabled } from '../util/colour.ts';
import { stderrColumns, stdoutStream } from '../util/terminal.ts';
import { type CoalescedIo, coalescedIo, flushOnExit } from './stdio.ts';

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
  /** --remote-cache: overrides definePipeline({ remoteCache: { mode } }); off disables it. */
  remoteCache?: RemoteFlag;
  /** Seconds to queue behind a running build (0: refuse at once; Infinity: no limit). */
  waitS?: number;
}

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  tty: boolean;
}

export function makeReporter(o: Pick<BuildCommandOptions, 'json' | 'explain' | 'verbose'>, io: Io): Reporter {
  return o.json
    ? new JsonReporter(io.out)
    : new ConsoleReporter({
        explain: o.explain,
        verbose: o.verbose,
        tty: io.tty,
        out: io.out,
        err: io.err,
        colour: colourEnabled(stdoutStream()),
        columns: stderrColumns,
      });
}

/**
 * Outputs of one profile are never replaced by another's silently: say which targets hold
 * outputs built in another profile (the profile is part of every fingerprint, so they rebuild,
 * and the other profile's outputs stay in the cache, restored when that profile builds again).
 */
function noteProfileSwitch(ws: Workspace, targets: string[], io: Io): void {
  const other = new Map<string, string[]>();
  for (const n of closureOf(ws.pipeline, targets)) {
    const p = ws.trace.records.get(n)?.fingerprint.profile;
    if (p && p !== ws.profile) (other.get(p) ?? other.set(p, []).get(p)!).push(n);
  }
  for (const [p, names] of other) {
    io.err(
      `rc1-build: note: ${names.length} target${names.length === 1 ? ' has' : 's have'} outputs built in profile ${p} (${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}); this ${ws.profile} build replaces those it runs; the ${p} outputs stay in .rc1/cache and are restored when profile ${p} builds again\n`,
    );
  }
}

/**
 * After a build that found every planned target up to date (none ran, none restored, nothing
 * failed, no remote cache), the up-to-date stamp for its command line: the next identical
 * command line answers from it (cli/fast-noop.ts). A stamp that cannot be written soundly is not.
 */
function leaveStamp(
  ws: Workspace,
  o: BuildCommandOptions,
  c: RunCounts,
  plan: readonly string[],
  s: NonNullable<Parameters<typeof runBuildOnce>[3]['stamp']>,
): void {
  if (c.upToDate !== plan.length || c.ran || c.restored || c.failed || c.gateFailed || c.blocked || ws.remote) return;
  try {
    const history = historyOf(ws);
    const last = history.lastLine();
    if (!last) return;
    const targetEnv = new Set<string>();
    for (const n of plan) for (const v of ws.pipeline.targets.get(n)!.env) targetEnv.add(v);
    const dirOutputs: { path: string; files: string[]; links: string[] }[] = [];
    const fileOutputs = new Set<string>();
    for (const n of plan)
      for (const out of ws.trace.records.get(n)?.outputs ?? []) {
        if (out.dir)
          dirOutputs.push({ path: out.path, files: Object.keys(out.files ?? {}), links: Object.keys(out.links ?? {}) });
        else fileOutputs.add(out.path);
      }
    writeStamp(
      {
        root: ws.root,
        stateDir: ws.stateDir,
        salt: ws.salt,
        statLines: () => ws.stat.statLines(),
        globDirs: () => ws.glob.dirLines(),
        manifestPaths: () => checkedManifestPaths(ws),
        dirOutputs,
        fileOutputs,
        durable: ws.stat.durable,
      },
      {
        argv: s.argv,
        cwd: s.cwd,
        env: process.env,
        targetEnv,
        engine: s.engine,
        run: {
          command: o.command,
          ...(last.asked ? { asked: last.asked } : {}),
          profile: ws.profile,
          ...(ws.pipeline.name ? { pipeline: ws.pipeline.name } : {}),
          keep: history.keep,
          paramsHash: last.paramsHash,
          upToDate: plan.length,
        },
      },
    );
  } catch {
    forgetStamp(ws.stateDir); // only a saving: the next build decides in full
  }
}

/** A build in progress, so a signal handler outside (watch) can interrupt it. */
export interface Running {
  interrupt(): Promise<void>;
}

export async function runBuildOnce(
  ws: Workspace,
  o: BuildCommandOptions,
  commandIo: Io,
  hooks: {
    installSignals: boolean;
    onStart?: (r: Running) => void;
    /** The resident server's request signals (instead of the process's): interrupt, never exit. */
    signals?: (handler: (sig: 'SIGINT' | 'SIGTERM') => void) => () => void;
    /** The resident server's rule workers started ahead (WorkerPool). */
    takeWorker?: () => import('node:worker_threads').Worker | undefined;
    /**
     * A build of this command line (in-process or served) that may leave an up-to-date stamp (only
     * options that do not change a no-op's output: main.ts), with the engine files the stamp names.
     */
    stamp?: { argv: string[]; cwd: string; engine: string[] };
  },
): Promise<number> {
  // Its lines (one or two a target) are written in batches; whatever ends the process writes the rest.
  const io = coalescedIo(commandIo);
  const endExitFlush = flushOnExit(io);
  try {
    return await buildWith(ws, o, io, hooks);
  } finally {
    io.flush();
    endExitFlush();
  }
}

async function buildWith(
  ws: Workspace,
  o: BuildCommandOptions,
  io: CoalescedIo,
  hooks: Parameters<typeof runBuildOnce>[3],
): Promise<number> {
  // Before the lock and before anything runs: symlinks that lead an output or input out of the
  // workspace and outputs that would overwrite a rule's code are refused, everything the targets
  // to run need is present, and every planned target's params are checked against its rule's
  // schema (usage errors, 64).
  const plan = closureOf(ws.pipeline, o.targets);
  assertPathsOnDisk(ws, plan);
  phase('path checks');
  await assertNoRuleSourceOutputs(ws, plan);
  phase('rule source check');
  await checkRequirements(ws.pipeline, plan, ws.decideEnv(o.forced), {
    root: ws.root,
    env: process.env,
    profile: ws.profile,
  });
  phase('requirements');
  await validateParams(
    ws,
    plan.map((n) => ws.pipeline.targets.get(n)!),
  );
  phase('validate params');
  // A real build is recorded in the run history: the recorder watches the events on their way to
  // the reporter, and git is asked now, in parallel with the build, not after it.
  const recorder = o.dryRun ? null : new RunRecorder(makeReporter(o, io), ws.trace.file);
  const git = o.dryRun ? null : gitState(ws.root);
  const rep = recorder ?? makeReporter(o, io);
  if (!o.dryRun) {
    if (o.waitS) {
      await ws.lock.acquireWaiting(o.command, o.waitS, (h) =>
        io.err(
          `rc1-build: waiting for the build holding this workspace (pid ${h.pid} on ${h.host}, ${h.command ?? 'rc1-build'}) to finish\n`,
        ),
      );
    } else ws.lock.acquire(o.command);
    // Taking the lock revalidated the compiled modules (openWorkspace sets lock.onAcquired).
  }
  // From here on the lock is held (when not a dry run): whatever throws — trace repair on a full
  // disk too — releases it in the finally below.
  let build: Build | null = null;
  let onSignal: ((sig: NodeJS.Signals) => void) | null = null;
  let stopLauncherWatch = (): void => {};
  // Served: a request's signal interrupts the build as the process's would, and its code is the exit code.
  let interrupting: Promise<number> | null = null;
  let stopRequestSignals = (): void => {};
  try {
    if (!o.dryRun) {
      noteProfileSwitch(ws, o.targets, io);
      if (ws.lock.brokeStale)
        io.err(
          `rc1-build: broke the workspace lock of pid ${ws.lock.brokeStale.holder.pid}: ${ws.lock.brokeStale.why}\n`,
        );
      ws.trace.repair();
    }
    if (!o.dryRun) {
      ws.remote = await openRemoteCache({
        decl: ws.pipeline.remoteCache,
        flag: o.remoteCache,
        env: process.env,
        local: ws.cache,
        stateDir: ws.stateDir,
      });
      ws.remote?.attach((e) => rep.emit(e));
      // Its downloads do not pass storeObject's size accounting: the cap check after it walks.
      if (ws.remote) forgetSize(ws.cache.dir);
      // A new cache's size is known (no walk after a build from clean), and it holds nothing yet.
      else ws.cache.emptyAtStart = startSize(ws.cache.dir);
    }
    const runner = new WorkerPool(
      o.jobs,
      new URL('./worker.js', import.meta.url),
      hooks.takeWorker ? { take: hooks.takeWorker, env: process.env } : undefined,
    );
    const b = new Build(
      ws,
      {
        targets: o.targets,
        jobs: o.jobs,
        keepGoing: o.keepGoing,
        dryRun: o.dryRun,
        forced: o.forced,
        ...(git ? { git } : {}),
      },
      rep,
      { runner, env: process.env },
    );
    build = b;
    const t0 = performance.now();
    const running: Running = {
      interrupt: async () => {
        await b.interrupt(t0);
        ws.lock.release();
        rep.close();
        io.flush(); // a signal's handler exits the process next
      },
    };
    hooks.onStart?.(running);
    if (hooks.installSignals) {
      const handler = (sig: NodeJS.Signals): void => {
        void running.interrupt().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
      };
      onSignal = handler;
      process.once('SIGINT', handler);
      process.once('SIGTERM', handler);
      stopLauncherWatch = watchLauncher(() => handler('SIGTERM'));
    } else if (hooks.signals) {
      stopRequestSignals = hooks.signals((sig) => {
        interrupting ??= running.interrupt().then(() => (sig === 'SIGINT' ? 130 : 143));
      });
    }
    const code = await b.run();
    if (interrupting) return await interrupting;
    if (recorder && git) {
      try {
        const g = await git;
        phase('wait for git');
        recordRun(ws, recorder, { command: o.command, asked: o.targets, exitCode: code, git: g });
        phase('record run');
      } catch (e) {
        io.err(
          `rc1-build: warning: could not record the run in ${ws.stateDir}/runs.jsonl: ${(e as Error).message}; the build itself is complete\n`,
        );
      }
    }
    if (!o.dryRun) {
      try {
        afterBuildGc(ws, ws.trace.changedSince, io); // the records changed since Build.run() began
        phase('cache cap');
        if (hooks.stamp && recorder && code === 0 && !interrupting) {
          leaveStamp(ws, o, recorder.counts, plan, hooks.stamp);
          phase('up-to-date stamp');
        }
      } catch (e) {
        io.err(
          `rc1-build: warning: could not apply the output cache's size cap: ${(e as Error).message}; the build itself is complete\n`,
        );
      }
    }
    return interrupting ? await interrupting : code;
  } finally {
    ws.cache.emptyAtStart = false;
    stopRequestSignals();
    await (build as Build | null)?.close();
    await ws.remote?.close();
    ws.remote = null;
    ws.cache.closeLog();
    ws.lock.release();
    rep.close();
    if (onSignal) {
      stopLauncherWatch();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
