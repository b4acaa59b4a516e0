// A training run's identity, and how a build treats the run it finds in the work dir.
// A run is made by three things, each hashed on its own and recorded in run.json:
//   config_hash  the effective train config (config.ts configHash); for the command engine, with
//                every configured ppo / overclar setting the trainer is handed (settingsHash)
//   data_hash    the config hash + the digests of the data inputs it reads (effective-config.ts runHash)
//   code_hash    the train rule's code: its module and code closure, as the engine gives it to the
//                rule (ctx.codeHash) — every local source file it imports, the trainer included
// and run_hash = sha256 of { data_hash, code_hash } is the whole identity. decideRun says what a
// build does with the run.json it finds:
//   copy         a completed run with the same identity: its final state is copied out again
//   fresh        nothing there, --force, or a completed run made by other config, data or code:
//                the old run (if any) is moved aside, and the reason is logged
//   resume       an interrupted run with the same identity: continue from `latest`
//   refuse       an interrupted run whose config or data changed: the user decides (--force)
// A code change alone starts a new run, unless the user sets train.resume_across_code_change:
// then an interrupted run resumes (and a completed one is copied out) across the change, with a
// warning in the log, run.json and reports/config_effective.yaml (which the manifest hashes).
import { createHash } from 'node:crypto';
import { canonicalJson } from 'rc1-build';
import type { EngineName } from './config.ts';

/** One resume (or adoption) of a run across a change of its code. */
export interface CodeChange {
  at_step: number;
  from_code_hash: string;
  to_code_hash: string;
  time: string;
}

export interface RunFile {
  run_hash: string;
  config_hash: string;
  /** Absent in run.json files written before code entered a run's identity: their code is unknown. */
  data_hash?: string;
  code_hash?: string;
  status: 'running' | 'complete';
  started: string;
  finished?: string;
  engine: EngineName;
  /** Every resume across a code change the user asked for (train.resume_across_code_change). */
  code_changes?: CodeChange[];
}

export interface RunIdentity {
  runHash: string;
  configHash: string;
  dataHash: string;
  codeHash: string;
}

/** The config hash of a command-engine run: the effective config and every configured section the trainer is handed. */
export function settingsHash(configHash: string, settings: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(canonicalJson({ format: 'rc1-train-settings-v1', config: configHash, settings }))
    .digest('hex');
}

/** run_hash: the data hash (config + data) and the code hash. */
export function runIdentity(configHash: string, dataHash: string, codeHash: string): RunIdentity {
  const runHash = createHash('sha256')
    .update(canonicalJson({ format: 'rc1-train-run-v2', data: dataHash, code: codeHash }))
    .digest('hex');
  return { runHash, configHash, dataHash, codeHash };
}

export type RunDecision =
  | { kind: 'fresh'; why: string | null }
  | { kind: 'copy'; acrossCodeChange: boolean }
  | { kind: 'resume'; acrossCodeChange: boolean }
  | { kind: 'refuse'; what: string };

const short = (h: string | undefined): string => (h ? `${h.slice(0, 12)}…` : 'unrecorded');

/** What to do with the run recorded in run.json (prev; null when there is none). */
export function decideRun(
  prev: RunFile | null,
  hasCheckpoints: boolean,
  id: RunIdentity,
  o: { forced: boolean; resumeAcrossCodeChange: boolean },
): RunDecision {
  if (o.forced) return { kind: 'fresh', why: prev || hasCheckpoints ? '--force train' : null };
  if (!prev) return { kind: 'fresh', why: hasCheckpoints ? 'checkpoints without a run.json' : null };
  const sameSettings = prev.config_hash === id.configHash && prev.data_hash === id.dataHash;
  const codeOnly = sameSettings && prev.code_hash !== id.codeHash;
  const across = codeOnly && o.resumeAcrossCodeChange;
  if (prev.status === 'complete') {
    if (prev.run_hash === id.runHash) return { kind: 'copy', acrossCodeChange: false };
    if (across) return { kind: 'copy', acrossCodeChange: true };
    if (codeOnly)
      return {
        kind: 'fresh',
        why: `the trainer's code changed since the completed run (code hash ${short(prev.code_hash)} → ${short(id.codeHash)})`,
      };
    return { kind: 'fresh', why: 'the previous run completed with other settings or inputs' };
  }
  if (prev.run_hash === id.runHash) return { kind: 'resume', acrossCodeChange: false };
  if (across) return { kind: 'resume', acrossCodeChange: true };
  if (codeOnly) {
    return {
      kind: 'fresh',
      why: `the trainer's code changed since the interrupted run (code hash ${short(prev.code_hash)} → ${short(id.codeHash)}); set train.resume_across_code_change: true to resume it instead`,
    };
  }
  const what =
    prev.config_hash !== id.configHash
      ? 'the train config'
      : prev.data_hash === undefined
        ? "the way runs are identified (its run.json predates code in a run's identity)"
        : 'the input data (scenarios, weights, rollouts or scores)';
  return { kind: 'refuse', what };
}

/** The warning logged (and kept in the summary) when a run continues across a code change. */
export function codeChangeWarning(prev: RunFile, id: RunIdentity, step: number, completed: boolean): string {
  return `WARNING: ${completed ? 'the completed run is adopted' : `the interrupted run is resumed at step ${step}`} across a change of the trainer's code (code hash ${short(prev.code_hash)} → ${short(id.codeHash)}), because train.resume_across_code_change is true: its checkpoints were made by other code than this build's`;
}
