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

/** The folder of the rule logs, and the folder where failures leave reports/ERROR_*.json. */
const LOG_DIR = 'logs';
const ERROR_REPORT_DIR = 'reports';

/**
 * A usage error when a declared output is, or would hold, a path the engine writes: a rule's log
 * (logs/<target>.log), the logs folder itself (a file or folder output `logs` would be swapped whole
 * by the commit, taking the logs with it), an ERROR_*.json report, or the reports folder itself.
 */
export function checkLogPaths(targets: Iterable<{ name: string; outputs: readonly { path: string }[] }>): void {
  const list = [...targets];
  const logs = new Map(list.map((t) => [ruleLogPath(t.name), t.name]));
  for (const t of list) {
    for (const o of t.outputs) {
      const p = o.path.replace(/\/+$/, '');
      const of = logs.get(p);
      const why =
        of !== undefined
          ? `is where rc1-build keeps the rule log of ${of}`
          : p === LOG_DIR
            ? `is ${LOG_DIR}/, where rc1-build keeps every rule's log`
            : p === ERROR_REPORT_DIR
              ? `is ${ERROR_REPORT_DIR}/, where rc1-build writes ERROR_*.json when a rule fails`
              : /^reports\/ERROR_[^/]*$/.test(p)
                ? `is named like the ERROR_*.json reports rc1-build writes when a rule fails`
                : null;
      if (why === null) continue;
      throw new UsageError({
        headline: `output ${o.path} of target ${t.name} ${why}`,
        context: {
          why: 'the engine writes these after rules run, so they cannot also be hashed, cached outputs (a commit would replace them whole)',
        },
        hint:
          of !== undefined
            ? `declare the output under another name (say logs/${of}.out.log or reports/${of}.log)`
            : 'declare the output as a file or folder inside logs/ or reports/ (say reports/<target>/), or elsewhere',
      });
    }
  }
}

/**
 * Replace logs/<target>.log with these lines (or remove it when there are none). `present`: the
 * names in logs/, listed once in this build (ruleLogsPresent, at its first rule's end; the build
 * holds the workspace lock, so no one else writes logs meanwhile) and kept up to date here: a
 * target with nothing to log and no log there (the common case) costs no system call.
 */
export function writeRuleLog(
  root: string,
  target: string,
  lines: readonly string[],
  present?: Set<string> | null,
): void {
  const file = path.join(root, ruleLogPath(target));
  const name = `${target}.log`;
  engineWrite(
    'the rule log',
    file,
    () => {
      if (lines.length) {
        writeFileAtomic(file, lines.map((l) => l + '\n').join(''));
        present?.add(name);
      } else if (present && !target.includes('/') && !present.has(name)) {
        // none was there when listed, and this build wrote none since
      } else if (fs.lstatSync(file, { throwIfNoEntry: false })) {
        fs.rmSync(file, { force: true }); // one lstat first, where rmSync makes two
        present?.delete(name);
      }
    },
    root,
  );
}

/** The names in logs/ now (none when there is no such folder); null when it cannot be listed. */
export function ruleLogsPresent(root: string): Set<string> | null {
  try {
    return new Set(fs.readdirSync(path.join(root, LOG_DIR)));
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? new Set() : null;
  }
}
