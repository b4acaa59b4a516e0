// The lineage of an artifact (`rc1-build why`): the target that produced it, its rule and code
// closure hash, params and values, env names, and every input with its hash and its own producer,
// recursively to a depth; the run of the history that built it; and whether it is up to date now,
// with the root cause when it is not (decided exactly as a build would, nothing run or locked).
import { codeHash, formatReason, type Fingerprint } from '../hash/fingerprint.ts';
import { closureOf, type ResolvedPipeline } from '../graph/resolved.ts';
import type { RunRecord } from '../state/run-history.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import { type DecideEnv, computeFingerprint, decide } from './decide.ts';
import { type RootCause, producerOf, rootCause } from './root-cause.ts';

export interface LineageInput {
  group: string;
  path: string;
  /** The hash the target was built from ('missing' when it was absent). */
  sha256: string;
  /** The target that produces this input, or null for a source file. */
  producer: string | null;
  /** The producer's lineage; 'above' when already shown, absent past the depth. */
  lineage?: Lineage | 'above';
}

export interface Lineage {
  target: string;
  gate: boolean;
  rule: { path: string; name: string | null; version: number | null };
  /** sha256 of the rule and its code closure (ctx.codeHash), and the closure's files. */
  codeHash: string;
  code: Record<string, string>;
  params: Record<string, unknown>;
  args: Record<string, unknown>;
  /** Declared env names and whether each was set (values are never shown). */
  env: { name: string; set: boolean }[];
  profile: string;
  inputs: LineageInput[];
  outputs: { path: string; sha256: string }[];
  /** The last build of this target (null: never built, or its last run failed). */
  built: {
    at: string;
    how: 'ran' | 'restored';
    ms: number;
    result: string;
    run: { id: number; at: string; command: string } | null;
  } | null;
  status: { upToDate: boolean; reasons: string[]; root: RootCause | null };
}

export interface WhyAnswer {
  asked: string;
  /** When a path was asked: its recorded hash (null: source file or not built). */
  artifact: { path: string; sha256: string | null; source: boolean; readBy: string[] } | null;
  lineage: Lineage | null;
}

interface Ctx {
  env: DecideEnv;
  runs: readonly RunRecord[];
  status: Map<string, Lineage['status']>;
  shown: Set<string>;
}

/** Up to date or not (with the root) for every target of `names`' closure, dependencies first. */
async function statuses(ctx: Ctx, names: string[]): Promise<void> {
  const p = ctx.env.pipeline;
  for (const n of closureOf(p, names)) {
    if (ctx.status.has(n)) continue;
    const t = p.targets.get(n)!;
    const d = await decide(ctx.env, t);
    const staleDeps = t.deps.filter((x) => !ctx.status.get(x)!.upToDate);
    const upstream = (x: string): RootCause | null => ctx.status.get(x)?.root ?? null;
    if (d.kind === 'fresh' && !staleDeps.length) {
      const failed = d.record.result === 'gate-failed';
      ctx.status.set(n, { upToDate: true, reasons: failed ? ['up to date, but its gate failed'] : [], root: null });
      continue;
    }
    const reasons = d.kind === 'fresh' ? [] : d.reasons;
    const root = rootCause(
      p,
      n,
      reasons,
      upstream,
      d.kind === 'fresh'
        ? staleDeps
        : staleDeps.filter((x) => !reasons.some((r) => 'path' in r && producerOf(p, r.path) === x)),
    );
    const words = reasons.map(formatReason);
    if (d.kind === 'missing-input') words.push(d.error);
    if (staleDeps.length) words.push(`dependency ${staleDeps.join(', ')} is not up to date`);
    ctx.status.set(n, { upToDate: false, reasons: words, root });
  }
}

function builtBy(runs: readonly RunRecord[], rec: TargetRecord): Lineage['built'] {
  let run: { id: number; at: string; command: string } | null = null;
  for (let i = runs.length - 1; i >= 0 && !run; i--) {
    const r = runs[i]!;
    const o = r.outcomes[rec.name]?.outcome;
    if ((o === 'ran' || o === 'restored' || o === 'gate-failed') && r.state[rec.name]?.key === rec.key)
      run = { id: r.id, at: r.at, command: r.command };
  }
  return { at: rec.at, how: rec.how, ms: rec.ms, result: rec.result, run };
}

async function lineageOf(ctx: Ctx, name: string, depth: number): Promise<Lineage> {
  ctx.shown.add(name);
  const p = ctx.env.pipeline;
  const t = p.targets.get(name)!;
  const rec = ctx.env.trace.records.get(name);
  const usable = rec && rec.result !== 'failed' ? rec : null;
  const fp: Fingerprint = usable ? usable.fingerprint : (await computeFingerprint(ctx.env, t)).fp;
  const inputs: LineageInput[] = [];
  for (const [group, files] of Object.entries(fp.inputs)) {
    for (const [path, sha256] of Object.entries(files)) {
      const producer = producerOf(p, path);
      const item: LineageInput = { group, path, sha256, producer };
      if (producer && depth > 0)
        item.lineage = ctx.shown.has(producer) ? 'above' : await lineageOf(ctx, producer, depth - 1);
      inputs.push(item);
    }
  }
  return {
    target: name,
    gate: t.gate,
    rule: { path: fp.rule, name: usable?.rule?.name ?? null, version: usable?.rule?.version ?? null },
    codeHash: codeHash(fp),
    code: fp.code,
    params: fp.params,
    args: fp.args,
    env: Object.entries(fp.env).map(([n, h]) => ({ name: n, set: h !== null })),
    profile: fp.profile,
    inputs,
    outputs: usable ? usable.outputs.map((o) => ({ path: o.path, sha256: o.sha256 })) : [],
    built: usable ? builtBy(ctx.runs, usable) : null,
    status: ctx.status.get(name)!,
  };
}

/** The lineage of a target or of an artifact path, `depth` producers deep. */
export async function whyOf(
  env: DecideEnv,
  runs: readonly RunRecord[],
  asked: string,
  depth: number,
): Promise<WhyAnswer> {
  const p: ResolvedPipeline = env.pipeline;
  const ctx: Ctx = { env, runs, status: new Map(), shown: new Set() };
  const norm = asked.replace(/^\.\//, '').replace(/\/$/, '');
  if (p.targets.has(asked)) {
    await statuses(ctx, [asked]);
    return { asked, artifact: null, lineage: await lineageOf(ctx, asked, depth) };
  }
  const producer = producerOf(p, norm);
  if (!producer) {
    const readBy = [...p.targets.values()]
      .filter((t) => {
        const rec = env.trace.records.get(t.name);
        if (rec && Object.values(rec.fingerprint.inputs).some((m) => norm in m)) return true;
        return t.inputs.some((g) => g.items.some((it) => it.kind === 'file' && it.path === norm));
      })
      .map((t) => t.name);
    return {
      asked,
      artifact: { path: norm, sha256: env.stat.hash(norm)?.sha256 ?? null, source: true, readBy },
      lineage: null,
    };
  }
  await statuses(ctx, [producer]);
  const rec = env.trace.records.get(producer);
  let sha: string | null = null;
  if (rec) {
    for (const o of rec.outputs) {
      if (o.path === norm) sha = o.sha256;
      else if (o.dir && norm.startsWith(o.path + '/')) sha = o.files?.[norm.slice(o.path.length + 1)] ?? null;
    }
  }
  return {
    asked,
    artifact: { path: norm, sha256: sha, source: false, readBy: [] },
    lineage: await lineageOf(ctx, producer, depth),
  };
}
