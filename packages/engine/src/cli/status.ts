// `rc1-build status`: every target is up-to-date | stale (reason) | missing | failed, computed
// exactly as a build would decide, without running anything or taking the lock — and the state
// each rule keeps between builds (its ctx.stateDir and declared state), with sizes.
import { formatReason } from '../hash/fingerprint.ts';
import { decide } from '../rebuild/decide.ts';
import { checksTable } from '../report/console-reporter.ts';
import * as path from 'node:path';
import { targetStateDir } from '../state/target-state-dir.ts';
import { diskUsage, formatSize } from '../util/size.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { colourEnabled, painter } from '../util/colour.ts';
import { stdoutStream } from '../util/terminal.ts';

interface Io {
  out: (s: string) => void;
}

export interface TargetStatus {
  name: string;
  state: 'up-to-date' | 'stale' | 'missing' | 'failed';
  reasons: string[];
  /** The outputs can be restored from the cache instead of running the rule. */
  restorable: boolean;
  /** How the current outputs got there. */
  how?: 'ran' | 'restored';
  gate: boolean;
  /** The profile the current outputs were built in (absent when never built). */
  profile?: string;
  /**
   * State the rule keeps between builds, where it exists: its own state dir (.rc1/state/<target>)
   * and its declared `state` paths (cache: kept by `clean`, removed by `clean --cache`).
   */
  ruleState?: { path: string; bytes: number; cache: boolean }[];
}

/** A target's rule state on disk: its own state dir, then its declared state paths (those that exist). */
export function ruleStateOf(
  ws: Pick<Workspace, 'root' | 'stateDir' | 'pipeline'>,
  name: string,
): { path: string; bytes: number; cache: boolean }[] {
  const t = ws.pipeline.targets.get(name)!;
  const out: { path: string; bytes: number; cache: boolean }[] = [];
  const own = path.relative(ws.root, targetStateDir(ws.stateDir, name));
  for (const st of [{ path: own, cache: false }, ...(t.state ?? [])]) {
    const bytes = diskUsage(path.join(ws.root, st.path));
    if (bytes !== null) out.push({ path: st.path, bytes, cache: st.cache });
  }
  return out;
}

export async function targetStatuses(ws: Workspace): Promise<TargetStatus[]> {
  const env = ws.decideEnv(new Set());
  const stale = new Set<string>();
  const out: TargetStatus[] = [];
  const order = [...ws.pipeline.order];
  // dependencies first, so "stale because a dependency is stale" can be said
  const done = new Set<string>();
  const topo: string[] = [];
  const visit = (n: string): void => {
    if (done.has(n)) return;
    done.add(n);
    for (const d of ws.pipeline.targets.get(n)!.deps) visit(d);
    topo.push(n);
  };
  order.forEach(visit);
  const byName = new Map<string, TargetStatus>();
  for (const n of topo) {
    const t = ws.pipeline.targets.get(n)!;
    const rec = ws.trace.records.get(n);
    const d = await decide(env, t);
    const upstream = t.deps.filter((x) => stale.has(x));
    let s: TargetStatus;
    if (d.kind === 'fresh') {
      if (d.record.result === 'gate-failed') {
        const failed = (d.record.checks ?? []).filter((c) => c.status === 'fail').map((c) => c.name);
        s = {
          name: n,
          state: 'failed',
          reasons: [`gate failed: ${failed.length ? failed.join(', ') : 'no check passed (every check n/a)'}`],
          restorable: false,
          how: d.record.how,
          gate: t.gate,
        };
        stale.add(n);
      } else if (upstream.length) {
        s = {
          name: n,
          state: 'stale',
          reasons: [`dependency ${upstream.join(', ')} is not up to date`],
          restorable: false,
          how: d.record.how,
          gate: t.gate,
        };
        stale.add(n);
      } else s = { name: n, state: 'up-to-date', reasons: [], restorable: false, how: d.record.how, gate: t.gate };
    } else {
      stale.add(n);
      const reasons = d.reasons.map(formatReason);
      if (d.kind === 'missing-input') reasons.push(d.error);
      if (upstream.length) reasons.push(`dependency ${upstream.join(', ')} is not up to date`);
      const state =
        rec?.result === 'failed'
          ? 'failed'
          : !rec || d.reasons.some((r) => r.kind === 'output-missing' || r.kind === 'never-built')
            ? 'missing'
            : 'stale';
      s = { name: n, state, reasons, restorable: d.kind === 'restore', ...(rec ? { how: rec.how } : {}), gate: t.gate };
    }
    if (rec) s.profile = rec.fingerprint.profile;
    const kept = ruleStateOf(ws, n);
    if (kept.length) s.ruleState = kept;
    byName.set(n, s);
  }
  for (const n of order) out.push(byName.get(n)!);
  return out;
}

/** Every target's status, or (with names) the named targets' only, decided in the context of the whole graph. */
export async function runStatus(ws: Workspace, json: boolean, io: Io, names: readonly string[] = []): Promise<number> {
  const all = await targetStatuses(ws);
  const list = names.length ? all.filter((s) => names.includes(s.name)) : all;
  ws.saveCaches();
  if (json) {
    io.out(JSON.stringify({ profile: ws.profile, targets: list }) + '\n');
    return 0;
  }
  const w = Math.max(...list.map((s) => s.name.length));
  const paint = painter(colourEnabled(stdoutStream()));
  const STYLE = { 'up-to-date': 'green', stale: 'yellow', missing: 'yellow', failed: 'red' } as const;
  for (const s of list) {
    const extra =
      s.state === 'up-to-date'
        ? s.how === 'restored'
          ? ' (restored from cache)'
          : ''
        : ` (${s.restorable ? 'restorable from cache: ' : ''}${s.reasons.join('; ')})`;
    io.out(`${s.name.padEnd(w)}  ${paint(STYLE[s.state], s.state)}${extra}\n`);
    if (s.ruleState)
      io.out(
        `${' '.repeat(w)}  state: ${s.ruleState.map((k) => `${k.path} (${formatSize(k.bytes)}${k.cache ? ', cache' : ''})`).join(', ')}\n`,
      );
    if (s.state === 'failed' && s.gate) {
      const rec = ws.trace.records.get(s.name);
      if (rec?.checks) for (const l of checksTable(rec.checks)) io.out(l + '\n');
    }
  }
  return 0;
}
