// Rule logs: the last lines a rule logged (ctx.log, secrets already redacted) are kept in
// logs/<target>.log. A log is the engine's, never an output: it is replaced whole (temp + rename,
// never rewritten in place), written after the rule ran, and no target may declare a path the
// engine writes a log to (checkLogPaths, before a build starts) — so a log can never be hashed
// into a record or the output cache and then changed behind it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../config/usage-error.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

export function ruleLogPath(target: string): string {
  return `logs/${target}.log`;
}

/** A usage error when a declared output is a path where the engine keeps a rule's log. */
export function checkLogPaths(targets: Iterable<{ name: string; outputs: readonly { path: string }[] }>): void {
  const list = [...targets];
  const logs = new Map(list.map((t) => [ruleLogPath(t.name), t.name]));
  for (const t of list) {
    for (const o of t.outputs) {
      const of = logs.get(o.path);
      if (of === undefined) continue;
      throw new UsageError({
        headline: `output ${o.path} of target ${t.name} is where rc1-build keeps the rule log of ${of}`,
        context: { why: 'the engine replaces logs/<target>.log after every run of the rule, so it cannot also be a hashed, cached output' },
        hint: `declare the output under another name (say logs/${of}.out.log or reports/${of}.log)`,
      });
    }
  }
}

/** Replace logs/<target>.log with these lines (or remove it when there are none). */
export function writeRuleLog(root: string, target: string, lines: readonly string[]): void {
  const file = path.join(root, ruleLogPath(target));
  engineWrite('the rule log', file, () => {
    if (lines.length) writeFileAtomic(file, lines.map((l) => l + '\n').join(''));
    else fs.rmSync(file, { force: true });
  }, root);
}
