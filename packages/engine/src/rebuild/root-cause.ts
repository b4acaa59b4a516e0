// The one root cause of a rebuild. A target's reasons are field-by-field differences of its
// fingerprint; most of them, in a cascade, are inputs that an upstream target just rebuilt. The
// root is what a person changed: an edited source file, a param, a rule's code, an env var, a
// forced or never-built target. rootCause() follows input changes back to the upstream target
// that produced them (whose root is already known, dependencies being decided first) and keeps
// the target's own causes first, so every rebuilt target names one root and the chain (via) that
// carried it, and the console can group the cascade under it.
import type { ResolvedPipeline } from '../graph/resolved.ts';
import { type RebuildReason, formatReason } from '../hash/fingerprint.ts';
import type { TargetRecord } from '../state/trace-log.ts';

export interface RootCause {
  /** What changed, in words; the key the cascade is grouped under ("templates/a.json changed"). */
  label: string;
  /** The reason as data. */
  reason: RebuildReason;
  /** The target where the root was seen (itself for an own cause). */
  at: string;
  /** Upstream targets the change travelled through, root side first (empty for an own cause). */
  via: string[];
  /** Other distinct roots of this target, beyond this one. */
  more: number;
}

const show = (v: unknown): string => {
  const s = v === undefined ? '(unset)' : JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 37) + '...' : s;
};

/** The root label of an own reason (no hashes: the same edit gives the same label in every target). */
export function rootLabel(r: RebuildReason): string {
  switch (r.kind) {
    case 'input-changed':
      return `${r.path} changed`;
    case 'input-added':
      return `${r.path} added`;
    case 'input-removed':
      return `${r.path} removed`;
    case 'param-changed':
      return `param ${r.key} changed: ${show(r.old)} → ${show(r.new)}`;
    case 'arg-changed':
      return `arg ${r.key} changed: ${show(r.old)} → ${show(r.new)}`;
    case 'code-changed':
      return `code ${r.file} changed`;
    case 'code-added':
      return `code ${r.file} now imported`;
    case 'code-removed':
      return `code ${r.file} no longer imported`;
    case 'output-modified':
      return `output ${r.path} was modified`;
    case 'previous-failure':
      return 'failed last time';
    default:
      return formatReason(r);
  }
}

const FIRST: RebuildReason['kind'][] = [
  'forced',
  'state-format-changed',
  'fingerprint-format-changed',
  'never-built',
  'profile-changed',
  'rule-changed',
];

/** The target producing a path: an output, or a file inside a directory output. */
export function producerOf(p: ResolvedPipeline, file: string): string | null {
  const direct = p.producers.get(file);
  if (direct) return direct;
  for (let i = file.lastIndexOf('/'); i > 0; i = file.lastIndexOf('/', i - 1)) {
    const owner = p.producers.get(file.slice(0, i));
    if (owner && p.targets.get(owner)!.outputs.some((o) => o.dir && o.path === file.slice(0, i))) return owner;
  }
  return null;
}

/**
 * The root of one target's rebuild. `upstream(name)`: the root of a dependency that changed in
 * this build (or is stale now), or null when it did not. `staleDeps`: dependencies that changed
 * although this target's own fingerprint does not show it yet (a dry run, status).
 */
export function rootCause(
  p: ResolvedPipeline,
  target: string,
  reasons: readonly RebuildReason[],
  upstream: (name: string) => RootCause | null,
  staleDeps: readonly string[] = [],
): RootCause | null {
  const own: RootCause[] = [];
  const carried: RootCause[] = [];
  for (const r of reasons) {
    const path = r.kind === 'input-changed' || r.kind === 'input-added' || r.kind === 'input-removed' ? r.path : null;
    const producer = path ? producerOf(p, path) : null;
    const up = producer ? upstream(producer) : null;
    if (producer && up) carried.push({ ...up, via: [...up.via, producer], more: 0 });
    else own.push({ label: rootLabel(r), reason: r, at: target, via: [], more: 0 });
  }
  for (const d of staleDeps) {
    const up = upstream(d);
    if (up) carried.push({ ...up, via: [...up.via, d], more: 0 });
  }
  // What a person did first: forcing, a new engine or state format, a switch of profile (which
  // changes params and args with it), a new rule; then the fields in fingerprint order.
  const rank = (c: RootCause): number => FIRST.indexOf(c.reason.kind) >>> 0;
  own.sort((x, y) => rank(x) - rank(y));
  const all = [...own, ...carried];
  if (!all.length) return null;
  const labels = new Set(all.map((c) => c.label));
  return { ...all[0]!, more: labels.size - 1 };
}

/**
 * Early cutoff: a target that ran (or was restored) and whose outputs hash exactly as before, so
 * its dependents stay up to date. False when there was no successful record before.
 */
export function sameOutputs(before: TargetRecord | undefined, after: Pick<TargetRecord, 'outputs'>): boolean {
  if (!before || before.result === 'failed' || before.outputs.length !== after.outputs.length) return false;
  return before.outputs.every((o, i) => o.path === after.outputs[i]!.path && o.sha256 === after.outputs[i]!.sha256);
}
