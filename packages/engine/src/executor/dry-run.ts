// -n: what a build would do, without running, restoring or writing anything. Each planned target
// is decided in plan order; a target downstream of one that will change "may run" (early cutoff
// can still keep it). Emits one 'explain' event per target.
import { formatReason } from '../hash/fingerprint.ts';
import type { ResolvedPipeline } from '../graph/resolved.ts';
import { RootCauses } from './root-causes.ts';
import type { BuildEvent, Counts } from '../report/events.ts';
import type { Rebuilder } from './ports.ts';

export async function explainPlan(
  plan: readonly string[],
  pipeline: ResolvedPipeline,
  rebuilder: Pick<Rebuilder, 'decide'>,
  emit: (e: BuildEvent) => void,
  counts: Counts,
): Promise<void> {
  const willChange = new Set<string>();
  const roots = new RootCauses(pipeline);
  for (const n of plan) {
    const t = pipeline.targets.get(n)!;
    const d = await rebuilder.decide(t);
    const upstream = t.deps.filter((x) => willChange.has(x));
    if (d.kind === 'fresh' && upstream.length === 0) {
      counts.upToDate++;
      emit({ event: 'explain', target: n, decision: 'up-to-date', reasons: [] });
      continue;
    }
    willChange.add(n);
    const reasons = d.kind === 'fresh' ? [] : d.reasons.map(formatReason);
    if (upstream.length)
      reasons.push(
        `after ${upstream.join(', ')} (${upstream.length > 1 ? 'they run' : 'it runs'}; early cutoff may keep this one)`,
      );
    const decision =
      d.kind === 'restore'
        ? 'restore'
        : d.kind === 'missing-input' && upstream.length === 0
          ? 'missing-input'
          : d.kind === 'run' || d.kind === 'missing-input'
            ? upstream.length && d.kind !== 'run'
              ? 'may-run'
              : 'run'
            : 'may-run';
    if (d.kind === 'missing-input' && !upstream.length) reasons.push(d.error);
    emit({
      event: 'explain',
      target: n,
      decision,
      reasons,
      ...roots.of(t, d.kind === 'fresh' ? [] : d.reasons, upstream),
    });
  }
}
