// Params from the rule's schema: a target that declares no `params` reads exactly the config keys
// its rule's zod schema describes, so the list lives in one place (the rule). The keys are the
// schema's, made as precise as the config allows: a schema object whose config object holds only
// keys the schema knows is taken whole (`train`); one beside keys the rule does not read is
// descended into (`overclar.alpha`, `overclar.cap`, not overclar.ablation). Keys absent from the
// config are left out (the schema then reports them missing, before the build starts).
//
// Reading a schema imports the rule's compiled module (importing a rule runs no rule code). The
// result is cached in .rc1/compiled/rule-params.json, keyed by the rule's code closure and the
// config files, so a no-op imports nothing.
import { beforeMainThreadImport } from '../util/main-thread-import.ts';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Rule } from '../api/index.ts';
import type { ResolvedPipeline, ResolvedTarget } from '../graph/resolved.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { writeFileAtomic } from '../util/fs.ts';
import type { ModuleCompiler } from './compile-module.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The shape of a zod object schema, looking through optional/default/… wrappers and pipes; null for anything else. */
function objectShape(schema: unknown): Obj | null {
  let cur = schema as { _zod?: { def?: Obj }; def?: Obj } | undefined;
  for (let i = 0; i < 16 && cur; i++) {
    const def = cur._zod?.def ?? cur.def;
    if (!def) return null;
    if (def.type === 'object') return isObj(def.shape) ? def.shape : null;
    if (WRAPPERS.has(def.type as string)) cur = def.innerType as typeof cur;
    else if (def.type === 'pipe') cur = def.in as typeof cur;
    else return null;
  }
  return null;
}

/** The dotted config keys a params schema reads from this config (see the header). */
export function paramKeysOf(schema: unknown, config: Obj, prefix = ''): string[] {
  const shape = objectShape(schema);
  if (prefix && (!shape || !isObj(config) || Object.keys(config).every((k) => Object.hasOwn(shape, k))))
    return [prefix];
  if (!shape || !isObj(config)) return [];
  const out: string[] = [];
  for (const k of Object.keys(shape)) {
    if (Object.hasOwn(config, k)) out.push(...paramKeysOf(shape[k], config[k] as Obj, prefix ? `${prefix}.${k}` : k));
  }
  return out;
}

interface Env {
  stateDir: string;
  compiler: ModuleCompiler;
  config: { values: Obj; key: unknown };
}

/**
 * The pipeline with the params of every target that declares none (paramsFromRule) read from its
 * rule's schema. A rule that does not compile or load keeps no params: its target fails with the
 * full message when it runs.
 */
export async function withRuleParams(env: Env, p: ResolvedPipeline): Promise<ResolvedPipeline> {
  const fromRule = [...p.targets.values()].filter((t) => t.paramsFromRule);
  if (!fromRule.length) return p;
  const file = path.join(env.stateDir, 'compiled', 'rule-params.json');
  let cache: Record<string, { key: string; params: string[] }> = {};
  try {
    cache = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof cache;
  } catch {
    /* none yet */
  }
  let dirty = false;
  const byRule = new Map<string, string[]>();
  const rules = [...new Set(fromRule.map((t) => t.rule))];
  // Every rule's closure at once: from a clean state directory the rules are bundled in one esbuild
  // build, which parses the files they share (the engine's API, the pipeline's libraries) once
  // (ModuleCompiler.compileMany); the imports below stay one at a time, in the rules' order.
  const compiled = await env.compiler.compileMany(rules);
  const closures = rules.map((rule) => {
    const c = compiled.get(rule);
    return c instanceof Error ? null : (c ?? null);
  });
  for (const [i, rule] of rules.entries()) {
    const closure = closures[i];
    if (!closure) {
      byRule.set(rule, []);
      continue;
    }
    const key = sha256Hex(JSON.stringify({ closure, config: env.config.key }));
    const hit = cache[rule];
    if (hit?.key === key) {
      byRule.set(rule, hit.params);
      continue;
    }
    let params: string[] = [];
    beforeMainThreadImport(rule);
    try {
      const mod = (await import(pathToFileURL(await env.compiler.compiled(rule)).href)) as { default?: Rule };
      params = [...new Set(paramKeysOf(mod.default?.params, env.config.values))].sort();
    } catch {
      byRule.set(rule, []);
      continue; // not cached: the next build tries again
    }
    cache[rule] = { key, params };
    dirty = true;
    byRule.set(rule, params);
  }
  if (dirty) writeFileAtomic(file, JSON.stringify(cache));
  const targets = new Map<string, ResolvedTarget>();
  for (const [n, t] of p.targets) {
    if (!t.paramsFromRule) {
      targets.set(n, t);
      continue;
    }
    const copy = { ...t, params: byRule.get(t.rule) ?? [] };
    Object.defineProperty(copy, 'site', { enumerable: false, get: () => t.site });
    targets.set(n, Object.freeze(copy));
  }
  return Object.freeze({ ...p, targets });
}
