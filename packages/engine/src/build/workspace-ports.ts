// The executor's ports on a real workspace: the rebuilder over the workspace's decide env, the
// module compiler, the trace and committer, the output cache, .rc1/tmp for temporary outputs,
// the rule logs and error reports under the workspace root. Only the runner, environment, clock
// and git lookup come from outside (the CLI passes the worker pool and process.env).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ResolvedTarget } from '../graph/resolved.ts';
import { decide, resolveInputs } from '../rebuild/decide.ts';
import { hashOutput } from '../runner/hash-output.ts';
import type { RunnerChoice } from '../runner/rule-runner.ts';
import { writeErrorReport } from '../report/error-report.ts';
import type { BuildEvent, Counts } from '../report/events.ts';
import { ruleLogPath, ruleLogsPresent, writeRuleLog } from '../report/rule-log.ts';
import { locateKey, pickParams } from '../config/load-configs.ts';
import { targetStateDir } from '../state/target-state-dir.ts';
import { rmrf } from '../util/fs.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { Clock, ExecutorDisk, ExecutorPorts, GitPort } from '../executor/ports.ts';

/** Temporary outputs: flat names in .rc1/tmp (no per-target directory trees to make and remove). */
export function workspaceDisk(ws: Pick<Workspace, 'root' | 'stateDir'>, pid = process.pid): ExecutorDisk {
  const tmpDir = path.join(ws.stateDir, 'tmp');
  let jobSeq = 0;
  /** The rule logs there are (report/rule-log.ts), listed at the first rule's end. */
  let logs: Set<string> | null | undefined;
  return {
    tmpDir,
    tempPaths(t: ResolvedTarget) {
      const prefix = `${pid}-${++jobSeq}-`;
      const index = new Map(t.outputs.map((o, i) => [o.path, `${prefix}${i}-${path.basename(o.path)}`]));
      return { prefix, of: (p: string) => path.join(tmpDir, index.get(p)!) };
    },
    dropTemp(prefix) {
      for (const f of fs.readdirSync(tmpDir)) if (f.startsWith(prefix)) rmrf(path.join(tmpDir, f));
    },
    hashOutput,
    writeRuleLog: (target, lines) => writeRuleLog(ws.root, target, lines, (logs ??= ruleLogsPresent(ws.root))),
    ruleLogPath,
    writeErrorReport: (r) => writeErrorReport(ws.root, r),
  };
}

export interface WorkspacePortsDeps {
  runners: RunnerChoice;
  env: Readonly<Record<string, string | undefined>>;
  clock: Clock;
  git: GitPort;
  forced: ReadonlySet<string>;
  emit(e: BuildEvent): void;
  counts: Counts;
}

export function workspacePorts(ws: Workspace, deps: WorkspacePortsDeps): ExecutorPorts {
  const env = ws.decideEnv(deps.forced);
  return {
    rebuilder: { decide: (t) => decide(env, t), resolveInputs: (t) => resolveInputs(env, t) },
    compile: (rule) => ws.compiler.compiled(rule),
    runners: deps.runners,
    cache: {
      dir: ws.cache.dir,
      // The remote cache, if one is on for this build; a forced target never takes a cached build.
      lookup: async (t, key) =>
        ws.remote && !deps.forced.has(t.name) ? ws.remote.lookup(t.name, key, t.outputs) : null,
      materialize: (entry, tmpOf) => ws.cache.materialize(entry, tmpOf),
      put: (entry, sourceOf) => ws.cache.put(entry, sourceOf),
      stored: (entry) => ws.cache.stored(entry),
    },
    state: {
      previous: (name) => ws.trace.records.get(name),
      commit: (record, hashed, redoMs) => ws.committer.commit(record, hashed, redoMs),
      recordFailure: (record) => ws.trace.put(record),
    },
    disk: workspaceDisk(ws),
    job: {
      root: ws.root,
      profile: ws.profile,
      stateDirOf: (target) => targetStateDir(ws.stateDir, target),
      paramsOf: (t) => pickParams(ws.config.values, t.params),
      locateParam: async (key) =>
        (await locateKey(ws.root, ws.config.files, key).catch(() => undefined)) ?? ws.config.files.join(', '),
      forced: deps.forced,
    },
    env: deps.env,
    clock: deps.clock,
    git: deps.git,
    emit: deps.emit,
    counts: deps.counts,
  };
}
