// Records a build in the run history (.rc1/runs.jsonl): a Reporter that watches the events of the
// build as they pass to the real reporter (what ran, was restored, failed, with durations), and
// recordRun(), called once after the build, which adds the state the build left: every target's
// key and output hashes, every gate's checks (from the trace, already in memory), every declared
// param's value and every declared metric (state/run-history.ts stores only what changed). Metrics
// files are read only for targets this build changed, so a no-op reads no file.
import * as path from 'node:path';
import { getKey, type ConfigObject } from '../config/load-configs.ts';
import type { ResolvedPipeline } from '../graph/resolved.ts';
import {
  DEFAULT_HISTORY_KEEP,
  type RunCounts,
  type RunLine,
  type RunOutcome,
  RunHistory,
  traceStamp,
} from '../state/run-history.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import { canonicalJson, sortedCopy } from '../util/canonical-json.ts';
import type { GitState } from '../util/git-state.ts';
import type { BuildEvent, Reporter } from './events.ts';
import { readMetrics } from './read-metrics.ts';

export const RUNS_FILE = 'runs.jsonl';

export class RunRecorder implements Reporter {
  readonly outcomes: Record<string, { outcome: RunOutcome; ms?: number }> = {};
  readonly counts: RunCounts = { ran: 0, restored: 0, upToDate: 0, failed: 0, gateFailed: 0, blocked: 0 };
  readonly startedAt = new Date();
  ms = 0;
  /** The trace's size:mtime when the build began (after the lock was taken). */
  startTrace = '';
  constructor(
    private readonly inner: Reporter,
    private readonly traceFile: string,
  ) {}

  emit(e: BuildEvent): void {
    switch (e.event) {
      case 'plan':
        this.startTrace = traceStamp(this.traceFile);
        break;
      case 'done':
        this.outcomes[e.target] = { outcome: e.restored ? 'restored' : 'ran', ms: Math.round(e.ms) };
        break;
      case 'gate':
        if (!e.pass) this.outcomes[e.target] = { ...this.outcomes[e.target], outcome: 'gate-failed' };
        break;
      case 'fail':
        this.outcomes[e.target] = { outcome: 'failed' };
        break;
      case 'blocked':
        this.outcomes[e.target] = { outcome: 'blocked' };
        break;
      case 'end':
        this.ms = Math.round(e.ms);
        Object.assign(this.counts, e.counts);
        break;
      default:
        break;
    }
    this.inner.emit(e);
  }

  close(): void {
    this.inner.close();
  }
}

export interface RecordWorkspace {
  root: string;
  stateDir: string;
  profile: string;
  pipeline: ResolvedPipeline;
  config: { values: ConfigObject };
  trace: { records: ReadonlyMap<string, TargetRecord>; file: string };
}

export function historyOf(
  ws: Pick<RecordWorkspace, 'stateDir' | 'pipeline'>,
  env: NodeJS.ProcessEnv = process.env,
): RunHistory {
  const fromEnv = Number(env.RC1_HISTORY_KEEP);
  const keep = Number.isInteger(fromEnv) && fromEnv >= 2 ? fromEnv : (ws.pipeline.historyKeep ?? DEFAULT_HISTORY_KEEP);
  return new RunHistory(path.join(ws.stateDir, RUNS_FILE), keep);
}

/** Every declared param key (dotted, sorted) → its value in the config. */
export function declaredParams(pipeline: ResolvedPipeline, values: ConfigObject): Record<string, unknown> {
  const keys = new Set<string>();
  for (const t of pipeline.targets.values()) for (const k of t.params) keys.add(k);
  const out: Record<string, unknown> = {};
  for (const k of [...keys].sort()) {
    const v = getKey(values, k);
    out[k] = typeof v === 'symbol' ? null : sortedCopy(v);
  }
  return out;
}

/**
 * Appends this build's run; returns its id. Only the targets this build changed are written,
 * unless the trace changed since the last run was recorded: then the whole state is.
 */
export function recordRun(
  ws: RecordWorkspace,
  rec: RunRecorder,
  o: { command: string; asked: string[]; exitCode: number; git: GitState },
): number {
  const history = historyOf(ws);
  const prev = history.lastLine();
  const full = !prev || prev.trace !== rec.startTrace;
  const state: RunLine['state'] = {};
  const checks: RunLine['checks'] = {};
  const metrics: RunLine['metrics'] = {};
  const names = full
    ? ws.pipeline.order
    : Object.keys(rec.outcomes).filter((n) => ws.pipeline.targets.has(n) && rec.outcomes[n]!.outcome !== 'blocked');
  for (const name of names) {
    const t = ws.pipeline.targets.get(name)!;
    const r = ws.trace.records.get(name);
    const usable = r && r.result !== 'failed' ? r : null;
    if (usable)
      state[name] = { key: usable.key, outputs: Object.fromEntries(usable.outputs.map((x) => [x.path, x.sha256])) };
    else if (!full) state[name] = null;
    if (t.gate) {
      if (usable?.checks) checks[name] = usable.checks;
      else if (!full) checks[name] = null;
    }
    for (const m of t.metrics ?? []) {
      const got = usable ? readMetrics(path.join(ws.root, m)) : null;
      if (got && typeof got.error !== 'string') metrics[m] = got as Record<string, number>;
      else if (!full) metrics[m] = null;
    }
  }
  const params = declaredParams(ws.pipeline, ws.config.values);
  const paramsHash = sha256Hex(canonicalJson(params));
  return history.append(
    {
      at: rec.startedAt.toISOString(),
      ms: rec.ms,
      exitCode: o.exitCode,
      command: o.command,
      profile: ws.profile,
      ...(ws.pipeline.name ? { pipeline: ws.pipeline.name } : {}),
      git: o.git,
      ...(o.asked.join('\0') === ws.pipeline.defaultTargets.join('\0') ? {} : { asked: o.asked }),
      counts: rec.counts,
      outcomes: rec.outcomes,
      trace: traceStamp(ws.trace.file),
      paramsHash,
      full,
      state,
      ...(full || prev?.paramsHash !== paramsHash ? { params } : {}),
      checks,
      metrics,
    },
    prev,
  );
}
