// The rule contract in one place: how a rule is called and what it must have done. The worker
// thread runs every rule through invokeRule(), and tests that call a rule directly use the same
// function (test/helpers/rule-context.ts), so a rule that passes its tests cannot break the
// contract only in a build. invokeRule checks the module's shape, validates the params with the
// rule's zod schema, builds the RuleContext (inputs, named outputs, state, rng, log, progress,
// abort), runs the rule, writes a gate's report from its checks, and checks that the rule wrote
// every declared output — as a file or a directory, as declared — and nothing else beside them.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { type Check, type Rule, type RuleContext, type RuleResult, createRng, gatePasses } from '../api/index.ts';
import { prettyJson } from '../util/canonical-json.ts';
import { engineRoot } from '../util/engine-root.ts';
import type { Job, ParamIssue } from './protocol.ts';

/** A rule broke the contract (a missing output, an undeclared input group…): its message is the whole story. */
export class ContractError extends Error {}

/** The params do not fit the rule's schema: one issue per key. */
export class ParamError extends Error {
  constructor(
    readonly target: string,
    readonly issues: ParamIssue[],
  ) {
    super(`invalid params for ${target}`);
  }
}

/** What invokeRule needs of a job: everything but the worker's own bookkeeping. */
export type RuleInvocation = Omit<Job, 'id' | 'module' | 'cacheDir' | 'cacheKey'>;

export interface RuleHooks {
  log(line: string): void;
  progress(done: number, total: number, unit?: string): void;
  /** ctx.signal; read only when the rule reads ctx.signal (the worker makes it then). */
  signal: AbortSignal;
  /** Whether the job was asked to stop, without making the signal (else signal.aborted). */
  aborted?(): boolean;
}

export interface RuleOutcome {
  result: RuleResult;
  /** A gate's checks (its report is written). */
  checks?: Check[];
  rule: { name: string; version: number };
  /** How long run() took. */
  elapsedMs: number;
}

/** Files left in the temp dir under the job's prefix that are not declared outputs. */
function undeclared(inv: RuleInvocation): string[] {
  const declared = new Set(inv.outputs.map((o) => path.basename(o.tmp)));
  return fs
    .readdirSync(inv.tmpDir)
    .filter((f) => f.startsWith(inv.tmpPrefix) && !declared.has(f))
    .map((f) => {
      const beside = inv.outputs.find((o) => f.startsWith(path.basename(o.tmp)));
      return beside ? `${beside.path}${f.slice(path.basename(beside.tmp).length)}` : f.slice(inv.tmpPrefix.length);
    });
}

/** Builds the RuleContext of an invocation (params already validated). */
export function ruleContext(inv: RuleInvocation, params: unknown, hooks: RuleHooks): RuleContext<unknown> {
  const outputs = new Map(inv.outputs.map((o) => [o.path, o]));
  const named = new Map(inv.outputs.flatMap((o) => (o.name ? [[o.name, o] as const] : [])));
  const declaredOutput = (fn: string, p: string): Job['outputs'][number] => {
    const o = named.get(p) ?? outputs.get(p.replace(/^\.\//, '').replace(/\/$/, ''));
    if (o) return o;
    const declared = inv.outputs.map((x) => (x.name ? `${x.name} (${x.path})` : x.path)).join(', ');
    throw new ContractError(
      `${inv.ruleFile}: ctx.${fn}('${p}'): not a declared output of ${inv.target} (declared: ${declared})`,
    );
  };
  const ctx: RuleContext<unknown> = {
    target: inv.target,
    root: inv.root,
    get stateDir(): string {
      fs.mkdirSync(inv.stateDir, { recursive: true });
      return inv.stateDir;
    },
    profile: inv.profile,
    params,
    env: Object.freeze({ ...inv.env }),
    args: Object.freeze({ ...inv.args }) as RuleContext<unknown>['args'],
    outputs: Object.freeze(inv.outputs.map((o) => o.path)),
    forced: inv.forced,
    codeHash: inv.codeHash,
    inputs(name: string): string[] {
      const v = inv.inputs[name];
      if (!v)
        throw new ContractError(
          `${inv.ruleFile}: ctx.inputs('${name}'): target ${inv.target} declares no input group '${name}' (it has: ${Object.keys(inv.inputs).join(', ') || 'none'})`,
        );
      return v;
    },
    hasInput(name: string): boolean {
      return Object.hasOwn(inv.inputs, name);
    },
    input(name: string): string {
      const v = ctx.inputs(name);
      if (v.length !== 1)
        throw new ContractError(
          `${inv.ruleFile}: ctx.input('${name}'): input group ${name} of ${inv.target} holds ${v.length} paths, expected exactly one (${
            v
              .slice(0, 4)
              .map((p) => path.relative(inv.root, p))
              .join(', ') || 'none'
          }); declare one file or one output of a target, target(name, 'output')`,
        );
      return v[0]!;
    },
    outputPath(p: string): string {
      return declaredOutput('outputPath', p).path;
    },
    output(p: string): string {
      const o = declaredOutput('output', p);
      if (o.dir) fs.mkdirSync(o.tmp, { recursive: true });
      return o.tmp;
    },
    state(p: string): string {
      const rel = p.replace(/^\.\//, '').replace(/\/$/, '');
      if (!(inv.state ?? []).includes(rel)) {
        throw new ContractError(
          `${inv.ruleFile}: ctx.state('${p}'): not a declared state path of ${inv.target} (declared: ${(inv.state ?? []).join(', ') || 'none'}); declare it in the target's \`state\`, or keep the target's own state in ctx.stateDir`,
        );
      }
      const abs = path.join(inv.root, rel);
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      return abs;
    },
    resolve(specifier: string): string {
      // The two places the compile looks for a rule's bare import (config/compile-module.ts), in its order.
      const from = [path.resolve(inv.root, inv.ruleFile), path.join(engineRoot(), 'package.json')];
      for (const f of from) {
        try {
          return createRequire(f).resolve(specifier);
        } catch {}
      }
      throw new ContractError(
        `${inv.ruleFile}: ctx.resolve('${specifier}'): no such package file from ${path.dirname(inv.ruleFile) || '.'}/ up nor from rc1-build's folder`,
      );
    },
    rng: createRng,
    log: (line: string) => hooks.log(String(line)),
    progress: (done: number, total: number, unit?: string) => hooks.progress(done, total, unit),
    get signal() {
      return hooks.signal;
    },
  };
  return ctx;
}

/**
 * Runs a rule module's default export under the contract. Throws ContractError (a broken
 * contract), ParamError (params that do not fit the schema), or whatever the rule threw.
 */
export async function invokeRule(
  mod: { default?: unknown },
  inv: RuleInvocation,
  hooks: RuleHooks,
): Promise<RuleOutcome> {
  const rule = mod.default as Rule | undefined;
  if (!rule || typeof rule.run !== 'function') {
    throw new ContractError(`${inv.ruleFile} must \`export default defineRule({ name, version, run })\``);
  }
  let params: unknown = inv.params;
  if (rule.params) {
    const r = rule.params.safeParse(inv.params);
    if (!r.success)
      throw new ParamError(
        inv.target,
        r.error.issues.map((i) => ({ key: i.path.map(String).join('.'), message: i.message })),
      );
    params = r.data;
  }
  const ctx = ruleContext(inv, params, hooks);
  const started = performance.now();
  const result = (await rule.run(ctx)) ?? {};
  const elapsedMs = performance.now() - started;
  if (hooks.aborted ? hooks.aborted() : hooks.signal.aborted) throw new Error('interrupted');
  let checks: Check[] | undefined;
  if (inv.gate) {
    if (!Array.isArray(result.checks) || result.checks.length === 0)
      throw new ContractError(`gate ${inv.target}: its rule returned no checks`);
    checks = result.checks;
    const reportOut = inv.outputs.find((o) => o.path === inv.report);
    if (!reportOut)
      throw new ContractError(`gate ${inv.target}: its report ${inv.report ?? '(none)'} is not one of its outputs`);
    fs.writeFileSync(
      reportOut.tmp,
      prettyJson({
        ...(result.report ?? {}),
        target: inv.target,
        profile: inv.profile,
        pass: gatePasses(checks),
        checks,
      }),
    );
  }
  for (const o of inv.outputs) {
    const st = fs.statSync(o.tmp, { throwIfNoEntry: false });
    if (!st) throw new ContractError(`${inv.target}: the rule did not write its declared output ${o.path}`);
    if (o.dir !== st.isDirectory())
      throw new ContractError(
        `${inv.target}: output ${o.path} was declared as a ${o.dir ? 'directory' : 'file'} but the rule wrote a ${st.isDirectory() ? 'directory' : 'file'}`,
      );
  }
  const extra = undeclared(inv);
  if (extra.length)
    throw new ContractError(`${inv.target}: the rule wrote undeclared files: ${extra.slice(0, 5).join(', ')}`);
  return { result, ...(checks ? { checks } : {}), rule: { name: rule.name, version: rule.version }, elapsedMs };
}
