// Checks every planned target's declared params against its rule's zod schema before any target
// runs, so a bad value is a usage error (exit 64, file:line:col: key: expected/got) at the start of
// the build instead of a failure when the target's turn comes, hours in. The rule's schema is
// read by importing its compiled module (importing a rule runs no rule code; heavy libraries load
// lazily, inside run). That costs time only when something changed: a target whose (rule code
// closure, param values) pair was validated before is skipped, by a stamp in
// .rc1/compiled/params-validated.json, so a no-op reads one small file.
import { beforeMainThreadImport } from '../util/main-thread-import.ts';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Rule } from '../api/index.ts';
import type { ResolvedTarget } from '../graph/resolved.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { deepFreeze, readParsed } from '../state/parsed-state.ts';
import type { ModuleCompiler } from './compile-module.ts';
import { type ConfigObject, locateKey, pickParams } from './load-configs.ts';
import { type Diagnostic, UsageError, didYouMean } from './usage-error.ts';

export interface ValidateParamsEnv {
  root: string;
  stateDir: string;
  compiler: ModuleCompiler;
  config: { values: ConfigObject; files: string[] };
}

type Stamps = Record<string, string>;

/** The stamps recorded (a kept parse in a long-lived process: frozen, copied before a change). */
function readStamps(file: string): Readonly<Stamps> {
  try {
    return readParsed(file, (text) => JSON.parse(text) as Stamps, deepFreeze) ?? {};
  } catch {
    return {};
  }
}

/** The stamp of a (rule, code closure, params) triple: what a target's validation depends on. */
export function paramStamp(rule: string, closure: Record<string, string>, params: ConfigObject): string {
  return sha256Hex(JSON.stringify({ rule, closure, params }));
}

/** Throws a UsageError listing every invalid param of the given targets; records the valid ones. */
export async function validateParams(env: ValidateParamsEnv, targets: readonly ResolvedTarget[]): Promise<void> {
  const file = path.join(env.stateDir, 'compiled', 'params-validated.json');
  const recorded = readStamps(file);
  const unstamped: { t: ResolvedTarget; stamp: string; params: ConfigObject }[] = [];
  // Targets of one rule with the same params (most of a large pipeline) share one stamp: it is
  // made once per (rule, its closure, params text), not serialised and hashed per target.
  const memo = new Map<string, { closure: Record<string, string>; stamps: Map<string, string> }>();
  // Rules not compiled yet (rules whose params are declared, from a clean state directory) are
  // compiled together, in one build (ModuleCompiler.compileMany).
  const seen = new Set<string>();
  const unknown: string[] = [];
  for (const t of targets) {
    if (seen.has(t.rule)) continue;
    seen.add(t.rule);
    if (!env.compiler.knownClosure(t.rule)) unknown.push(t.rule);
  }
  const compiled = unknown.length > 1 ? await env.compiler.compileMany(unknown) : null;
  for (const t of targets) {
    let closure: Record<string, string>;
    try {
      const got = compiled?.get(t.rule);
      if (got instanceof Error) throw got;
      closure = got ?? env.compiler.knownClosure(t.rule) ?? (await env.compiler.closure(t.rule));
    } catch {
      continue; // a rule that does not compile fails its target with the compiler's message
    }
    const params = pickParams(env.config.values, t.params);
    let byRule = memo.get(t.rule);
    if (byRule === undefined || byRule.closure !== closure) {
      byRule = { closure, stamps: new Map() };
      memo.set(t.rule, byRule);
    }
    const paramsText = JSON.stringify(params);
    let stamp = byRule.stamps.get(paramsText);
    if (stamp === undefined) {
      stamp = paramStamp(t.rule, closure, params);
      byRule.stamps.set(paramsText, stamp);
    }
    if (recorded[t.name] !== stamp) unstamped.push({ t, stamp, params });
  }
  if (unstamped.length === 0) return;
  const stamps: Stamps = { ...recorded };
  const diags: Diagnostic[] = [];
  const schemas = new Map<string, Rule | null>();
  for (const { t, stamp, params } of unstamped) {
    if (!schemas.has(t.rule)) {
      let rule: Rule | null = null;
      beforeMainThreadImport(t.rule);
      try {
        const mod = (await import(pathToFileURL(await env.compiler.compiled(t.rule)).href)) as { default?: Rule };
        rule = mod.default && typeof mod.default === 'object' ? mod.default : null;
      } catch {
        rule = null; // a module that cannot load fails its target with the full message when it runs
      }
      schemas.set(t.rule, rule);
    }
    const schema = schemas.get(t.rule)?.params;
    if (!schema) {
      if (schemas.get(t.rule)) stamps[t.name] = stamp; // a rule without params has nothing to check
      continue;
    }
    const r = schema.safeParse(params);
    if (r.success) {
      stamps[t.name] = stamp;
      continue;
    }
    // A missing key beside an unknown one is the likely intended spelling ("did you mean").
    const missing = r.error.issues
      .filter((i) => i.code === 'invalid_type' && /received undefined/.test(i.message))
      .map((i) => i.path.map(String));
    for (const i of r.error.issues) {
      const unknown = i.code === 'unrecognized_keys' ? ((i as { keys?: string[] }).keys ?? []) : [];
      const parent = i.path.map(String);
      const key = [...parent, ...unknown.slice(0, 1)].join('.');
      const absent = !unknown.length && /received undefined/.test(i.message);
      const loc = await locateKey(
        env.root,
        env.config.files,
        absent && parent.length > 1 ? parent.slice(0, -1).join('.') : key,
        unknown.length ? 'key' : 'value',
      ).catch(() => undefined);
      const siblings = missing
        .filter((m) => m.length === parent.length + 1 && m.slice(0, -1).join('.') === parent.join('.'))
        .map((m) => m[m.length - 1]!);
      const guess = unknown.length ? didYouMean(unknown[0]!, siblings) : undefined;
      diags.push({
        headline: `${key}: ${absent ? 'missing: the rule needs this key' : i.message} (target ${t.name}, checked by ${t.rule})`,
        location: loc ?? (env.config.files.join(', ') || 'configs/'),
        hint: unknown.length
          ? `${guess ? `did you mean ${[...parent, guess].join('.')}? ` : ''}remove or rename the key: the rule reads no such setting`
          : absent
            ? `add ${key} to the config`
            : 'fix the value in the config; nothing was built',
      });
    }
  }
  writeFileAtomic(file, JSON.stringify(stamps));
  if (diags.length) {
    // The same bad key read by several targets is reported once.
    const seen = new Set<string>();
    throw new UsageError(
      diags.filter((d) => {
        const k = `${d.location}|${d.headline.replace(/ \(target .*$/, '')}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      }),
    );
  }
}
