// Runs a rule the way a build does — through the engine's rule harness (packages/engine/src/runner/
// rule-harness.ts: params checked by the rule's schema, the real RuleContext, a gate's report
// written, every declared output required and nothing undeclared allowed) — but in-process and
// without a workspace, then moves its outputs to <outDir>/<declared path> as the commit would.
// Unit tests of rules use this one function instead of hand-built contexts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Check, Rule, RuleResult } from '../../packages/engine/src/api/index.ts';
import { invokeRule, type RuleInvocation } from '../../packages/engine/src/runner/rule-harness.ts';

export interface RuleRunOptions {
  /** Raw params (validated by the rule's schema, as the worker does). */
  params: unknown;
  inputs: Record<string, string[]>;
  /** Declared outputs: named ({ name: path }) or a list; a path ending in '/' is a directory. */
  outputs: Record<string, string> | string[];
  /** Where the outputs land, each at its declared path. */
  outDir: string;
  root: string;
  target?: string;
  profile?: string;
  args?: Record<string, unknown>;
  env?: Record<string, string>;
  /** For a gate: the name or path of its report output (the harness writes it from the checks). */
  gate?: string;
  /** Declared state paths (ctx.state). */
  state?: string[];
}

export interface RuleRun {
  result: RuleResult;
  checks: Map<string, Check>;
  logs: string[];
  /** The absolute path of a declared output (by name or path) after the run. */
  out(nameOrPath: string): string;
}

let seq = 0;

export async function runRuleUnderContract(rule: Rule, o: RuleRunOptions): Promise<RuleRun> {
  const entries: [string | undefined, string][] = Array.isArray(o.outputs)
    ? o.outputs.map((p) => [undefined, p])
    : Object.entries(o.outputs);
  const tmpDir = path.join(o.outDir, '.rule-tmp');
  fs.mkdirSync(tmpDir, { recursive: true });
  const tmpPrefix = `run${++seq}-`;
  const outputs = entries.map(([name, p], i) => ({
    path: p.replace(/\/$/, ''),
    dir: p.endsWith('/'),
    tmp: path.join(tmpDir, `${tmpPrefix}${i}-${path.basename(p.replace(/\/$/, ''))}`),
    ...(name ? { name } : {}),
  }));
  const pathOf = (p: string): string => {
    const hit =
      outputs.find((x) => x.name === p) ?? outputs.find((x) => x.path === p.replace(/^\.\//, '').replace(/\/$/, ''));
    if (!hit)
      throw new Error(
        `test: ${p} is not a declared output (declared: ${outputs.map((x) => x.name ?? x.path).join(', ')})`,
      );
    return hit.path;
  };
  const inv: RuleInvocation = {
    target: o.target ?? rule.name,
    gate: o.gate !== undefined,
    ...(o.gate !== undefined ? { report: pathOf(o.gate) } : {}),
    ruleFile: `rules/${rule.name}.ts`,
    root: o.root,
    stateDir: path.join(o.outDir, '.state'),
    ...(o.state ? { state: o.state } : {}),
    profile: o.profile ?? 'dev',
    params: o.params as Record<string, unknown>,
    args: o.args ?? {},
    forced: false,
    codeHash: '0'.repeat(64),
    env: o.env ?? {},
    inputs: o.inputs,
    outputs,
    tmpDir,
    tmpPrefix,
  };
  const logs: string[] = [];
  const outcome = await invokeRule({ default: rule }, inv, {
    log: (l) => {
      logs.push(l);
    },
    progress: () => {},
    signal: new AbortController().signal,
  });
  for (const x of outputs) {
    const dest = path.join(o.outDir, x.path);
    fs.rmSync(dest, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.renameSync(x.tmp, dest);
  }
  const result = outcome.result;
  return {
    result,
    checks: new Map((result.checks ?? []).map((c) => [c.name, c])),
    logs,
    out: (p) => path.join(o.outDir, pathOf(p)),
  };
}
