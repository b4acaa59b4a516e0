// The root cause of each target that runs (or would) in one build, for --explain's grouping
// (rebuild/root-cause.ts): a target's cause is its own reason or the cause carried from the
// upstream target whose output changed, so the build can group the cascade under one root.
import type { ResolvedPipeline, ResolvedTarget } from '../graph/resolved.ts';
import type { RebuildReason } from '../hash/fingerprint.ts';
import { type RootCause, rootCause } from '../rebuild/root-cause.ts';

export class RootCauses {
  private readonly roots = new Map<string, RootCause>();

  constructor(private readonly pipeline: ResolvedPipeline) {}

  /** The root of `t` given its reasons (and, in a dry run, the upstream targets that will change), as an event field. */
  of(t: ResolvedTarget, reasons: readonly RebuildReason[], staleDeps: readonly string[] = []): { root?: RootCause } {
    const r = rootCause(this.pipeline, t.name, reasons, (n) => this.roots.get(n) ?? null, staleDeps);
    if (!r) return {};
    this.roots.set(t.name, r);
    return { root: r };
  }
}
