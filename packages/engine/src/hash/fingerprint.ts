// The fingerprint of a target: canonical JSON of everything that can change its outputs, each
// field documented with why it is there (STYLE 16). Its sha256 is the target's key. The whole
// fingerprint is stored per target so that a rerun can be explained field by field (STYLE 17).
import { canonicalJson } from '../util/canonical-json.ts';
import { sha256Hex } from './hash-file.ts';

export const FINGERPRINT_FORMAT = 2;

export interface Fingerprint {
  /** Layout version of this object: a new engine with a new layout reruns everything once. */
  format: number;
  /** The rule module: a target moved to another rule must rerun. */
  rule: string;
  /** Code closure: every local source file the rule imports → sha256 (edit a helper, rerun its users). */
  code: Record<string, string>;
  /** Declared config keys → values. Only declared keys, so unrelated edits change nothing. */
  params: Record<string, unknown>;
  /** Declared literal args (ctx.args), keys sorted. */
  args: Record<string, unknown>;
  /** Declared env vars → salted sha256 of the value (null when unset); values never stored. */
  env: Record<string, string | null>;
  /** dev | prod: rules may behave differently per profile. */
  profile: string;
  /** Input group → path → sha256 of content (never mtime). Target inputs list their outputs. */
  inputs: Record<string, Record<string, string>>;
  /** The declared outputs: declaring another output must rerun the rule to produce it. */
  outputs: string[];
}

/**
 * The key: sha256 of the fingerprint's JSON. The fingerprint is built in a fixed order (code,
 * params and env sorted, param values with sorted keys; input groups and paths in declared order,
 * because a rule sees its inputs in that order), so plain JSON.stringify is already canonical
 * and ~3x cheaper than re-sorting 1 000 fingerprints on every no-op.
 */
export function fingerprintKey(fp: Fingerprint): string {
  return sha256Hex(JSON.stringify(fp));
}

/**
 * The hash of a target's code: the rule module and its code closure (the fingerprint's `rule` and
 * `code` fields), and nothing else. Rules get it as `ctx.codeHash`: a rule that keeps state across
 * builds (a resumable training run) ties that state to the code that made it.
 */
export function codeHash(fp: Pick<Fingerprint, 'rule' | 'code'>): string {
  // Every target of a rule shares its closure object (ModuleCompiler's record, never mutated once
  // made): one canonical JSON and sha256 per (closure, rule), not one per target.
  let byRule = codeHashes.get(fp.code);
  if (!byRule) codeHashes.set(fp.code, (byRule = new Map()));
  let h = byRule.get(fp.rule);
  if (h === undefined) byRule.set(fp.rule, (h = sha256Hex(canonicalJson({ rule: fp.rule, code: fp.code }))));
  return h;
}
const codeHashes = new WeakMap<object, Map<string, string>>();

export type RebuildReason =
  | { kind: 'never-built' }
  | { kind: 'forced' }
  | { kind: 'state-format-changed'; detail: string }
  | { kind: 'previous-failure'; error: string }
  | { kind: 'fingerprint-format-changed'; old: number; new: number }
  | { kind: 'rule-changed'; old: string; new: string }
  | { kind: 'code-changed'; file: string; old: string; new: string }
  | { kind: 'code-added'; file: string }
  | { kind: 'code-removed'; file: string }
  | { kind: 'param-changed'; key: string; old: unknown; new: unknown }
  | { kind: 'arg-changed'; key: string; old: unknown; new: unknown }
  | { kind: 'env-changed'; name: string }
  | { kind: 'profile-changed'; old: string; new: string }
  | { kind: 'input-changed'; group: string; path: string; old: string; new: string }
  | { kind: 'input-added'; group: string; path: string }
  | { kind: 'input-removed'; group: string; path: string }
  | { kind: 'outputs-changed'; old: string[]; new: string[] }
  | { kind: 'inputs-reordered'; group: string }
  | { kind: 'output-missing'; path: string }
  | { kind: 'output-modified'; path: string; old: string; new: string };

function diffMap<T>(
  a: Record<string, T>,
  b: Record<string, T>,
  eq: (x: T, y: T) => boolean,
  emit: (k: string, x: T | undefined, y: T | undefined) => void,
): void {
  for (const k of Object.keys(b).sort()) if (!(k in a) || !eq(a[k]!, b[k]!)) emit(k, a[k], b[k]);
  for (const k of Object.keys(a).sort()) if (!(k in b)) emit(k, a[k], undefined);
}

/** What changed between the stored and the fresh fingerprint, most fundamental first. */
export function diffFingerprints(old: Fingerprint, cur: Fingerprint): RebuildReason[] {
  const out: RebuildReason[] = [];
  if (old.format !== cur.format) return [{ kind: 'fingerprint-format-changed', old: old.format, new: cur.format }];
  if (old.rule !== cur.rule) out.push({ kind: 'rule-changed', old: old.rule, new: cur.rule });
  diffMap(
    old.code,
    cur.code,
    (x, y) => x === y,
    (file, x, y) => {
      if (x === undefined) out.push({ kind: 'code-added', file });
      else if (y === undefined) out.push({ kind: 'code-removed', file });
      else out.push({ kind: 'code-changed', file, old: x, new: y });
    },
  );
  const diffParam = (key: string, x: unknown, y: unknown): void => {
    const isObj = (v: unknown): v is Record<string, unknown> =>
      typeof v === 'object' && v !== null && !Array.isArray(v);
    if (isObj(x) && isObj(y))
      diffMap(
        x,
        y,
        (a, b) => canonicalJson(a) === canonicalJson(b),
        (k, a, b) => diffParam(`${key}.${k}`, a, b),
      );
    else out.push({ kind: 'param-changed', key, old: x, new: y });
  };
  diffMap(old.params, cur.params, (x, y) => canonicalJson(x) === canonicalJson(y), diffParam);
  diffMap(
    old.args ?? {},
    cur.args ?? {},
    (x, y) => canonicalJson(x) === canonicalJson(y),
    (key, x, y) => out.push({ kind: 'arg-changed', key, old: x, new: y }),
  );
  diffMap(
    old.env,
    cur.env,
    (x, y) => x === y,
    (name) => out.push({ kind: 'env-changed', name }),
  );
  if (old.profile !== cur.profile) out.push({ kind: 'profile-changed', old: old.profile, new: cur.profile });
  const groups = [...new Set([...Object.keys(old.inputs), ...Object.keys(cur.inputs)])].sort();
  for (const g of groups) {
    diffMap(
      old.inputs[g] ?? {},
      cur.inputs[g] ?? {},
      (x, y) => x === y,
      (p, x, y) => {
        if (x === undefined) out.push({ kind: 'input-added', group: g, path: p });
        else if (y === undefined) out.push({ kind: 'input-removed', group: g, path: p });
        else out.push({ kind: 'input-changed', group: g, path: p, old: x, new: y });
      },
    );
  }
  if (canonicalJson(old.outputs) !== canonicalJson(cur.outputs))
    out.push({ kind: 'outputs-changed', old: old.outputs, new: cur.outputs });
  if (out.length === 0) {
    for (const g of groups) {
      if (JSON.stringify(Object.keys(old.inputs[g] ?? {})) !== JSON.stringify(Object.keys(cur.inputs[g] ?? {})))
        out.push({ kind: 'inputs-reordered', group: g });
    }
    if (out.length === 0 && JSON.stringify(Object.keys(old.inputs)) !== JSON.stringify(Object.keys(cur.inputs)))
      out.push({ kind: 'inputs-reordered', group: '(groups)' });
  }
  return out;
}

const short = (h: string): string => h.slice(0, 12);
const show = (v: unknown): string => {
  const s = v === undefined ? '(unset)' : JSON.stringify(v);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
};

/** One line per reason, as printed by --explain, status and dry runs. */
export function formatReason(r: RebuildReason): string {
  switch (r.kind) {
    case 'never-built':
      return 'never built';
    case 'forced':
      return 'forced (--force)';
    case 'state-format-changed':
      return r.detail;
    case 'previous-failure':
      return `failed last time: ${r.error}`;
    case 'fingerprint-format-changed':
      return `fingerprint format v${r.old} → v${r.new}`;
    case 'rule-changed':
      return `rule ${r.old} → ${r.new}`;
    case 'code-changed':
      return `code ${r.file} changed: ${short(r.old)} → ${short(r.new)}`;
    case 'code-added':
      return `code ${r.file} now imported`;
    case 'code-removed':
      return `code ${r.file} no longer imported`;
    case 'param-changed':
      return `param ${r.key} changed: ${show(r.old)} → ${show(r.new)}`;
    case 'arg-changed':
      return `arg ${r.key} changed: ${show(r.old)} → ${show(r.new)}`;
    case 'env-changed':
      return `env ${r.name} changed (value not shown)`;
    case 'profile-changed':
      return `profile ${r.old} → ${r.new}`;
    case 'input-changed':
      return `input ${r.path} changed: ${short(r.old)} → ${short(r.new)}`;
    case 'input-added':
      return `input ${r.path} added (${r.group})`;
    case 'input-removed':
      return `input ${r.path} removed (${r.group})`;
    case 'outputs-changed':
      return `declared outputs changed: ${r.old.join(', ')} → ${r.new.join(', ')}`;
    case 'inputs-reordered':
      return `inputs of ${r.group} reordered (the rule sees them in declared order)`;
    case 'output-missing':
      return `output ${r.path} is missing`;
    case 'output-modified':
      return `output ${r.path} was modified: ${short(r.old)} → ${short(r.new)}`;
    default: {
      const never: never = r;
      throw new Error(`internal error: unknown reason ${JSON.stringify(never)}; please report`);
    }
  }
}
