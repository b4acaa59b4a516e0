// The one entry the `train` rule calls. It owns the persistent work dir `<root>/.rc1/train/`
// (checkpoints/rc1/, metrics.jsonl, train.log, run.json) and decides how a run starts:
//   copy       run.json says a completed run with the same run hash and not `forced`: nothing is
//              retrained, its final state is copied out again (a rerun the engine asked for
//              because something outside the run hash changed: rule code, an unrelated param)
//   fresh      no work dir, or `forced` (--force train), or a completed run with another run
//              hash: any old run is moved to .rc1/train/previous-<ts>/ and the log and summary
//              say where
//   resume     run.json says an interrupted run with the same run hash (config hash + input
//              hashes): continue from `latest` (repaired first: checkpoints.ts), steps increasing;
//              metrics lines past the resumed step are dropped (those steps are recomputed)
//   refuse     an interrupted run with a different run hash: a RuleError telling the user to
//              `npx rc1-build --force train`
// Then it writes the effective config, composes the callbacks, runs the engine, and on success
// copies the final state into the rule's declared outputs (checkpoints hard-linked).
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { RuleError } from '../api/index.ts';
import type { Engine, EvalResult, TrainContext, TrainResult } from './api.ts';
import { checkpointCallback, composeCallbacks, loggingCallback, readBestEval, shadowEvalCallback } from './callbacks.ts';
import { latestTarget, materialize, repairCheckpointDir, verifyCheckpoint } from './checkpoints.ts';
import { configHash, deepFreeze, type EngineName, type TrainConfig } from './config.ts';
import { loadTrainingData } from './data.ts';
import { dataGroups, digestInputs, effectiveConfigYaml, runHash, secretValues, type InputDigest } from './effective-config.ts';
import { evaluatePolicy, loadPolicy } from './policy.ts';

export interface RunTrainingOptions {
  root: string;
  profile: string;
  config: TrainConfig;
  inputs: Readonly<Record<string, readonly string[]>>;
  env: Readonly<Record<string, string | undefined>>;
  /** The target was named with --force: start over. */
  forced: boolean;
  signal: AbortSignal;
  log: (line: string) => void;
  progress: (done: number, total: number) => void;
  /** Absolute (temporary) paths of the declared outputs. */
  outputs: { checkpoints: string; log: string; metrics: string; effectiveConfig: string };
  /** Default `<root>/.rc1/train`. */
  workDir?: string;
}

interface RunFile { run_hash: string; config_hash: string; status: 'running' | 'complete'; started: string; engine: EngineName }

export async function loadEngine(name: EngineName): Promise<Engine> {
  switch (name) {
    case 'tfjs': return (await import('./engines/tfjs/engine.ts')).tfjsEngine;
    case 'command': return (await import('./engines/command.ts')).commandEngine;
  }
}

function readRunFile(p: string): RunFile | null {
  try { return JSON.parse(readFileSync(p, 'utf8')) as RunFile; } catch { return null; }
}

/** Moves everything of the work dir except earlier previous-* dirs into previous-<ts>/. */
function moveAside(workDir: string): string {
  const dest = join(workDir, `previous-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dest, { recursive: true });
  for (const name of ['checkpoints', 'metrics.jsonl', 'train.log', 'run.json', 'command']) {
    if (existsSync(join(workDir, name))) renameSync(join(workDir, name), join(dest, name));
  }
  return dest;
}

/** Keeps the metrics lines of steps <= step (drops a torn last line). */
async function truncateMetrics(file: string, step: number): Promise<number> {
  if (!existsSync(file)) return 0;
  const kept: string[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    try { if ((JSON.parse(line) as { step: number }).step <= step) kept.push(line); } catch { /* a torn line from a kill */ }
  }
  await writeFile(file, kept.map((l) => `${l}\n`).join(''));
  return kept.length;
}

/** A rerun of a completed run with the same run hash (e.g. a param outside the run hash changed): copy its state out again. */
async function copyCompleted(
  o: RunTrainingOptions,
  w: { workDir: string; checkpointDir: string; logFile: string; metricsFile: string; runHash: string; configHash: string; digests: Record<string, InputDigest[]>; show: (p: string) => string },
): Promise<{ result: TrainResult; summary: string; movedAside: string | null; resumedFrom: string | null }> {
  const latest = await latestTarget(w.checkpointDir);
  const v = latest ? await verifyCheckpoint(join(w.checkpointDir, latest)) : null;
  if (!v || !v.ok) throw new RuleError(`train: ${w.show(w.workDir)}/run.json says the run completed, but its latest checkpoint is missing or incomplete: run \`npx rc1-build --force train\` to start over`);
  const line = `the run in ${w.show(w.workDir)} already completed with this config and these inputs (run hash ${w.runHash.slice(0, 12)}…): its final state is copied out again, nothing is retrained (\`--force train\` starts over)`;
  o.log(line);
  await appendFile(w.logFile, `${new Date().toISOString()} ${line}\n`);
  await writeFile(o.outputs.effectiveConfig, effectiveConfigYaml({ profile: o.profile, config: o.config, configHash: w.configHash, runHash: w.runHash, inputs: w.digests, secrets: secretValues(o.env) }));
  await materialize(w.checkpointDir, o.outputs.checkpoints);
  copyFileSync(w.metricsFile, o.outputs.metrics);
  copyFileSync(w.logFile, o.outputs.log);
  const bestEval = readBestEval(w.checkpointDir);
  return {
    result: { finalStep: v.meta.step, finalCheckpoint: join(w.checkpointDir, latest!), backend: v.meta.backend, metricsLines: 0, bestEval, interrupted: false },
    summary: `up to date at step ${v.meta.step}: the completed run was copied out again (--force train starts over)`,
    movedAside: null, resumedFrom: null,
  };
}

export async function runTraining(o: RunTrainingOptions): Promise<{ result: TrainResult; summary: string; movedAside: string | null; resumedFrom: string | null }> {
  const workDir = o.workDir ?? join(o.root, '.rc1', 'train');
  const checkpointDir = join(workDir, 'checkpoints', 'rc1');
  const runPath = join(workDir, 'run.json');
  const logFile = join(workDir, 'train.log');
  const metricsFile = join(workDir, 'metrics.jsonl');
  const config = deepFreeze(structuredClone(o.config));
  const cHash = configHash(config);
  const digests = await digestInputs(o.inputs, o.root);
  const rHash = runHash(cHash, digests, dataGroups(config, Object.keys(digests)));
  mkdirSync(workDir, { recursive: true });

  const show = (p: string): string => relative(o.root, p);
  const pending: string[] = [];
  const log = (line: string): void => { pending.push(line); o.log(line); };
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const lines = pending.splice(0).map((l) => `${new Date().toISOString()} ${l}\n`).join('');
    await appendFile(logFile, lines);
  };

  let movedAside: string | null = null;
  const prev = readRunFile(runPath);
  if (prev && prev.status === 'complete' && prev.run_hash === rHash && !o.forced) {
    return copyCompleted(o, { workDir, checkpointDir, logFile, metricsFile, runHash: rHash, configHash: cHash, digests, show });
  }
  if (prev || existsSync(checkpointDir)) {
    if (o.forced || !prev || prev.status === 'complete') {
      const why = o.forced ? '--force train' : !prev ? 'checkpoints without a run.json' : 'the previous run completed with other settings or inputs';
      movedAside = moveAside(workDir);
      log(`starting over (${why}): the previous run was moved to ${show(movedAside)}/`);
    } else if (prev.run_hash !== rHash) {
      const what = prev.config_hash !== cHash ? 'the train config' : 'the input data (scenarios, weights, rollouts or scores)';
      throw new RuleError(
        `train: ${show(workDir)} holds an interrupted run, and ${what} changed since (run hash ${prev.run_hash.slice(0, 12)}… → ${rHash.slice(0, 12)}…), so it cannot be resumed. ` +
        `Run \`npx rc1-build --force train\` to start over (the old run is moved to ${show(workDir)}/previous-<ts>/), or restore the old config and inputs to resume it.`,
      );
    }
  }
  mkdirSync(checkpointDir, { recursive: true });
  for (const note of await repairCheckpointDir(checkpointDir)) log(`checkpoints: ${note}`);
  let resumeFrom: string | null = null;
  const latest = movedAside ? null : await latestTarget(checkpointDir);
  if (latest) {
    const dir = join(checkpointDir, latest);
    const v = await verifyCheckpoint(dir);
    if (!v.ok) throw new RuleError(`train: ${show(dir)} (latest) is incomplete: ${v.problem}. Run \`npx rc1-build --force train\` to start over.`);
    if (v.meta.config_hash !== cHash) {
      throw new RuleError(`train: ${show(dir)} was made with another train config (config hash ${v.meta.config_hash.slice(0, 12)}… ≠ ${cHash.slice(0, 12)}…): run \`npx rc1-build --force train\` to start over.`);
    }
    resumeFrom = dir;
    const kept = await truncateMetrics(metricsFile, v.meta.step);
    log(`resuming the interrupted run from ${show(dir)} (step ${v.meta.step}; ${kept} metrics lines kept)`);
  } else if (!movedAside) {
    await writeFile(metricsFile, '');
  }
  if (!existsSync(metricsFile)) await writeFile(metricsFile, '');
  const run: RunFile = { run_hash: rHash, config_hash: cHash, status: 'running', started: prev && resumeFrom ? prev.started : new Date().toISOString(), engine: config.engine };
  writeFileSync(runPath, `${JSON.stringify(run, null, 2)}\n`);

  const yaml = effectiveConfigYaml({ profile: o.profile, config, configHash: cHash, runHash: rHash, inputs: digests, secrets: secretValues(o.env) });
  await writeFile(o.outputs.effectiveConfig, yaml);
  await writeFile(join(workDir, 'config_effective.yaml'), yaml);

  const startStep = resumeFrom ? (await verifyCheckpoint(resumeFrom) as { meta: { step: number } }).meta.step : 0;
  const holdoutData = config.engine === 'tfjs' ? await loadTrainingData(config, o.inputs, o.root) : null;
  const evaluate = async (dir: string, step: number): Promise<EvalResult & { details: unknown }> => {
    const policy = await loadPolicy(dir);
    const scen = holdoutData!.holdout.slice(0, config.eval.max_episodes);
    const r = evaluatePolicy(policy, scen, { weights: holdoutData!.env.weights, reward: holdoutData!.env.reward, maxTurns: config.env.max_turns, seed: config.seed });
    const s = r.summary.overall;
    return { step, reward: s.reward ?? 0, success: s.success ?? 0, overclar_rate: s.overclar_rate ?? 0, avg_turns: s.avg_turns ?? 0, episodes: s.n, dir, details: r.summary };
  };
  const list = [loggingCallback({ log, metricsFile, every: Math.max(1, Math.floor(config.steps / 50)) }), checkpointCallback({ checkpointDir, keepLast: config.checkpoint.keep_last, log })];
  const bus = composeCallbacks(list);
  const shadow = holdoutData && holdoutData.holdout.length > 0
    ? shadowEvalCallback({ every: config.eval.every, totalSteps: config.steps, checkpointDir, signal: o.signal, evaluate, emit: (r) => bus.onEval(r), log })
    : null;
  const callbacks = composeCallbacks([...list, ...(shadow ? [shadow] : []), { name: 'flush-log', onStep: flush, onCheckpoint: flush, onEnd: flush }]);

  const ctx: TrainContext = {
    config, configHash: cHash, profile: o.profile,
    paths: { root: o.root, workDir, checkpointDir, resumeFrom, metricsFile, logFile, effectiveConfig: o.outputs.effectiveConfig },
    inputs: o.inputs, env: o.env, signal: o.signal, seed: config.seed, startStep,
    progress: o.progress, log, callbacks,
  };
  let result: TrainResult;
  try {
    result = await (await loadEngine(config.engine)).run(ctx);
  } finally {
    await flush();
  }
  result = { ...result, bestEval: shadow?.best() ?? result.bestEval };
  if (result.interrupted || o.signal.aborted) return { result, summary: `interrupted at step ${result.finalStep}; resumable`, movedAside, resumedFrom: resumeFrom };

  writeFileSync(runPath, `${JSON.stringify({ ...run, status: 'complete', finished: new Date().toISOString() }, null, 2)}\n`);
  await materialize(checkpointDir, o.outputs.checkpoints);
  copyFileSync(metricsFile, o.outputs.metrics);
  copyFileSync(logFile, o.outputs.log);
  const best = result.bestEval;
  const summary = [
    `${resumeFrom ? `resumed at step ${startStep}, ` : ''}trained to step ${result.finalStep} (${config.engine}/${result.backend}, ${config.strategy})`,
    best ? `best shadow eval reward ${best.reward.toFixed(4)} (success ${best.success.toFixed(3)}) at step ${best.step}` : null,
    movedAside ? `previous run moved to ${show(movedAside)}/` : null,
  ].filter(Boolean).join('; ');
  return { result, summary, movedAside, resumedFrom: resumeFrom };
}
