// Decides WHETHER a target must run (Shake's rebuilder): computes its fresh fingerprint, compares
// it with the stored record (verifying trace) and the output cache (constructive trace), and
// returns fresh | restore | run with the reasons. Reads no unchanged file (stat cache) and loads
// no rule code (the rule's code closure comes from the module compiler's cache).
import * as path from 'node:path';
import { sha256Hex } from '../hash/hash-file.ts';
import {
  type Fingerprint,
  FINGERPRINT_FORMAT,
  type RebuildReason,
  fingerprintKey,
  diffFingerprints,
} from '../hash/fingerprint.ts';
import { type GlobCache, GlobEscape } from '../hash/glob-cache.ts';
import { globEscapeChecker, realRoots } from '../graph/workspace-paths.ts';
import { UsageError, siteString } from '../config/usage-error.ts';
import { PIPELINE_FILE } from '../config/load-pipeline.ts';
import type { StatCache } from '../hash/stat-cache.ts';
import type { ModuleCompiler } from '../config/compile-module.ts';
import { type LoadedConfig, getKey } from '../config/load-configs.ts';
import { type ResolvedPipeline, type ResolvedTarget, referencedOutputs } from '../graph/resolved.ts';
import type { CacheEntry, OutputCache } from '../cache/output-cache.ts';
import type { OutputRecord, TargetRecord, TraceLog } from '../state/trace-log.ts';
import { listTree, treeListing } from '../util/fs.ts';
import { sortedCopy } from '../util/canonical-json.ts';

export interface DecideEnv {
  root: string;
  pipeline: ResolvedPipeline;
  config: LoadedConfig;
  stat: StatCache;
  glob: GlobCache;
  compiler: ModuleCompiler;
  trace: TraceLog;
  cache: OutputCache;
  salt: string;
  env: NodeJS.ProcessEnv;
  forced: ReadonlySet<string>;
}

export type Decision =
  | { kind: 'fresh'; key: string; fp: Fingerprint; record: TargetRecord }
  | { kind: 'restore'; key: string; fp: Fingerprint; entry: CacheEntry; reasons: RebuildReason[] }
  | { kind: 'run'; key: string; fp: Fingerprint; reasons: RebuildReason[] }
  | { kind: 'missing-input'; error: string; reasons: RebuildReason[] };

const checkers = new WeakMap<ResolvedPipeline, ReturnType<typeof globEscapeChecker>>();

/** A glob's files; a match that leads out of the workspace (a symlink) is a usage error at the target's line. */
export async function expandChecked(
  d: Pick<DecideEnv, 'root' | 'pipeline' | 'glob'>,
  t: ResolvedTarget,
  pattern: string,
): Promise<string[]> {
  let check = checkers.get(d.pipeline);
  if (!check) {
    check = globEscapeChecker(d.root, realRoots(d.pipeline));
    checkers.set(d.pipeline, check);
  }
  try {
    return await d.glob.expand(pattern, check);
  } catch (e) {
    if (!(e instanceof GlobEscape)) throw e;
    throw new UsageError({
      headline: `target ${t.name}: input ${e.file} (matched by ${e.pattern}) resolves outside the workspace, to ${e.real}`,
      location: siteString(t.site, d.root) ?? PIPELINE_FILE,
      hint: 'a symlink on the way leads out of the workspace; remove it, or declare the directory in definePipeline({ externalRoots: [...] }) if that is intended',
    });
  }
}

/** Resolved input paths per group (workspace-relative, sorted within each glob). */
export async function resolveInputs(d: DecideEnv, t: ResolvedTarget): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const { group, items } of t.inputs) {
    const paths: string[] = [];
    for (const it of items) {
      if (it.kind === 'file') paths.push(it.path);
      else if (it.kind === 'glob') paths.push(...(await expandChecked(d, t, it.pattern)));
      else for (const o of referencedOutputs(d.pipeline, it)) paths.push(o.path);
    }
    out[group] = [...new Set(paths)];
  }
  return out;
}

function producedHash(d: DecideEnv, producer: string, p: string): string | null {
  const rec = d.trace.records.get(producer);
  return rec?.outputs.find((o) => o.path === p)?.sha256 ?? null;
}

/** Hash of one output as it is on disk now (directory: listing hash), or null when absent. */
export function currentOutputHash(
  d: Pick<DecideEnv, 'root' | 'stat'>,
  o: { path: string; dir: boolean },
): string | null {
  if (!o.dir) return d.stat.hash(o.path)?.sha256 ?? null;
  let tree: ReturnType<typeof listTree>;
  try {
    tree = listTree(path.join(d.root, o.path));
  } catch {
    return null;
  }
  const shas: Record<string, string> = {};
  for (const rel of tree.files) shas[rel] = d.stat.hash(`${o.path}/${rel}`)?.sha256 ?? '';
  return sha256Hex(treeListing(shas, Object.fromEntries(tree.links)));
}

export function outputReasons(d: Pick<DecideEnv, 'root' | 'stat'>, outputs: readonly OutputRecord[]): RebuildReason[] {
  const reasons: RebuildReason[] = [];
  for (const o of outputs) {
    const h = currentOutputHash(d, o);
    if (h === null) reasons.push({ kind: 'output-missing', path: o.path });
    else if (h !== o.sha256) reasons.push({ kind: 'output-modified', path: o.path, old: o.sha256, new: h });
  }
  return reasons;
}

/**
 * What a target's fingerprint is made of, gathered (files stat'ed or hashed, the code closure
 * taken) but not yet built into the Fingerprint object: a no-op compares these parts with the
 * recorded fingerprint (matchesRecord) and builds nothing. Input paths are per group, deduplicated,
 * in the order the fingerprint lists them; `hashes[i]` is null for a missing file.
 */
export interface FingerprintParts {
  base: Omit<Fingerprint, 'inputs'>;
  groups: { group: string; paths: string[]; hashes: (string | null)[] }[];
}

export async function fingerprintParts(
  d: DecideEnv,
  t: ResolvedTarget,
): Promise<{ parts: FingerprintParts; missing: string[] }> {
  const missing: string[] = [];
  const resolved = await resolveInputs(d, t);
  const groups: FingerprintParts['groups'] = [];
  for (const { group, items } of t.inputs) {
    const fromTargets = new Map<string, string>();
    for (const it of items) {
      if (it.kind === 'target') for (const o of referencedOutputs(d.pipeline, it)) fromTargets.set(o.path, it.name);
      else if (it.kind === 'file' && it.producer) fromTargets.set(it.path, it.producer);
    }
    const paths = resolved[group]!;
    const hashes: (string | null)[] = [];
    for (const p of paths) {
      const producer = fromTargets.get(p);
      const h = producer ? producedHash(d, producer, p) : (d.stat.hash(p)?.sha256 ?? null);
      if (h === null) missing.push(producer ? `${p} (output of ${producer}, not built)` : p);
      hashes.push(h);
    }
    groups.push({ group, paths, hashes });
  }
  const env: Record<string, string | null> = {};
  for (const name of t.env) {
    // t.env is sorted
    const v = d.env[name];
    env[name] = v === undefined ? null : sha256Hex(`${d.salt}\0${name}\0${v}`);
  }
  const base: FingerprintParts['base'] = {
    format: FINGERPRINT_FORMAT,
    rule: t.rule,
    code: d.compiler.knownClosure(t.rule) ?? (await d.compiler.closure(t.rule)), // sorted by the compiler
    args: t.args,
    params: Object.fromEntries(t.params.map((k) => [k, sortedCopy(getKey(d.config.values, k))])), // t.params is sorted
    env,
    profile: d.pipeline.profile,
    outputs: t.outputs.map((o) => (o.dir ? `${o.path}/` : o.path)),
  };
  return { parts: { base, groups }, missing };
}

/** The fingerprint the parts make (a missing file's hash reads 'missing'). */
export function buildFingerprint(parts: FingerprintParts): Fingerprint {
  const { base } = parts;
  const inputs: Record<string, Record<string, string>> = {};
  for (const { group, paths, hashes } of parts.groups) {
    const m: Record<string, string> = {};
    for (let i = 0; i < paths.length; i++) m[paths[i]!] = hashes[i] ?? 'missing';
    inputs[group] = m;
  }
  return {
    format: base.format,
    rule: base.rule,
    code: base.code,
    args: base.args,
    params: base.params,
    env: base.env,
    profile: base.profile,
    inputs,
    outputs: base.outputs,
  };
}

export async function computeFingerprint(
  d: DecideEnv,
  t: ResolvedTarget,
): Promise<{ fp: Fingerprint; missing: string[] }> {
  const { parts, missing } = await fingerprintParts(d, t);
  return { fp: buildFingerprint(parts), missing };
}

/** The fields of a Fingerprint in the order buildFingerprint writes them (the key's JSON order). */
const FP_FIELDS = ['format', 'rule', 'code', 'args', 'params', 'env', 'profile', 'inputs', 'outputs'] as const;

/**
 * Exactly sameJson(buildFingerprint(parts), recorded), without building the fingerprint: the input
 * maps (one object per group, keyed by path) are the bulk of a no-op's allocations. Key order
 * counts, as in sameJson: a recorded map whose keys enumerate in the parts' path order is the one
 * buildFingerprint would make (a map holding integer-like keys enumerates those first, so it
 * matches only when the paths already come in that order, which is then also the built map's
 * order). `__proto__` as a group or path is left to the full comparison (an assignment of it
 * makes no key).
 */
export function matchesRecord(parts: FingerprintParts, recorded: Fingerprint): boolean {
  const r = recorded as unknown as Record<string, unknown>;
  const keys = Object.keys(r);
  if (keys.length !== FP_FIELDS.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== FP_FIELDS[i]) return false;
  const { base } = parts;
  if (
    r.format !== base.format ||
    r.rule !== base.rule ||
    r.profile !== base.profile ||
    !sameJson(base.code, r.code) ||
    !sameJson(base.args, r.args) ||
    !sameJson(base.params, r.params) ||
    !sameJson(base.env, r.env) ||
    !sameJson(base.outputs, r.outputs)
  )
    return false;
  const inputs = r.inputs;
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) return false;
  const groupKeys = Object.keys(inputs);
  if (groupKeys.length !== parts.groups.length) return false;
  for (let g = 0; g < parts.groups.length; g++) {
    const { group, paths, hashes } = parts.groups[g]!;
    if (group === '__proto__' || groupKeys[g] !== group) return false;
    const m = (inputs as Record<string, unknown>)[group];
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
    const pathKeys = Object.keys(m);
    if (pathKeys.length !== paths.length) return false;
    for (let i = 0; i < paths.length; i++) {
      const p = paths[i]!;
      if (p === '__proto__' || pathKeys[i] !== p || (m as Record<string, unknown>)[p] !== (hashes[i] ?? 'missing'))
        return false;
    }
  }
  return true;
}

/**
 * Whether two JSON values would stringify alike (same keys in the same order, same scalars). A
 * false "no" (NaN, undefined, a Date) only costs the full key computation; a "yes" is exact.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i] || !sameJson((a as Record<string, unknown>)[ka[i]!], (b as Record<string, unknown>)[kb[i]!]))
      return false;
  }
  return true;
}

export async function decide(d: DecideEnv, t: ResolvedTarget): Promise<Decision> {
  const { parts, missing } = await fingerprintParts(d, t);
  const rec = d.trace.records.get(t.name);
  // The common no-op case: the fresh fingerprint is the recorded one, field for field, so its key
  // is the recorded key (which the engine computed from that very fingerprint): up to date when
  // the outputs are as recorded — decided without building, serialising or hashing the fresh
  // fingerprint (the recorded one, equal to it, stands for it).
  let checked: RebuildReason[] | null = null;
  if (
    rec &&
    rec.result !== 'failed' &&
    !d.forced.has(t.name) &&
    missing.length === 0 &&
    matchesRecord(parts, rec.fingerprint)
  ) {
    checked = outputReasons(d, rec.outputs);
    if (checked.length === 0) return { kind: 'fresh', key: rec.key, fp: rec.fingerprint, record: rec };
  }
  const fp = buildFingerprint(parts);
  const key = fingerprintKey(fp);
  let reasons: RebuildReason[];
  if (d.forced.has(t.name)) reasons = [{ kind: 'forced' }];
  else if (!rec)
    reasons = d.trace.formatChange
      ? [{ kind: 'state-format-changed', detail: d.trace.formatChange }]
      : [{ kind: 'never-built' }];
  else if (rec.key !== key) {
    reasons = diffFingerprints(rec.fingerprint, fp);
    if (reasons.length === 0)
      reasons = [{ kind: 'fingerprint-format-changed', old: rec.fingerprint.format, new: fp.format }];
  } else if (rec.result === 'failed') reasons = [{ kind: 'previous-failure', error: rec.error ?? 'unknown error' }];
  else {
    reasons = checked ?? outputReasons(d, rec.outputs);
    if (reasons.length === 0) return { kind: 'fresh', key, fp, record: rec };
  }
  if (missing.length) {
    return {
      kind: 'missing-input',
      reasons,
      error: `missing input${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
    };
  }
  if (!d.forced.has(t.name)) {
    const entry = d.cache.get(key);
    if (entry) return { kind: 'restore', key, fp, entry, reasons };
  }
  return { kind: 'run', key, fp, reasons };
}
