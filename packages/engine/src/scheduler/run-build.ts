// Decides WHEN targets run (Shake's scheduler): a target starts once all its dependencies have
// finished fresh, restored or built; at most -j rules run at once; after a failure nothing new
// starts unless -k, in which case only the failed target's dependents are blocked. What happens
// to each target (fresh | restore | run) is the rebuilder's decision (rebuild/decide.ts).
// A write the filesystem refuses (a full disk, EIO, a read-only mount) anywhere in the engine's
// own writes halts the build: running rules are stopped, what was committed stays recorded, the
// manifest is made to match, and run() throws one EngineWriteError (exit 1, lock released).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gatePasses, type Check } from '../api/index.ts';
import { type RebuildReason, codeHash, formatReason } from '../hash/fingerprint.ts';
import { closureOf, type ResolvedTarget } from '../graph/resolved.ts';
import { type Decision, decide, resolveInputs } from '../rebuild/decide.ts';
import { type RootCause, rootCause, sameOutputs } from '../rebuild/root-cause.ts';
import { outputRecords } from '../state/commit-outputs.ts';
import { targetStateDir } from '../state/target-state-dir.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import { hashOutput } from '../runner/hash-output.ts';
import type { JobFailure } from '../runner/protocol.ts';
import { RuleRunners } from '../runner/rule-runner.ts';
import type { BuildEvent, Counts, Reporter } from '../report/events.ts';
import { writeManifest } from '../report/manifest.ts';
import { writeErrorReport } from '../report/error-report.ts';
import { checkLogPaths, ruleLogPath, writeRuleLog } from '../report/rule-log.ts';
import { locateKey, pickParams } from '../config/load-configs.ts';
import { CompileError } from '../config/compile-module.ts';
import { rmrf } from '../util/fs.ts';
import { redactor } from '../util/redact-secrets.ts';
import { EngineWriteError, asEngineWriteError, cannotRead } from '../util/write-error.ts';
import { phase } from '../util/timing.ts';
import { GitLookup, gitInfoSync } from '../util/git-info.ts';
import type { GitState } from '../util/git-state.ts';
import type { Workspace } from '../cli/workspace.ts';

export interface BuildOptions {
  targets: string[];
  jobs: number;
  keepGoing: boolean;
  dryRun: boolean;
  forced: ReadonlySet<string>;
  workerUrl: URL;
  /** The git state, when the caller already asked (the run history does): shared, not asked twice. */
  git?: Promise<GitState>;
}

type Outcome = 'up-to-date' | 'ran' | 'restored' | 'failed' | 'gate-failed' | 'blocked';

const LOG_TAIL = 200;

class Semaphore {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}
  async acquire(): Promise<void> {
    if (this.free > 0) { this.free--; return; }
    await new Promise<void>((r) => this.waiters.push(r));
  }
  release(): void {
    const w = this.waiters.shift();
    if (w) w();
    else this.free++;
  }
}

export class Build {
  private readonly counts: Counts = { ran: 0, restored: 0, upToDate: 0, failed: 0, gateFailed: 0, blocked: 0 };
  /** Where rules run: the worker pool, or a Slurm job for a target whose executor is Slurm (runner/rule-runner.ts). */
  private runners: RuleRunners | null = null;
  private interrupted = false;
  private committedAny = false;
  /** The git state for the manifest and error reports: looked up once, while the first rules run. */
  private readonly git: GitLookup;
  private readonly deciding = new Semaphore(1);
  /** What halted the build: an EngineWriteError (or an internal error), thrown by run(). */
  private halted: { error: unknown } | null = null;
  private traceWritesAtStart = 0;
  /** The root cause of each target that runs (or would) in this build, for --explain's grouping. */
  private readonly roots = new Map<string, RootCause>();

  private rootOf(t: ResolvedTarget, reasons: readonly RebuildReason[], staleDeps: readonly string[] = []): { root?: RootCause } {
    const r = rootCause(this.ws.pipeline, t.name, reasons, (n) => this.roots.get(n) ?? null, staleDeps);
    if (!r) return {};
    this.roots.set(t.name, r);
    return { root: r };
  }

  constructor(private readonly ws: Workspace, private readonly opts: BuildOptions, private readonly rep: Reporter) {
    this.git = new GitLookup(ws.root, opts.git);
  }

  private emit(e: BuildEvent): void {
    this.rep.emit(e);
  }

  /** Runs the build; returns the exit code (0 ok, 1 rule failed, 2 gate failed). */
  async run(): Promise<number> {
    const t0 = performance.now();
    const { ws, opts } = this;
    const plan = closureOf(ws.pipeline, opts.targets);
    this.emit({ event: 'plan', targets: plan, jobs: opts.jobs, profile: ws.profile, dryRun: opts.dryRun });
    if (opts.dryRun) {
      await this.dryRun(plan);
      this.emit({ event: 'end', ok: true, ms: performance.now() - t0, exitCode: 0, counts: this.counts, stats: this.stats() });
      return 0;
    }
    checkLogPaths(ws.pipeline.targets.values());
    this.traceWritesAtStart = ws.trace.writes;
    const recovery = ws.committer.recover();
    if (recovery.recovered.length) this.emit({ event: 'recovered', targets: recovery.recovered });
    for (const f of recovery.failed) this.emit({ event: 'warning', message: `${f.target}: ${f.error}; it will run again` });
    rmrf(this.tmpDir());
    fs.mkdirSync(this.tmpDir(), { recursive: true });

    const outcome = new Map<string, Outcome>();
    const sem = new Semaphore(opts.jobs);
    let stop = false;
    // Ready queue by remaining-dependency counts: O(targets + edges), not a rescan per event.
    const inPlan = new Set(plan);
    const waiting = new Map<string, number>();
    const dependents = new Map<string, string[]>();
    const ready: string[] = [];
    for (const n of plan) {
      const deps = ws.pipeline.targets.get(n)!.deps.filter((d) => inPlan.has(d));
      waiting.set(n, deps.length);
      for (const d of deps) (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(n);
      if (deps.length === 0) ready.push(n);
    }
    const pending = new Set(plan);
    let inFlight = 0;
    let wake: (() => void) | null = null;
    const settle = (n: string, o: Outcome): void => {
      outcome.set(n, o);
      if ((o === 'failed' || o === 'gate-failed') && !opts.keepGoing) stop = true;
      for (const r of dependents.get(n) ?? []) {
        const left = waiting.get(r)! - 1;
        waiting.set(r, left);
        if (left === 0) ready.push(r);
      }
    };
    while (!this.interrupted) {
      while (!stop && ready.length > 0) {
        const n = ready.shift()!;
        pending.delete(n);
        const t = ws.pipeline.targets.get(n)!;
        const bad = t.deps.find((d) => { const o = outcome.get(d); return o !== 'up-to-date' && o !== 'ran' && o !== 'restored'; });
        if (bad) {
          this.counts.blocked++;
          this.emit({ event: 'blocked', target: n, by: bad });
          settle(n, 'blocked');
          continue;
        }
        inFlight++;
        void this.process(t, sem).then((o) => {
          inFlight--;
          settle(n, o);
          wake?.();
        }, (e: unknown) => {
          inFlight--;
          stop = true;
          this.halt(e);
          settle(n, 'failed');
          wake?.();
        });
      }
      if (inFlight === 0) break;
      await new Promise<void>((r) => { wake = r; });
      wake = null;
    }
    phase('decide and run');
    if (this.halted) {
      try {
        rmrf(this.tmpDir());
        await this.finish();
      } catch { /* the first write error is the one reported */ }
      throw this.halted.error;
    }
    if (this.interrupted) return 130;
    for (const n of plan) {
      if (!pending.has(n)) continue;
      const by = ws.pipeline.targets.get(n)!.deps.find((d) => { const o = outcome.get(d); return o === 'failed' || o === 'gate-failed' || o === 'blocked'; });
      outcome.set(n, 'blocked');
      this.counts.blocked++;
      this.emit({ event: 'blocked', target: n, by: by ?? 'nothing: the build stopped after a failure (-k keeps going)' });
    }
    await this.ws.remote?.drain(); // uploads still in flight, then the remote cache's summary
    await this.finish();
    phase('save state');
    const exitCode = this.counts.failed > 0 ? 1 : this.counts.gateFailed > 0 ? 2 : 0;
    this.emit({ event: 'end', ok: exitCode === 0, ms: performance.now() - t0, exitCode, counts: this.counts, stats: this.stats() });
    return exitCode;
  }

  private stats(): NonNullable<Extract<BuildEvent, { event: 'end' }>['stats']> {
    const c = this.ws.stat.counters;
    return { filesHashed: c.hashed, statHits: c.statHits, hashedPaths: c.hashedPaths.slice(0, 50), globWalks: this.ws.glob.misses, compiles: this.ws.compiler.compiles };
  }

  /** Stop the build: an engine write error (or, never expected, an internal error) from a target. */
  private halt(e: unknown): void {
    if (this.halted) return;
    this.halted = { error: asEngineWriteError(e, this.ws.root) ?? e };
    void this.runners?.abortAll(2000);
  }

  /**
   * Persist everything after the last target (also on interrupt): fsync what was committed,
   * compact the trace, make the manifest and sidecars match it (every build, a no-op too), save
   * the caches.
   */
  private async finish(): Promise<void> {
    const { ws } = this;
    await ws.committer.syncTouched();
    ws.trace.compactIfNeeded();
    ws.trace.close();
    const changed = this.committedAny || ws.trace.writes !== this.traceWritesAtStart;
    writeManifest(ws, changed ? await this.git.get() : null, () => gitInfoSync(ws.root));
    ws.saveCaches();
  }

  private async dryRun(plan: string[]): Promise<void> {
    const env = this.ws.decideEnv(this.opts.forced);
    const willChange = new Set<string>();
    for (const n of plan) {
      const t = this.ws.pipeline.targets.get(n)!;
      const d = await decide(env, t);
      const upstream = t.deps.filter((x) => willChange.has(x));
      if (d.kind === 'fresh' && upstream.length === 0) {
        this.counts.upToDate++;
        this.emit({ event: 'explain', target: n, decision: 'up-to-date', reasons: [] });
        continue;
      }
      willChange.add(n);
      const reasons = d.kind === 'fresh' ? [] : d.reasons.map(formatReason);
      if (upstream.length) reasons.push(`after ${upstream.join(', ')} (${upstream.length > 1 ? 'they run' : 'it runs'}; early cutoff may keep this one)`);
      const decision = d.kind === 'restore' ? 'restore' : d.kind === 'missing-input' && upstream.length === 0 ? 'missing-input' : d.kind === 'run' || d.kind === 'missing-input' ? (upstream.length && d.kind !== 'run' ? 'may-run' : 'run') : 'may-run';
      if (d.kind === 'missing-input' && !upstream.length) reasons.push(d.error);
      this.emit({ event: 'explain', target: n, decision, reasons, ...this.rootOf(t, d.kind === 'fresh' ? [] : d.reasons, upstream) });
    }
  }

  private async process(t: ResolvedTarget, sem: Semaphore): Promise<Outcome> {
    const env = this.ws.decideEnv(this.opts.forced);
    let d: Decision;
    // Decisions are taken one at a time, in the order targets became ready: they are quick
    // (stat calls), and a fixed order makes the output deterministic for a given -j.
    await this.deciding.acquire();
    try {
      d = await decide(env, t);
    } catch (e) {
      // Only the engine's own writes halt the build; an input or rule it cannot read fails this target.
      if (e instanceof EngineWriteError) throw e;
      return this.fail(t, e instanceof CompileError ? `${t.rule} does not compile:\n${e.message}` : cannotRead(e, this.ws.root) ?? String((e as Error).stack ?? e));
    } finally {
      this.deciding.release();
    }
    const reasons = d.kind === 'fresh' ? [] : d.reasons.map(formatReason);
    this.emit({ event: 'explain', target: t.name, decision: d.kind === 'fresh' ? 'up-to-date' : d.kind, reasons, ...(d.kind === 'fresh' ? {} : this.rootOf(t, d.reasons)) });
    switch (d.kind) {
      case 'fresh': {
        if (d.record.result === 'gate-failed') {
          this.counts.gateFailed++;
          this.emit({ event: 'gate', target: t.name, pass: false, checks: d.record.checks ?? [], report: t.report ?? '', replayed: true });
          return 'gate-failed';
        }
        this.counts.upToDate++;
        this.emit({ event: 'skip', target: t.name, reason: 'up-to-date' });
        return 'up-to-date';
      }
      case 'missing-input':
        return this.fail(t, d.error);
      case 'restore': {
        const o = this.restore(t, d);
        if (o) return o;
        return this.execute(t, { ...d, kind: 'run' }, sem);
      }
      case 'run': {
        // A local miss: the remote cache, if any, may hold it (cache/remote/remote-cache.ts).
        const entry = this.ws.remote && !this.opts.forced.has(t.name) ? await this.ws.remote.lookup(t.name, d.key, t.outputs) : null;
        return (entry && this.restore(t, { ...d, kind: 'restore', entry })) || this.execute(t, d, sem);
      }
      default: {
        const never: never = d;
        throw new Error(`internal error: unknown decision ${JSON.stringify(never)}; please report`);
      }
    }
  }

  private jobSeq = 0;

  /** Flat temporary paths in .rc1/tmp (no per-target directory trees to make and remove). */
  private tmpPaths(t: ResolvedTarget): { prefix: string; of: (p: string) => string } {
    const prefix = `${process.pid}-${++this.jobSeq}-`;
    const index = new Map(t.outputs.map((o, i) => [o.path, `${prefix}${i}-${path.basename(o.path)}`]));
    return { prefix, of: (p) => path.join(this.tmpDir(), index.get(p)!) };
  }

  private tmpDir(): string {
    return path.join(this.ws.stateDir, 'tmp');
  }

  private dropTmp(prefix: string): void {
    for (const f of fs.readdirSync(this.tmpDir())) if (f.startsWith(prefix)) rmrf(path.join(this.tmpDir(), f));
  }

  private restore(t: ResolvedTarget, d: Extract<Decision, { kind: 'restore' }>): Outcome | null {
    const t0 = performance.now();
    const tmp = this.tmpPaths(t);
    if (!this.ws.cache.materialize(d.entry, tmp.of)) {
      this.dropTmp(tmp.prefix);
      this.emit({ event: 'warning', message: `cache entry for ${t.name} was corrupt and has been dropped; running the rule` });
      return null;
    }
    this.emit({ event: 'restore', target: t.name, reason: d.reasons.map(formatReason)[0] ?? 'fingerprint matches a cached build', reasons: d.reasons.map(formatReason) });
    const hashed = t.outputs.map((o) => hashOutput({ path: o.path, dir: o.dir, tmp: tmp.of(o.path) }));
    const record: TargetRecord = {
      name: t.name, key: d.key, fingerprint: d.fp, outputs: outputRecords(hashed), result: d.entry.result, how: 'restored',
      ...(d.entry.checks ? { checks: d.entry.checks } : {}), ...(d.entry.summary ? { summary: d.entry.summary } : {}),
      ...(d.entry.rule ? { rule: d.entry.rule } : {}), ms: 0, at: new Date().toISOString(),
    };
    const unchanged = sameOutputs(this.ws.trace.records.get(t.name), record);
    this.ws.committer.commit(record, hashed);
    this.committedAny = true;
    this.counts.restored++;
    const ms = performance.now() - t0;
    this.emit({ event: 'done', target: t.name, ms, outputs: record.outputs.map((o) => ({ path: o.path, sha256: o.sha256 })), restored: true, ...(record.summary ? { summary: record.summary } : {}), ...(unchanged ? { unchanged } : {}) });
    return t.gate ? this.gateOutcome(t, record.checks ?? [], 'restored') : 'restored';
  }

  private gateOutcome(t: ResolvedTarget, checks: Check[], passed: Outcome): Outcome {
    const pass = gatePasses(checks);
    this.emit({ event: 'gate', target: t.name, pass, checks, report: t.report ?? '', replayed: false });
    if (!pass) {
      this.counts.gateFailed++;
      return 'gate-failed';
    }
    return passed;
  }

  private fail(t: ResolvedTarget, error: string, lastLines?: string[], log?: string): Outcome {
    this.counts.failed++;
    this.emit({ event: 'fail', target: t.name, error, ...(lastLines ? { lastLines } : {}), ...(log ? { log } : {}) });
    return 'failed';
  }

  private async formatFailure(t: ResolvedTarget, e: JobFailure): Promise<string> {
    if (e.kind === 'param-error' && e.paramIssues) {
      const lines: string[] = [];
      for (const i of e.paramIssues) {
        const loc = await locateKey(this.ws.root, this.ws.config.files, i.key).catch(() => undefined);
        lines.push(`${loc ?? this.ws.config.files.join(', ')}: ${i.key}: ${i.message}`);
      }
      return `invalid config for ${t.name} (checked by ${t.rule}):\n  ${lines.join('\n  ')}`;
    }
    return e.kind === 'rule-error' && e.stack ? e.stack : e.message;
  }

  private async execute(t: ResolvedTarget, d: Extract<Decision, { kind: 'run' }>, sem: Semaphore): Promise<Outcome> {
    const { ws } = this;
    const reasons = d.reasons.map(formatReason);
    let module: string;
    try {
      module = await ws.compiler.compiled(t.rule);
    } catch (e) {
      if (e instanceof EngineWriteError) throw e;
      return this.fail(t, e instanceof CompileError ? `${t.rule} does not compile:\n${e.message}` : cannotRead(e, this.ws.root) ?? String(e));
    }
    // A Slurm job takes no local slot: the cluster schedules it, the build only follows it.
    const target = { name: t.name, ...(t.executor ? { executor: t.executor } : {}), secrets: t.secrets };
    this.runners ??= new RuleRunners({ jobs: this.opts.jobs, workerUrl: this.opts.workerUrl, root: ws.root, stagingRoot: path.join(ws.stateDir, 'slurm') });
    const runner = this.runners.for(target);
    if (runner.usesLocalSlot) await sem.acquire();
    const release = (): void => { if (runner.usesLocalSlot) sem.release(); };
    if (this.interrupted || this.halted) { release(); return 'failed'; }
    this.emit({ event: 'start', target: t.name, reason: reasons[0] ?? 'out of date', reasons });
    this.git.start();
    const t0 = performance.now();
    const tmp = this.tmpPaths(t);
    const inputs = await resolveInputs(ws.decideEnv(this.opts.forced), t);
    const abs = Object.fromEntries(Object.entries(inputs).map(([g, ps]) => [g, ps.map((p) => path.resolve(ws.root, p))]));
    const envVals: Record<string, string | undefined> = {};
    for (const n of [...t.env, ...t.secrets]) envVals[n] = process.env[n];
    const redact = redactor(t.secrets.map((n) => process.env[n]));
    const logLines: string[] = [];
    let lastProgress = 0;
    const job = {
      target: t.name, gate: t.gate, ...(t.report ? { report: t.report } : {}), module, ruleFile: t.rule, root: ws.root, stateDir: targetStateDir(ws.stateDir, t.name), state: (t.state ?? []).map((x) => x.path), profile: ws.profile,
      params: pickParams(ws.config.values, t.params), args: t.args, forced: this.opts.forced.has(t.name), codeHash: codeHash(d.fp), env: envVals, inputs: abs, tmpDir: this.tmpDir(), tmpPrefix: tmp.prefix, cacheDir: ws.cache.dir,
      // Without secrets there is nothing to redact in the entry: the worker writes it, off this thread.
      ...(t.secrets.length === 0 ? { cacheKey: d.key } : {}),
      outputs: t.outputs.map((o) => ({ path: o.path, dir: o.dir, tmp: tmp.of(o.path) })),
    };
    const hooks = {
      log: (raw: string) => {
        const line = redact(raw);
        logLines.push(line);
        if (logLines.length > LOG_TAIL * 5) logLines.splice(0, logLines.length - LOG_TAIL);
        this.emit({ event: 'log', target: t.name, line });
      },
      progress: (done: number, total: number, unit?: string) => {
        const now = performance.now();
        if (now - lastProgress < 100 && done < total) return;
        lastProgress = now;
        this.emit({ event: 'progress', target: t.name, done, total, ...(unit ? { unit } : {}) });
      },
    };
    const res = await runner.run(job, hooks, target);
    release();
    const ms = performance.now() - t0;
    if (this.halted) { this.dropTmp(tmp.prefix); return 'failed'; }
    writeRuleLog(ws.root, t.name, logLines.slice(-LOG_TAIL));
    if (this.interrupted) return 'failed';
    if (!res.ok) {
      this.dropTmp(tmp.prefix);
      const error = redact(await this.formatFailure(t, res.error));
      ws.trace.put({ name: t.name, key: d.key, fingerprint: d.fp, outputs: [], result: 'failed', how: 'ran', error: error.split('\n')[0]!, ms, at: new Date().toISOString() });
      const git = await this.git.get();
      const where = logLines.length ? `${ruleLogPath(t.name)}; ` : '';
      let report: string;
      try {
        report = writeErrorReport(ws.root, {
          target: t.name, rule: t.rule, kind: res.error.kind, error, reasons, profile: ws.profile, git, log_tail: logLines.slice(-LOG_TAIL),
        });
      } catch (e) {
        this.fail(t, error, logLines.slice(-LOG_TAIL), `${where}no error report (it could not be written)`);
        throw e;
      }
      return this.fail(t, error, logLines.slice(-LOG_TAIL), `${where}error report ${report}`);
    }
    const r = res.value;
    if (r.summary) r.summary = redact(r.summary);
    const gateFailed = t.gate && !gatePasses(r.checks ?? []);
    const record: TargetRecord = {
      name: t.name, key: d.key, fingerprint: d.fp, outputs: outputRecords(r.outputs), result: gateFailed ? 'gate-failed' : 'ok', how: 'ran',
      ...(r.checks ? { checks: r.checks } : {}), ...(r.summary ? { summary: r.summary } : {}), rule: r.rule, ms: Math.round(ms), at: new Date().toISOString(),
    };
    const unchanged = sameOutputs(ws.trace.records.get(t.name), record);
    ws.committer.commit(record, r.outputs);
    this.committedAny = true;
    // Copies (never links) of the outputs just committed: nothing written to the workspace later can reach them.
    // A worker that stored them (and the entry) already did; the remote tier still hears of it.
    const entry = { target: t.name, key: d.key, outputs: record.outputs, result: gateFailed ? 'gate-failed' as const : 'ok' as const, ...(r.checks ? { checks: r.checks } : {}), ...(r.summary ? { summary: r.summary } : {}), rule: r.rule };
    if (r.cached) ws.cache.stored(entry);
    else ws.cache.put(entry, (o) => path.join(ws.root, o.path));
    this.counts.ran++;
    this.emit({ event: 'done', target: t.name, ms, outputs: record.outputs.map((o) => ({ path: o.path, sha256: o.sha256 })), restored: false, ...(r.summary ? { summary: r.summary } : {}), ...(unchanged ? { unchanged } : {}) });
    return t.gate ? this.gateOutcome(t, r.checks ?? [], 'ran') : 'ran';
  }

  /** SIGINT/SIGTERM: stop rules, drop their temp outputs, keep every finished record. */
  async interrupt(t0: number): Promise<void> {
    if (this.interrupted) return;
    this.interrupted = true;
    await this.runners?.abortAll(2000);
    rmrf(this.tmpDir()); // we hold the lock: every temp output in it is ours
    try {
      await this.finish();
    } catch (e) {
      const w = asEngineWriteError(e, this.ws.root);
      if (!w) throw e;
      this.emit({ event: 'warning', message: w.message });
    }
    this.emit({ event: 'end', ok: false, ms: performance.now() - t0, exitCode: 130, counts: this.counts, interrupted: true });
  }

  async close(): Promise<void> {
    await this.runners?.close();
  }
}

export type { RebuildReason };
