// Carries out one target (the scheduler decides when; this decides nothing about order):
//   decide (rebuild/decide.ts) → up to date | restore from the output cache (the local one, or
//   after a local miss another tier: OutputStore.lookup) | run the rule on the RuleRunner in a -j
//   slot → commit the outputs and the record → store the outputs in the cache → events, the rule
//   log and, on failure, an error report.
// A rule's failure is an outcome ('failed'); only a write the engine itself cannot make (an
// EngineWriteError) is thrown, which halts the build (scheduler/scheduler.ts). Everything it
// touches comes in through ExecutorPorts (executor/ports.ts), so it is tested in memory.
import * as path from 'node:path';
import { gatePasses, type Check } from '../api/index.ts';
import { codeHash, formatReason } from '../hash/fingerprint.ts';
import type { ResolvedPipeline, ResolvedTarget } from '../graph/resolved.ts';
import { sameOutputs } from '../rebuild/root-cause.ts';
import { RootCauses } from './root-causes.ts';
import type { Decision } from '../rebuild/decide.ts';
import type { CacheEntry } from '../cache/output-cache.ts';
import { outputRecords } from '../state/commit-outputs.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import type { JobFailure } from '../runner/protocol.ts';
import type { RuleOutcome } from '../runner/rule-runner.ts';
import { CompileError } from '../config/compile-module.ts';
import { redactor } from '../util/redact-secrets.ts';
import { EngineWriteError, cannotRead } from '../util/write-error.ts';
import { Semaphore } from '../util/semaphore.ts';
import type { BuildState, Outcome, Slots, TargetExecutor as SchedulerExecutor } from '../scheduler/scheduler.ts';
import type { ExecutorPorts } from './ports.ts';

/** Lines of a rule's log kept for the rule log, the failure event and the error report. */
export const LOG_TAIL = 200;

/** How long running rules get to stop (ctx.signal) before their workers are terminated. */
export const ABORT_GRACE_MS = 2000;

export class TargetExecutor implements SchedulerExecutor {
  /** Whether this build committed anything (restored or ran): the manifest then records the git state. */
  committedAny = false;
  private readonly deciding = new Semaphore(1);
  private readonly roots: RootCauses;

  constructor(
    private readonly pipeline: ResolvedPipeline,
    private readonly p: ExecutorPorts,
  ) {
    this.roots = new RootCauses(pipeline);
  }

  async cancel(): Promise<void> {
    await this.p.runners.abortAll(ABORT_GRACE_MS);
  }

  async execute(name: string, slots: Slots, state: BuildState): Promise<Outcome> {
    const t = this.pipeline.targets.get(name);
    if (!t) throw new Error(`internal error: target ${name} is not in the pipeline; please report`);
    let d: Decision;
    // Decisions are taken one at a time, in the order the scheduler hands targets out: they are
    // quick (stat calls), and a fixed order makes a build that runs no rule print the same output.
    await this.deciding.acquire();
    try {
      d = await this.p.rebuilder.decide(t);
    } catch (e) {
      // Only the engine's own writes halt the build; an input or rule it cannot read fails this target.
      if (e instanceof EngineWriteError) throw e;
      return this.fail(
        t,
        e instanceof CompileError
          ? `${t.rule} does not compile:\n${e.message}`
          : (cannotRead(e, this.p.job.root) ?? String((e as Error).stack ?? e)),
      );
    } finally {
      this.deciding.release();
    }
    const reasons = d.kind === 'fresh' ? [] : d.reasons.map(formatReason);
    this.p.emit({
      event: 'explain',
      target: t.name,
      decision: d.kind === 'fresh' ? 'up-to-date' : d.kind,
      reasons,
      ...(d.kind === 'fresh' ? {} : this.roots.of(t, d.reasons)),
    });
    switch (d.kind) {
      case 'fresh': {
        if (d.record.result === 'gate-failed') {
          this.p.counts.gateFailed++;
          this.p.emit({
            event: 'gate',
            target: t.name,
            pass: false,
            checks: d.record.checks ?? [],
            report: t.report ?? '',
            replayed: true,
          });
          return 'gate-failed';
        }
        this.p.counts.upToDate++;
        this.p.emit({ event: 'skip', target: t.name, reason: 'up-to-date' });
        return 'up-to-date';
      }
      case 'missing-input':
        return this.fail(t, d.error);
      case 'restore': {
        const o = this.restore(t, d);
        if (o) return o;
        return this.run(t, { ...d, kind: 'run' }, slots, state);
      }
      case 'run': {
        // A local miss: another tier of the cache (the remote cache), if any, may hold it.
        const entry = await this.p.cache.lookup(t, d.key);
        return (entry && this.restore(t, { ...d, kind: 'restore', entry })) || this.run(t, d, slots, state);
      }
      default: {
        const never: never = d;
        throw new Error(`internal error: unknown decision ${JSON.stringify(never)}; please report`);
      }
    }
  }

  /** Restore from the output cache and commit; null when the entry was corrupt (then the rule runs). */
  private restore(t: ResolvedTarget, d: Extract<Decision, { kind: 'restore' }>): Outcome | null {
    const { p } = this;
    const t0 = p.clock.now();
    const tmp = p.disk.tempPaths(t);
    if (!p.cache.materialize(d.entry, tmp.of)) {
      p.disk.dropTemp(tmp.prefix);
      p.emit({
        event: 'warning',
        message: `cache entry for ${t.name} was corrupt and has been dropped; running the rule`,
      });
      return null;
    }
    p.emit({
      event: 'restore',
      target: t.name,
      reason: d.reasons.map(formatReason)[0] ?? 'fingerprint matches a cached build',
      reasons: d.reasons.map(formatReason),
    });
    const hashed = t.outputs.map((o) => p.disk.hashOutput({ path: o.path, dir: o.dir, tmp: tmp.of(o.path) }));
    const record: TargetRecord = {
      name: t.name,
      key: d.key,
      fingerprint: d.fp,
      outputs: outputRecords(hashed),
      result: d.entry.result,
      how: 'restored',
      ...(d.entry.checks ? { checks: d.entry.checks } : {}),
      ...(d.entry.summary ? { summary: d.entry.summary } : {}),
      ...(d.entry.rule ? { rule: d.entry.rule } : {}),
      ms: 0,
      at: p.clock.date().toISOString(),
    };
    const unchanged = sameOutputs(p.state.previous(t.name), record);
    p.state.commit(record, hashed);
    this.committedAny = true;
    p.counts.restored++;
    const ms = p.clock.now() - t0;
    p.emit({
      event: 'done',
      target: t.name,
      ms,
      outputs: record.outputs.map((o) => ({ path: o.path, sha256: o.sha256 })),
      restored: true,
      ...(record.summary ? { summary: record.summary } : {}),
      ...(unchanged ? { unchanged } : {}),
    });
    return t.gate ? this.gateOutcome(t, record.checks ?? [], 'restored') : 'restored';
  }

  /** Run the rule (in a -j slot when its runner needs one), then commit and store in the cache (success) or report (failure). */
  private async run(
    t: ResolvedTarget,
    d: Extract<Decision, { kind: 'run' }>,
    slots: Slots,
    state: BuildState,
  ): Promise<Outcome> {
    const { p } = this;
    const reasons = d.reasons.map(formatReason);
    let module: string;
    try {
      module = await p.compile(t.rule);
    } catch (e) {
      if (e instanceof EngineWriteError) throw e;
      return this.fail(
        t,
        e instanceof CompileError
          ? `${t.rule} does not compile:\n${e.message}`
          : (cannotRead(e, p.job.root) ?? String(e)),
      );
    }
    // A job another scheduler places (a Slurm job) takes no local slot: the build only follows it.
    const target = { name: t.name, ...(t.executor ? { executor: t.executor } : {}), secrets: t.secrets };
    const runner = p.runners.for(target);
    const slot = runner.usesLocalSlot;
    if (slot) await slots.acquire();
    const release = (): void => {
      if (slot) slots.release();
    };
    if (state.interrupted || state.halted) {
      release();
      return 'failed';
    }
    p.git.start();
    // The start is told when the rule really starts: a runner may hold the job behind a running
    // rule first (the worker pool), so -j 2 never shows more than 2 rules running.
    let t0 = 0;
    let began = false;
    const begin = (): void => {
      if (began) return;
      began = true;
      t0 = p.clock.now();
      p.emit({ event: 'start', target: t.name, reason: reasons[0] ?? 'out of date', reasons });
    };
    const tmp = p.disk.tempPaths(t);
    let res: RuleOutcome;
    const logLines: string[] = [];
    const redact = redactor(t.secrets.map((n) => p.env[n]));
    try {
      const inputs = await p.rebuilder.resolveInputs(t);
      const abs = Object.fromEntries(
        Object.entries(inputs).map(([g, ps]) => [g, ps.map((x) => path.resolve(p.job.root, x))]),
      );
      const envVals: Record<string, string | undefined> = {};
      for (const n of [...t.env, ...t.secrets]) envVals[n] = p.env[n];
      let lastProgress = 0;
      res = await runner.run(
        {
          target: t.name,
          gate: t.gate,
          ...(t.report ? { report: t.report } : {}),
          module,
          ruleFile: t.rule,
          root: p.job.root,
          stateDir: p.job.stateDirOf(t.name),
          state: (t.state ?? []).map((x) => x.path),
          profile: p.job.profile,
          params: p.job.paramsOf(t),
          args: t.args,
          forced: p.job.forced.has(t.name),
          codeHash: codeHash(d.fp),
          env: envVals,
          inputs: abs,
          tmpDir: p.disk.tmpDir,
          tmpPrefix: tmp.prefix,
          cacheDir: p.cache.dir,
          // Without secrets there is nothing to redact in the entry: the worker writes it, off this thread.
          ...(t.secrets.length === 0 ? { cacheKey: d.key } : {}),
          outputs: t.outputs.map((o) => ({
            path: o.path,
            dir: o.dir,
            tmp: tmp.of(o.path),
            ...(o.name ? { name: o.name } : {}),
          })),
        },
        {
          started: begin,
          log: (raw) => {
            begin();
            const line = redact(raw);
            logLines.push(line);
            if (logLines.length > LOG_TAIL * 5) logLines.splice(0, logLines.length - LOG_TAIL);
            p.emit({ event: 'log', target: t.name, line });
          },
          progress: (done, total, unit) => {
            begin();
            const now = p.clock.now();
            if (now - lastProgress < 100 && done < total) return;
            lastProgress = now;
            p.emit({ event: 'progress', target: t.name, done, total, ...(unit ? { unit } : {}) });
          },
        },
        target,
      );
    } finally {
      begin(); // a runner that does not tell the start (or a failure before the hand-over)
      release();
    }
    const ms = p.clock.now() - t0;
    if (state.halted) {
      p.disk.dropTemp(tmp.prefix);
      return 'failed';
    }
    p.disk.writeRuleLog(t.name, logLines.slice(-LOG_TAIL));
    if (state.interrupted) return 'failed';
    if (!res.ok) return this.ruleFailed(t, d, res.error, { reasons, logLines, ms, prefix: tmp.prefix, redact });
    const r = res.value;
    if (r.summary) r.summary = redact(r.summary);
    const result = t.gate && !gatePasses(r.checks ?? []) ? 'gate-failed' : 'ok';
    const record: TargetRecord = {
      name: t.name,
      key: d.key,
      fingerprint: d.fp,
      outputs: outputRecords(r.outputs),
      result,
      how: 'ran',
      ...(r.checks ? { checks: r.checks } : {}),
      ...(r.summary ? { summary: r.summary } : {}),
      rule: r.rule,
      ms: Math.round(ms),
      at: p.clock.date().toISOString(),
    };
    const unchanged = sameOutputs(p.state.previous(t.name), record);
    p.state.commit(record, r.outputs, r.ruleMs);
    this.committedAny = true;
    // Copies (never links) of the outputs just committed: nothing written to the workspace later can reach them.
    // A worker that stored them (and the entry) already did; the remote tier still hears of it.
    const entry: Omit<CacheEntry, 'format'> = {
      target: t.name,
      key: d.key,
      outputs: record.outputs,
      result,
      ...(r.checks ? { checks: r.checks } : {}),
      ...(r.summary ? { summary: r.summary } : {}),
      rule: r.rule,
    };
    if (r.cached) p.cache.stored(entry);
    else p.cache.put(entry, (o) => path.join(p.job.root, o.path));
    p.counts.ran++;
    p.emit({
      event: 'done',
      target: t.name,
      ms,
      outputs: record.outputs.map((o) => ({ path: o.path, sha256: o.sha256 })),
      restored: false,
      ...(r.summary ? { summary: r.summary } : {}),
      ...(unchanged ? { unchanged } : {}),
    });
    return t.gate ? this.gateOutcome(t, r.checks ?? [], 'ran') : 'ran';
  }

  /** A rule failed: drop its temporary outputs, record the failure, write the error report. */
  private async ruleFailed(
    t: ResolvedTarget,
    d: Extract<Decision, { kind: 'run' }>,
    failure: JobFailure,
    r: { reasons: string[]; logLines: string[]; ms: number; prefix: string; redact: (s: string) => string },
  ): Promise<Outcome> {
    const { p } = this;
    p.disk.dropTemp(r.prefix);
    const error = r.redact(await this.formatFailure(t, failure));
    p.state.recordFailure({
      name: t.name,
      key: d.key,
      fingerprint: d.fp,
      outputs: [],
      result: 'failed',
      how: 'ran',
      error: error.split('\n')[0]!,
      ms: r.ms,
      at: p.clock.date().toISOString(),
    });
    const tail = r.logLines.slice(-LOG_TAIL);
    const where = r.logLines.length ? `${p.disk.ruleLogPath(t.name)}; ` : '';
    let report: string;
    try {
      report = p.disk.writeErrorReport({
        target: t.name,
        rule: t.rule,
        kind: failure.kind,
        error,
        reasons: r.reasons,
        profile: p.job.profile,
        git: await p.git.get(),
        log_tail: tail,
      });
    } catch (e) {
      this.fail(t, error, tail, `${where}no error report (it could not be written)`);
      throw e;
    }
    return this.fail(t, error, tail, `${where}error report ${report}`);
  }

  private gateOutcome(t: ResolvedTarget, checks: Check[], passed: Outcome): Outcome {
    const pass = gatePasses(checks);
    this.p.emit({ event: 'gate', target: t.name, pass, checks, report: t.report ?? '', replayed: false });
    if (!pass) {
      this.p.counts.gateFailed++;
      return 'gate-failed';
    }
    return passed;
  }

  private fail(t: ResolvedTarget, error: string, lastLines?: string[], log?: string): Outcome {
    this.p.counts.failed++;
    this.p.emit({ event: 'fail', target: t.name, error, ...(lastLines ? { lastLines } : {}), ...(log ? { log } : {}) });
    return 'failed';
  }

  private async formatFailure(t: ResolvedTarget, e: JobFailure): Promise<string> {
    if (e.kind === 'param-error' && e.paramIssues) {
      const lines: string[] = [];
      for (const i of e.paramIssues) lines.push(`${await this.p.job.locateParam(i.key)}: ${i.key}: ${i.message}`);
      return `invalid config for ${t.name} (checked by ${t.rule}):\n  ${lines.join('\n  ')}`;
    }
    return e.kind === 'rule-error' && e.stack ? e.stack : e.message;
  }
}
