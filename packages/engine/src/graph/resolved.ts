// The resolved pipeline: frozen, validated data the engine works on (STYLE 4: Resolved*).
import type { CallSite, SlurmExecutor, UserRemoteCache, UserRequirement } from '../api/index.ts';

export type InputItem =
  | { kind: 'file'; path: string; producer?: string }
  | { kind: 'glob'; pattern: string }
  | { kind: 'target'; name: string; output?: string };

/** One output; `name` when the target declares its outputs by name. */
export interface ResolvedOutput {
  path: string;
  dir: boolean;
  name?: string;
}

/** The outputs of `name` a target reference stands for: all of them, or the one named `output`. */
export function referencedOutputs(
  p: Pick<ResolvedPipeline, 'targets'>,
  it: { name: string; output?: string },
): ResolvedOutput[] {
  const outs = p.targets.get(it.name)!.outputs;
  return it.output === undefined ? outs : outs.filter((o) => o.name === it.output);
}

export interface ResolvedTarget {
  name: string;
  rule: string;
  gate: boolean;
  report?: string;
  inputs: { group: string; items: InputItem[] }[];
  outputs: ResolvedOutput[];
  params: string[];
  /** The target declares no params: they are read from its rule's schema (config/rule-params.ts). */
  paramsFromRule?: boolean;
  /** Literal args, keys sorted. */
  args: Record<string, unknown>;
  env: string[];
  /** Secret env vars: given to the rule, redacted from its logs, never in the key. */
  secrets: string[];
  /** Targets this one depends on (target refs and producers of its file inputs), sorted. */
  deps: string[];
  description?: string;
  /** Outputs holding metrics (JSON, or JSON Lines: the last line), recorded per run. */
  metrics?: string[];
  /** Rule state under .rc1/ that `clean` of this target removes (`cache`: only with --cache). */
  state?: { path: string; cache: boolean }[];
  /** What must be present before the target may run (checked before a build starts). */
  requires?: UserRequirement[];
  /** Where the rule runs when not in the build's worker pool (absent: locally). */
  executor?: SlurmExecutor & { staging: 'shared-fs' | 'remote-cache' };
  site?: CallSite;
}

export interface ResolvedPipeline {
  root: string;
  targets: ReadonlyMap<string, ResolvedTarget>;
  /** Declaration order. */
  order: string[];
  /** Output path → producing target. */
  producers: ReadonlyMap<string, string>;
  defaultTargets: string[];
  manifestDir: string;
  /** Directories outside the workspace that inputs (and outputs, through a symlink) may reach; as declared. */
  externalRoots: string[];
  /** Size cap of the output cache in bytes, when the pipeline declares one. */
  cacheMaxBytes?: number;
  /** The remote cache, as declared (validated). */
  remoteCache?: UserRemoteCache;
  configFiles: string[];
  profile: string;
  /** CLI commands the pipeline adds: name → module (workspace-relative), summary, usage. */
  commands: Readonly<Record<string, { module: string; summary: string; usage?: string }>>;
  /** The pipeline's declared name. */
  name?: string;
  /** Runs kept in the run history (default 200). */
  historyKeep?: number;
  /** The SYNC hand-off package's declaration (paths normalised; dir defaults to reports/sync). */
  sync?: {
    from: string;
    dir: string;
    peers: { name: string; provides: { name: string; path: string; desc: string }[] }[];
  };
  /** The module that adds the pipeline's sections to `rc1-build report` (workspace-relative), if declared. */
  reportSections?: string;
}

/**
 * The closures computed per pipeline object (a build asks for the same one three times: the
 * checks, the plan event, the profile note). Keyed by the frozen pipeline itself, so a command
 * that resolves or reads the pipeline again gets a fresh map; each caller gets its own copy.
 */
const closures = new WeakMap<ResolvedPipeline, Map<string, readonly string[]>>();

/** Every target needed to build `wanted` (dependencies first, declaration order among peers). */
export function closureOf(p: ResolvedPipeline, wanted: readonly string[]): string[] {
  const memo = Object.isFrozen(p) ? (closures.get(p) ?? closures.set(p, new Map()).get(p)!) : null;
  const k = wanted.join('\0');
  const known = memo?.get(k);
  if (known) return known.slice();
  const out = walkClosure(p, wanted);
  memo?.set(k, out.slice());
  return out;
}

function walkClosure(p: ResolvedPipeline, wanted: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const visit = (n: string): void => {
    if (seen.has(n)) return;
    seen.add(n);
    for (const d of p.targets.get(n)!.deps) visit(d);
    out.push(n);
  };
  for (const w of wanted) visit(w);
  return out;
}

/** Targets that depend on `name`, directly or not. */
export function dependentsOf(p: ResolvedPipeline, name: string): Set<string> {
  const rdeps = new Map<string, string[]>();
  for (const t of p.targets.values()) for (const d of t.deps) (rdeps.get(d) ?? rdeps.set(d, []).get(d)!).push(t.name);
  const out = new Set<string>();
  const stack = [name];
  while (stack.length)
    for (const r of rdeps.get(stack.pop()!) ?? [])
      if (!out.has(r)) {
        out.add(r);
        stack.push(r);
      }
  return out;
}
