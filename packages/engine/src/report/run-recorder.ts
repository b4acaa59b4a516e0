// Records a build in the run history (.rc1/runs.jsonl): a Reporter that watches the events of the
// build as they pass to the real reporter (what ran, was restored, failed, with durations), and
// recordRun(), called once after the build, which adds the state the build left: every target's
// key and output hashes, every gate's checks (from the trace, already in memory), every declared
// param's value and every declared metric. Metrics files are read only for targets whose outputs
// changed since the last run; the others are carried over from it, so a no-op reads no file.
import * as path from 'node:path';
import type { Check } from '../api/index.ts';
import { getKey, type ConfigObject } from '../config/load-configs.ts';
import type { ResolvedPipeline } from '../graph/resolved.ts';
import { DEFAULT_HISTORY_KEEP, type RunOutcome, type RunRecord, type RunTarget, RunHistory } from '../state/run-history.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import { sortedCopy } from '../util/canonical-json.ts';
import type { GitState } from '../util/git-state.ts';
import type { BuildEvent, Reporter } from './events.ts';
import { readMetrics } from './read-metrics.ts';

export const RUNS_FILE = 'runs.jsonl';

export class RunRecorder implements Reporter {
  readonly seen = new Map<string, { outcome: RunOutcome; ms?: number }>();
  readonly startedAt = new Date();
  ms = 0;
  constructor(private readonly inner: Reporter) {}

  emit(e: BuildEvent): void {
    switch (e.event) {
      case 'skip': this.seen.set(e.target, { outcome: 'up-to-date' }); break;
      case 'done': this.seen.set(e.target, { outcome: e.restored ? 'restored' : 'ran', ms: Math.round(e.ms) }); break;
      case 'gate': if (!e.pass) this.seen.set(e.target, { ...this.seen.get(e.target), outcome: 'gate-failed' }); break;
      case 'fail': this.seen.set(e.target, { outcome: 'failed' }); break;
      case 'blocked': this.seen.set(e.target, { outcome: 'blocked' }); break;
      case 'end': this.ms = Math.round(e.ms); break;
      default: break;
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
  trace: { records: ReadonlyMap<string, TargetRecord> };
}

export function historyOf(ws: Pick<RecordWorkspace, 'stateDir' | 'pipeline'>, env: NodeJS.ProcessEnv = process.env): RunHistory {
  const fromEnv = Number(env.RC1_HISTORY_KEEP);
  const keep = Number.isInteger(fromEnv) && fromEnv >= 2 ? fromEnv : ws.pipeline.historyKeep ?? DEFAULT_HISTORY_KEEP;
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

/** Appends this build's run; returns its id. */
export function recordRun(ws: RecordWorkspace, rec: RunRecorder, o: { command: string; asked: string[]; exitCode: number; git: GitState }): number {
  const history = historyOf(ws);
  const prev = history.last();
  const targets: Record<string, RunTarget> = {};
  const checks: Record<string, Check[]> = {};
  const metrics: RunRecord['metrics'] = {};
  for (const name of ws.pipeline.order) {
    const t = ws.pipeline.targets.get(name)!;
    const r = ws.trace.records.get(name);
    const seen = rec.seen.get(name);
    const outputs = r && r.result !== 'failed' ? Object.fromEntries(r.outputs.map((x) => [x.path, x.sha256])) : undefined;
    targets[name] = { outcome: seen?.outcome ?? 'not-planned', ...(seen?.ms !== undefined ? { ms: seen.ms } : {}), ...(r ? { key: r.key } : {}), ...(outputs ? { outputs } : {}) };
    if (t.gate && r?.checks && r.result !== 'failed') checks[name] = r.checks;
    for (const m of t.metrics ?? []) {
      const sha = outputs?.[m];
      if (!sha) continue;
      const before = prev?.targets[name]?.outputs?.[m];
      if (before === sha && prev?.metrics[m]) metrics[m] = prev.metrics[m];
      else {
        const got = readMetrics(path.join(ws.root, m));
        if (typeof got.error !== 'string') metrics[m] = got as Record<string, number>;
      }
    }
  }
  return history.append({
    at: rec.startedAt.toISOString(), ms: rec.ms, exitCode: o.exitCode, command: o.command, profile: ws.profile,
    ...(ws.pipeline.name ? { pipeline: ws.pipeline.name } : {}), git: o.git, asked: o.asked, targets,
    params: declaredParams(ws.pipeline, ws.config.values), checks, metrics,
  }, prev);
}
