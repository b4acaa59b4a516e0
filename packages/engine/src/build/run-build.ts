// One build of a workspace, put together: recover what a killed build left, run the scheduler
// (scheduler/scheduler.ts: WHEN) over the target executor (executor/target-executor.ts: WHAT
// happens to one target) wired to this workspace (build/workspace-ports.ts), then make the
// state durable and the manifest match it. The rule runner, environment, clock and git lookup
// are injected (the CLI passes the worker pool and process.env).
// A write the filesystem refuses (a full disk, EIO, a read-only mount) anywhere in the engine's
// own writes halts the build: running rules are stopped, what was committed stays recorded, the
// manifest is made to match, and run() throws one EngineWriteError (exit 1, lock released).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { closureOf } from '../graph/resolved.ts';
import { decide } from '../rebuild/decide.ts';
import type { RuleRunner } from '../runner/rule-runner.ts';
import { RuleRunners } from '../runner/rule-runners.ts';
import type { BuildEvent, Counts, Reporter } from '../report/events.ts';
import { type ManifestBase, type ManifestPlan, completeManifest, writeSidecars } from '../report/manifest.ts';
import { traceStatLine } from '../report/manifest-state.ts';
import { checkLogPaths } from '../report/rule-log.ts';
import { lstatOrNull, rmrf } from '../util/fs.ts';
import { asEngineWriteError } from '../util/write-error.ts';
import { phase } from '../util/timing.ts';
import { GitLookup, gitInfoSync } from '../util/git-info.ts';
import type { GitState } from '../util/git-state.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import { TargetExecutor } from '../executor/target-executor.ts';
import { explainPlan } from '../executor/dry-run.ts';
import { type Clock, type GitPort, systemClock } from '../executor/ports.ts';
import { workspacePorts } from './workspace-ports.ts';

export interface BuildOptions {
  targets: string[];
  jobs: number;
  keepGoing: boolean;
  dryRun: boolean;
  forced: ReadonlySet<string>;
  /** The git state, when the caller already asked (the run history does): shared, not asked twice. */
  git?: Promise<GitState>;
}

/** What a build gets from outside the workspace. */
export interface BuildDeps {
  /** Where rules run locally (the worker pool); targets whose executor is Slurm go to a SlurmRunner. Closed by close(). */
  runner: RuleRunner;
  /** Environment variables for targets' env and secrets. */
  env: Readonly<Record<string, string | undefined>>;
  clock?: Clock;
  /** The git state for the manifest and error reports (default: GitLookup, started with the first rule). */
  git?: GitPort;
}

/**
 * An empty temp dir for the build's rule outputs. The one the last build left empty is kept as it
 * is (a no-op removed and made it again: two journaled metadata writes per command); anything else
 * there — files a killed build left, a symbolic link, a file — is removed and the dir made anew.
 */
function freshTmpDir(dir: string): void {
  if (lstatOrNull(dir)?.isDirectory()) {
    try {
      if (fs.readdirSync(dir).length === 0) return;
    } catch {
      /* unreadable: removed below */
    }
  }
  rmrf(dir);
  fs.mkdirSync(dir, { recursive: true });
}

/**
 * The folders the pipeline's outputs are in (those that exist), for a sync that must reach what
 * earlier builds wrote: one syncfs per filesystem among them (OutputCommitter.finishBuild).
 */
function outputFolders(ws: Workspace): string[] {
  const dirs = new Set<string>([ws.stateDir]);
  for (const t of ws.pipeline.targets.values())
    for (const o of t.outputs) dirs.add(path.dirname(path.resolve(ws.root, o.path)));
  return [...dirs].filter((d) => lstatOrNull(d)?.isDirectory());
}

export class Build {
  private readonly counts: Counts = { ran: 0, restored: 0, upToDate: 0, failed: 0, gateFailed: 0, blocked: 0 };
  private readonly clock: Clock;
  private readonly runners: RuleRunners;
  private readonly git: GitPort;
  private scheduler: Scheduler | null = null;
  private executor: TargetExecutor | null = null;
  private interrupted = false;
  private traceWritesAtStart = 0;
  private manifestBase: ManifestBase | undefined = undefined;

  constructor(
    private readonly ws: Workspace,
    private readonly opts: BuildOptions,
    private readonly rep: Reporter,
    private readonly deps: BuildDeps,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.git = deps.git ?? new GitLookup(ws.root, opts.git);
    this.runners = new RuleRunners({
      local: deps.runner,
      root: ws.root,
      stagingRoot: path.join(ws.stateDir, 'slurm'),
      ...(ws.pipeline.remoteCache ? { remote: { decl: ws.pipeline.remoteCache, env: deps.env } } : {}),
    });
  }

  private readonly emit = (e: BuildEvent): void => {
    this.rep.emit(e);
  };

  /** Runs the build; returns the exit code (0 ok, 1 rule failed, 2 gate failed, 130 interrupted). */
  async run(): Promise<number> {
    const t0 = this.clock.now();
    const { ws, opts } = this;
    const plan = closureOf(ws.pipeline, opts.targets);
    this.emit({ event: 'plan', targets: plan, jobs: opts.jobs, profile: ws.profile, dryRun: opts.dryRun });
    if (opts.dryRun) {
      const env = ws.decideEnv(opts.forced);
      await explainPlan(plan, ws.pipeline, { decide: (t) => decide(env, t) }, this.emit, this.counts);
      this.emit({
        event: 'end',
        ok: true,
        ms: this.clock.now() - t0,
        exitCode: 0,
        counts: this.counts,
        stats: this.stats(),
      });
      return 0;
    }
    checkLogPaths(ws.pipeline.targets.values());
    this.traceWritesAtStart = ws.trace.writes;
    // The records as this build found them: the manifest re-derives only the sidecars of targets
    // whose record it changes (report/manifest.ts).
    ws.trace.forgetChanges();
    this.manifestBase = { traceLine: traceStatLine(ws), changed: ws.trace.changedSince };
    const recovery = ws.committer.recover();
    if (recovery.recovered.length) this.emit({ event: 'recovered', targets: recovery.recovered });
    for (const f of recovery.failed)
      this.emit({ event: 'warning', message: `${f.target}: ${f.error}; it will run again` });
    freshTmpDir(this.tmpDir());

    const executor = new TargetExecutor(
      ws.pipeline,
      workspacePorts(ws, {
        runners: this.runners,
        env: this.deps.env,
        clock: this.clock,
        git: this.git,
        forced: opts.forced,
        emit: this.emit,
        counts: this.counts,
      }),
    );
    this.executor = executor;
    const scheduler = new Scheduler({ plan, deps: (n) => ws.pipeline.targets.get(n)!.deps }, executor, {
      jobs: opts.jobs,
      handOff: opts.jobs * this.runners.handOffDepth,
      keepGoing: opts.keepGoing,
      onBlocked: (target, by) => {
        this.counts.blocked++;
        this.emit({ event: 'blocked', target, by });
      },
    });
    this.scheduler = scheduler;
    if (this.interrupted) return 130;
    const result = await scheduler.run();
    phase('decide and run');
    if (result.halted) {
      try {
        rmrf(this.tmpDir());
        await this.finish();
      } catch {
        /* the first write error is the one reported */
      }
      throw asEngineWriteError(result.halted.error, ws.root) ?? result.halted.error;
    }
    if (result.interrupted) return 130;
    await ws.remote?.drain(); // uploads still in flight, then the remote cache's summary
    await this.finish();
    phase('save state');
    const exitCode = this.counts.failed > 0 ? 1 : this.counts.gateFailed > 0 ? 2 : 0;
    this.emit({
      event: 'end',
      ok: exitCode === 0,
      ms: this.clock.now() - t0,
      exitCode,
      counts: this.counts,
      stats: this.stats(),
    });
    return exitCode;
  }

  private tmpDir(): string {
    return path.join(this.ws.stateDir, 'tmp');
  }

  private stats(): NonNullable<Extract<BuildEvent, { event: 'end' }>['stats']> {
    const c = this.ws.stat.counters;
    return {
      filesHashed: c.hashed,
      statHits: c.statHits,
      hashedPaths: c.hashedPaths.slice(0, 50),
      globWalks: this.ws.glob.misses,
      compiles: this.ws.compiler.compiles,
    };
  }

  /**
   * Persist everything after the last target (also on interrupt): fsync what was committed,
   * compact the trace, make the manifest and sidecars match it (every build, a no-op too), save
   * the caches.
   */
  private async finish(): Promise<void> {
    const { ws } = this;
    const changed = (this.executor?.committedAny ?? false) || ws.trace.writes !== this.traceWritesAtStart;
    const git = changed ? await this.git.get() : null;
    // The sidecars are written while the sync flushes the outputs (they need nothing durable);
    // manifest.json, written durably, and the manifest state come after it.
    // A build of quick work only leaves its outputs to the kernel's write-back and marks the stat
    // cache (and every stat-keyed record written after it) as not durable: state/durability.ts.
    let plan: ManifestPlan | null = null;
    const durable = await ws.committer.finishBuild(
      () => {
        plan = writeSidecars(ws, git, () => gitInfoSync(ws.root), this.manifestBase);
      },
      ws.stat.durable,
      () => outputFolders(ws),
    );
    ws.stat.setDurable(durable);
    phase('sync, sidecars meanwhile');
    ws.trace.compactIfNeeded();
    ws.trace.close();
    phase('trace close');
    if (plan) completeManifest(ws, plan);
    phase('manifest');
    ws.saveCaches();
  }

  /** SIGINT/SIGTERM: stop rules, drop their temp outputs, keep every finished record. */
  async interrupt(t0: number): Promise<void> {
    if (this.interrupted) return;
    this.interrupted = true;
    await (this.scheduler ? this.scheduler.interrupt() : this.runners.abortAll(2000));
    rmrf(this.tmpDir()); // we hold the lock: every temp output in it is ours
    try {
      await this.finish();
    } catch (e) {
      const w = asEngineWriteError(e, this.ws.root);
      if (!w) throw e;
      this.emit({ event: 'warning', message: w.message });
    }
    this.emit({
      event: 'end',
      ok: false,
      ms: this.clock.now() - t0,
      exitCode: 130,
      counts: this.counts,
      interrupted: true,
    });
  }

  async close(): Promise<void> {
    await this.runners.close();
  }
}
