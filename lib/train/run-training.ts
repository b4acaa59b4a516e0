// The one entry the `train` rule calls. It owns the persistent work dir (the train target's state
// dir given as workDir, .rc1/state/train/: checkpoints/rc1/, metrics.jsonl, train.log, run.json, previous-*/) and
// decides how a run starts from the run it finds there (run-identity.ts: a run is its config, its
// data and its code):
//   copy       a completed run with the same identity and not `forced`: nothing is retrained, its
//              final state is copied out again (a rerun the engine asked for because something
//              outside the run's identity changed: an unrelated param)
//   fresh      no run, `forced` (--force train), or a completed run made by other config, data or
//              code, or an interrupted one made by other code: the old run is moved to
//              previous-<ts>/ (at most train.keep_previous_runs kept) and the log and summary say where
//   resume     an interrupted run with the same identity: continue from `latest` (repaired first:
//              checkpoints.ts), steps increasing; metrics lines past the resumed step are dropped
//   refuse     an interrupted run whose config or data changed: a RuleError telling the user to
//              `npx rc1-build --force train`
// train.resume_across_code_change: true lets an interrupted run resume (a completed one be copied
// out) across a code change, with a warning in the log, run.json and config_effective.yaml.
// Then it writes the effective config, composes the callbacks, runs the engine, and on success
// copies the final state into the rule's declared outputs (checkpoints hard-linked).
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { RuleError } from 'rc1-build';
import type { Engine, EvalResult, TrainContext, TrainResult } from './api.ts';
import {
  checkpointCallback,
  composeCallbacks,
  loggingCallback,
  readBestEval,
  shadowEvalCallback,
} from './callbacks.ts';
import { latestTarget, materialize, repairCheckpointDir, verifyCheckpoint } from './checkpoints.ts';
import { configHash, deepFreeze, type EngineName, type TrainConfig } from './config.ts';
import { loadTrainingData } from './data.ts';
import {
  dataGroups,
  digestInputs,
  effectiveConfigYaml,
  runHash,
  secretValues,
  type InputDigest,
} from './effective-config.ts';
import { redactor } from 'rc1-build';
import { evaluatePolicy, loadPolicy } from './policy.ts';
import {
  codeChangeWarning,
  decideRun,
  runIdentity,
  settingsHash,
  type CodeChange,
  type RunFile,
  type RunIdentity,
} from './run-identity.ts';
import { moveAside } from './work-dir.ts';

export interface RunTrainingOptions {
  root: string;
  profile: string;
  config: TrainConfig;
  inputs: Readonly<Record<string, readonly string[]>>;
  env: Readonly<Record<string, string | undefined>>;
  /** The target was named with --force: start over. */
  forced: boolean;
  /** The sections the config was resolved from (`ppo`, `overclar`), for the command engine (TrainContext.settings). */
  settings?: Readonly<Record<string, unknown>>;
  /** The train rule's code hash (ctx.codeHash): part of the run's identity. */
  codeHash: string;
  /** train.resume_across_code_change: resume an interrupted run (adopt a completed one) across a code change. */
  resumeAcrossCodeChange?: boolean;
  /** train.keep_previous_runs: previous-* dirs kept (default 3). */
  keepPreviousRuns?: number;
  signal: AbortSignal;
  log: (line: string) => void;
  progress: (done: number, total: number) => void;
  /** Absolute (temporary) paths of the declared outputs. */
  /** Where to copy the final state; `log` (optional) receives a copy of the run's full log. */
  outputs: { checkpoints: string; log?: string; metrics: string; effectiveConfig: string };
  /** The persistent work dir: the rule passes a folder of its ctx.stateDir (the engine's, known to `clean` and `status`). */
  workDir: string;
}

export async function loadEngine(name: EngineName): Promise<Engine> {
  switch (name) {
    case 'tfjs':
      return (await import('./engines/tfjs/engine.ts')).tfjsEngine;
    case 'command':
      return (await import('./engines/command.ts')).commandEngine;
  }
}

/** The sections a command-engine trainer is handed beside the effective config (shown in config_effective.yaml); none for the built-in engine. */
function trainerSettings(o: RunTrainingOptions): Readonly<Record<string, unknown>> | undefined {
  return o.config.engine === 'command' ? o.settings : undefined;
}

function readRunFile(p: string): RunFile | null {
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as RunFile;
  } catch {
    return null;
  }
}

/** Keeps the metrics lines of steps <= step (drops a torn last line). */
async function truncateMetrics(file: string, step: number): Promise<number> {
  if (!existsSync(file)) return 0;
  const kept: string[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    try {
      if ((JSON.parse(line) as { step: number }).step <= step) kept.push(line);
    } catch {
      /* a torn line from a kill */
    }
  }
  await writeFile(file, kept.map((l) => `${l}\n`).join(''));
  return kept.length;
}

interface WorkPaths {
  workDir: string;
  checkpointDir: string;
  runPath: string;
  logFile: string;
  metricsFile: string;
  show: (p: string) => string;
}

/** A rerun of a completed run with the same identity (e.g. a param outside it changed), or one adopted across a code change: copy its state out again. */
async function copyCompleted(
  o: RunTrainingOptions,
  w: WorkPaths,
  id: RunIdentity,
  prev: RunFile,
  digests: Record<string, InputDigest[]>,
  across: boolean,
): Promise<{ result: TrainResult; summary: string; movedAside: string | null; resumedFrom: string | null }> {
  const latest = await latestTarget(w.checkpointDir);
  const v = latest ? await verifyCheckpoint(join(w.checkpointDir, latest)) : null;
  if (!v?.ok)
    throw new RuleError(
      `train: ${w.show(w.workDir)}/run.json says the run completed, but its latest checkpoint is missing or incomplete: run \`npx rc1-build --force train\` to start over`,
    );
  let codeChanges = prev.code_changes ?? [];
  const lines: string[] = [];
  if (across) {
    lines.push(codeChangeWarning(prev, id, v.meta.step, true));
    codeChanges = [
      ...codeChanges,
      {
        at_step: v.meta.step,
        from_code_hash: prev.code_hash ?? 'unrecorded',
        to_code_hash: id.codeHash,
        time: new Date().toISOString(),
      },
    ];
    writeFileSync(
      w.runPath,
      `${JSON.stringify({ ...prev, run_hash: id.runHash, data_hash: id.dataHash, code_hash: id.codeHash, code_changes: codeChanges } satisfies RunFile, null, 2)}\n`,
    );
  }
  lines.push(
    `the run in ${w.show(w.workDir)} already completed with this config, these inputs and this code (run hash ${id.runHash.slice(0, 12)}…): its final state is copied out again, nothing is retrained (\`--force train\` starts over)`,
  );
  for (const line of lines) o.log(line);
  await appendFile(w.logFile, lines.map((line) => `${new Date().toISOString()} ${line}\n`).join(''));
  await writeFile(
    o.outputs.effectiveConfig,
    await effectiveConfigYaml({
      profile: o.profile,
      config: o.config,
      id,
      codeChanges,
      settings: trainerSettings(o),
      inputs: digests,
      secrets: secretValues(o.env),
    }),
  );
  await materialize(w.checkpointDir, o.outputs.checkpoints);
  copyFileSync(w.metricsFile, o.outputs.metrics);
  if (o.outputs.log) copyFileSync(w.logFile, o.outputs.log);
  const bestEval = readBestEval(w.checkpointDir);
  return {
    result: {
      finalStep: v.meta.step,
      finalCheckpoint: join(w.checkpointDir, latest!),
      backend: v.meta.backend,
      metricsLines: 0,
      bestEval,
      interrupted: false,
    },
    summary: `${across ? 'WARNING: adopted across a code change (train.resume_across_code_change); ' : ''}up to date at step ${v.meta.step}: the completed run was copied out again (--force train starts over)`,
    movedAside: null,
    resumedFrom: null,
  };
}

export async function runTraining(
  o: RunTrainingOptions,
): Promise<{ result: TrainResult; summary: string; movedAside: string | null; resumedFrom: string | null }> {
  const workDir = o.workDir;
  const checkpointDir = join(workDir, 'checkpoints', 'rc1');
  const runPath = join(workDir, 'run.json');
  const logFile = join(workDir, 'train.log');
  const metricsFile = join(workDir, 'metrics.jsonl');
  const config = deepFreeze(structuredClone(o.config));
  const cHash = configHash(config);
  const digests = await digestInputs(o.inputs, o.root);
  // An external trainer reads every setting (RC1_CONFIG_JSON), so all of them make its run; the
  // built-in engine reads the effective config alone.
  const sHash = config.engine === 'command' && o.settings ? settingsHash(cHash, o.settings) : cHash;
  const id = runIdentity(sHash, runHash(sHash, digests, dataGroups(config, Object.keys(digests))), o.codeHash);
  const rHash = id.runHash;
  mkdirSync(workDir, { recursive: true });

  const show = (p: string): string => relative(o.root, p);
  const pending: string[] = [];
  // The run's own log (kept with the run, copied to logs/) gets the same redaction as rule logs:
  // a trainer that prints a secret (in any encoding) never writes it to disk.
  const strip = redactor(secretValues(o.env));
  const log = (line: string): void => {
    const l = strip(line);
    pending.push(l);
    o.log(l);
  };
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const lines = pending
      .splice(0)
      .map((l) => `${new Date().toISOString()} ${l}\n`)
      .join('');
    await appendFile(logFile, lines);
  };

  let movedAside: string | null = null;
  const prev = readRunFile(runPath);
  const decision = decideRun(prev, existsSync(checkpointDir), id, {
    forced: o.forced,
    resumeAcrossCodeChange: o.resumeAcrossCodeChange === true,
  });
  const w: WorkPaths = { workDir, checkpointDir, runPath, logFile, metricsFile, show };
  if (decision.kind === 'copy') return copyCompleted(o, w, id, prev!, digests, decision.acrossCodeChange);
  if (decision.kind === 'refuse') {
    throw new RuleError(
      `train: ${show(workDir)} holds an interrupted run, and ${decision.what} changed since (run hash ${prev!.run_hash.slice(0, 12)}… → ${rHash.slice(0, 12)}…), so it cannot be resumed. ` +
        `Run \`npx rc1-build --force train\` to start over (the old run is moved to ${show(workDir)}/previous-<ts>/), or restore the old config and inputs to resume it.`,
    );
  }
  if (decision.kind === 'fresh' && decision.why !== null) {
    const keep = o.keepPreviousRuns ?? 3;
    const moved = moveAside(workDir, keep);
    const gone = moved.pruned.includes(basename(moved.dest));
    movedAside = gone ? null : moved.dest;
    log(
      `starting over (${decision.why}): ${gone ? `the previous run was removed (train.keep_previous_runs: ${keep})` : `the previous run was moved to ${show(moved.dest)}/`}`,
    );
    const older = moved.pruned.filter((n) => n !== basename(moved.dest));
    if (older.length) log(`removed the oldest previous runs ${older.join(', ')} (train.keep_previous_runs: ${keep})`);
  }
  const startedOver = decision.kind === 'fresh' && decision.why !== null;
  let codeChanges: CodeChange[] = decision.kind === 'resume' ? (prev!.code_changes ?? []) : [];
  mkdirSync(checkpointDir, { recursive: true });
  for (const note of await repairCheckpointDir(checkpointDir)) log(`checkpoints: ${note}`);
  let resumeFrom: string | null = null;
  const latest = startedOver ? null : await latestTarget(checkpointDir);
  if (latest) {
    const dir = join(checkpointDir, latest);
    const v = await verifyCheckpoint(dir);
    if (!v.ok)
      throw new RuleError(
        `train: ${show(dir)} (latest) is incomplete: ${v.problem}. Run \`npx rc1-build --force train\` to start over.`,
      );
    if (v.meta.config_hash !== cHash) {
      throw new RuleError(
        `train: ${show(dir)} was made with another train config (config hash ${v.meta.config_hash.slice(0, 12)}… ≠ ${cHash.slice(0, 12)}…): run \`npx rc1-build --force train\` to start over.`,
      );
    }
    resumeFrom = dir;
    const kept = await truncateMetrics(metricsFile, v.meta.step);
    if (decision.kind === 'resume' && decision.acrossCodeChange) {
      log(codeChangeWarning(prev!, id, v.meta.step, false));
      codeChanges = [
        ...codeChanges,
        {
          at_step: v.meta.step,
          from_code_hash: prev!.code_hash ?? 'unrecorded',
          to_code_hash: id.codeHash,
          time: new Date().toISOString(),
        },
      ];
    }
    log(`resuming the interrupted run from ${show(dir)} (step ${v.meta.step}; ${kept} metrics lines kept)`);
  } else if (!startedOver) {
    await writeFile(metricsFile, '');
  }
  if (!existsSync(metricsFile)) await writeFile(metricsFile, '');
  const run: RunFile = {
    run_hash: rHash,
    config_hash: cHash,
    data_hash: id.dataHash,
    code_hash: id.codeHash,
    status: 'running',
    started: prev && resumeFrom ? prev.started : new Date().toISOString(),
    engine: config.engine,
    ...(codeChanges.length ? { code_changes: codeChanges } : {}),
  };
  writeFileSync(runPath, `${JSON.stringify(run, null, 2)}\n`);

  const yaml = await effectiveConfigYaml({
    profile: o.profile,
    config,
    id,
    codeChanges,
    settings: trainerSettings(o),
    inputs: digests,
    secrets: secretValues(o.env),
  });
  await writeFile(o.outputs.effectiveConfig, yaml);
  await writeFile(join(workDir, 'config_effective.yaml'), yaml);

  const startStep = resumeFrom ? ((await verifyCheckpoint(resumeFrom)) as { meta: { step: number } }).meta.step : 0;
  const holdoutData = config.engine === 'tfjs' ? await loadTrainingData(config, o.inputs, o.root) : null;
  const evaluate = async (dir: string, step: number): Promise<EvalResult & { details: unknown }> => {
    const policy = await loadPolicy(dir);
    const scen = holdoutData!.holdout.slice(0, config.eval.max_episodes);
    const r = evaluatePolicy(policy, scen, { ...holdoutData!.env, seed: config.seed });
    const s = r.summary.overall;
    return {
      step,
      reward: s.reward ?? 0,
      success: s.success ?? 0,
      overclar_rate: s.overclar_rate ?? 0,
      avg_turns: s.avg_turns ?? 0,
      episodes: s.n,
      dir,
      details: r.summary,
    };
  };
  // The held-out eval (and best_<step>/) comes before `latest` moves: callbacks.ts says why.
  const logging = loggingCallback({ log, metricsFile, every: Math.max(1, Math.floor(config.steps / 50)) });
  const shadow =
    holdoutData && holdoutData.holdout.length > 0
      ? shadowEvalCallback({
          every: config.eval.every,
          totalSteps: config.steps,
          checkpointDir,
          evaluate,
          emit: (r) => logging.onEval?.(r),
          log,
        })
      : null;
  const checkpoint = checkpointCallback({ checkpointDir, keepLast: config.checkpoint.keep_last, log });
  const callbacks = composeCallbacks([
    logging,
    ...(shadow ? [shadow] : []),
    checkpoint,
    { name: 'flush-log', onStep: flush, onCheckpoint: flush, onEnd: flush },
  ]);

  const ctx: TrainContext = {
    config,
    configHash: cHash,
    ...(o.settings ? { settings: o.settings } : {}),
    profile: o.profile,
    paths: {
      root: o.root,
      workDir,
      checkpointDir,
      resumeFrom,
      metricsFile,
      logFile,
      effectiveConfig: o.outputs.effectiveConfig,
    },
    inputs: o.inputs,
    env: o.env,
    signal: o.signal,
    seed: config.seed,
    startStep,
    progress: o.progress,
    log,
    callbacks,
  };
  let result: TrainResult;
  try {
    result = await (await loadEngine(config.engine)).run(ctx);
  } finally {
    await flush();
  }
  result = { ...result, bestEval: shadow?.best() ?? result.bestEval };
  if (result.interrupted || o.signal.aborted)
    return {
      result,
      summary: `interrupted at step ${result.finalStep}; resumable`,
      movedAside,
      resumedFrom: resumeFrom,
    };

  writeFileSync(
    runPath,
    `${JSON.stringify({ ...run, status: 'complete', finished: new Date().toISOString() }, null, 2)}\n`,
  );
  await materialize(checkpointDir, o.outputs.checkpoints);
  copyFileSync(metricsFile, o.outputs.metrics);
  if (o.outputs.log) copyFileSync(logFile, o.outputs.log);
  const best = result.bestEval;
  const summary = [
    codeChanges.length && decision.kind === 'resume'
      ? `WARNING: resumed across a code change (train.resume_across_code_change)`
      : null,
    `${resumeFrom ? `resumed at step ${startStep}, ` : ''}trained to step ${result.finalStep} (${config.engine}/${result.backend}, ${config.strategy})`,
    best
      ? `best held-out eval reward ${best.reward.toFixed(4)} (success ${best.success.toFixed(3)}) at step ${best.step}`
      : null,
    movedAside ? `previous run moved to ${show(movedAside)}/` : null,
  ]
    .filter(Boolean)
    .join('; ');
  return { result, summary, movedAside, resumedFrom: resumeFrom };
}
