// The `command` engine: runs the team's own trainer (a PyTorch/TRL PPO script for Qwen3-4B with
// QLoRA, say) as a child process, under a contract rc1-build enforces. Selected by
// `train.engine: command` with `train.command.argv`; examples/trainers/toy_trainer.py honours it.
//
// THE CONTRACT (version 1)
// Invocation: train.command.argv, run in train.command.cwd (relative to the workspace), in its own
// process group, with these arguments appended:
//     --config <RC1_CONFIG> --checkpoint-dir <RC1_CHECKPOINT_DIR> --metrics <RC1_METRICS>
//     [--resume-from <RC1_RESUME_FROM>]            (only when resuming)
// and this environment — never the build's whole environment (see TRAINER_BASE_ENV below): the
// minimal base that is set in the build's environment (PATH, HOME, USER, LOGNAME, SHELL, LANG,
// LC_ALL, LC_CTYPE, TZ, TERM, TMPDIR; the accelerator selectors CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
// ZE_AFFINITY_MASK), then the target's declared env and secrets, then train.command.env, then:
//     RC1_CONTRACT        1
//     RC1_CONFIG          the effective config, YAML, secrets redacted (this seed's document of reports/config_effective.yaml)
//     RC1_CONFIG_JSON     a JSON file with every train and ppo setting, secrets redacted the same way:
//                           contract     1
//                           train        the effective config (TrainConfig, config.ts): steps, seed,
//                                        lr, lr_schedule, adam, max_grad_norm, ppo {clip, kl_coef,
//                                        target_kl, adaptive_kl, kl_horizon, batch, rollout_len,
//                                        epochs, gamma, lam, vf_coef, ent_coef, …}, reward {…},
//                                        sampling {…}, checkpoint {every, keep_last}, eval, command
//                           ppo          the ppo: section as configured (configs/ppo_scale.yaml):
//                                        base_model, seeds, target_kl, finetune {method, lora {r,
//                                        alpha, dropout, target_modules}, qlora {bits, quant_type,
//                                        double_quant, compute_dtype}}, datasets, steps, lr, …
//                           overclar     {alpha, cap}: the over-clarification penalty
//                           config_hash, profile, start_step
//                         train.seed is THIS run's seed: the train rule invokes the trainer
//                         once per seed of ppo.seeds, each with its own work dir
//                         (.rc1/state/train/seed_<seed>/); ppo.seeds lists every run's seed.
//     RC1_CHECKPOINT_DIR  where step dirs go (persistent: .rc1/state/train/seed_<seed>/checkpoints/rc1)
//     RC1_METRICS         a fresh, empty file to append metrics lines to
//     RC1_RESUME_FROM     the complete step dir to resume from; empty on a fresh start
//     RC1_START_STEP      its step (0 on a fresh start); RC1_TOTAL_STEPS = train.steps
//     RC1_SCENARIOS       the training scenarios: the first .jsonl of the target's `scenarios` input
//     RC1_INPUTS_JSON     every declared input group: {"<group>": ["/abs/path", ...]}
//     RC1_PARENT_PID      rc1-build's pid: a trainer should exit when its parent is gone
// Settings a trainer MUST honour: train.steps, train.seed (seed every RNG from it: python, numpy,
// torch, CUDA; the same seed, data and config give the same run), train.ppo.target_kl (hold the
// realised KL to the reference policy near it: an adaptive coefficient, an early stop, or both;
// report it as `kl`), train.checkpoint.every. Every other setting it SHOULD honour where it
// applies (lr, the PPO knobs, reward, ppo.base_model, ppo.finetune with lora / qlora), and it
// must say in its output which settings it ignores. Every setting is part of the run's identity:
// changing any of them starts a new run rather than resuming into it.
// The trainer must:
//  1. append to RC1_METRICS one JSON object per optimisation step, flushed per line:
//     {"step": int, "loss": number, "reward": number, "kl": number} required; optional: entropy,
//     lr, kl_coef, success (0..1), episode_len, throughput, updates_per_s, backend, env,
//     loss_terms {policy, value, entropy, kl}; other keys are ignored. Steps increase strictly,
//     start above RC1_START_STEP and end at RC1_TOTAL_STEPS.
//  2. write checkpoints as RC1_CHECKPOINT_DIR/step_XXXXX/ (step zero-padded to 5 digits or more):
//     any files and sub-dirs (adapter weights, optimiser, scheduler, RNG state…), then LAST a file
//     named COMPLETE (content free; JSON such as {"step": N} is kept in checkpoint.json). A step dir
//     without COMPLETE is incomplete and never used. Steps of checkpoints increase; the last one
//     is the last metrics step and equals train.steps. Never write checkpoint.json, latest, best/
//     or initial/ (rc1-build's).
//  3. resume from RC1_RESUME_FROM when set (model, optimiser, scheduler, RNG), continuing the step
//     count; step dirs after the resume point were removed before the trainer starts.
//  4. exit 0 when done; on SIGTERM (Ctrl-C or SIGTERM of the build; sent to the whole group,
//     SIGKILL after train.command.grace_s) stop soon, ideally after checkpointing.
// rc1-build streams the trainer's stdout/stderr line by line into logs/train.log (and the rule
// log), validates metrics lines as they come (polled every train.command.poll_ms), adopts each
// complete checkpoint (sha256 per file into checkpoint.json, then `latest` moves), and fails the
// target with a message naming the broken clause: exit code ≠ 0, no checkpoint, a malformed or
// non-increasing metrics line (file:line: field), a final step short of train.steps.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RuleError } from 'rc1-build';
import type { Engine, TrainContext, TrainResult } from '../api.ts';
import { redact, secretValues } from '../effective-config.ts';
import {
  adoptCheckpoint,
  CheckpointWatcher,
  discardAfter,
  COMPLETE_MARKER,
  stepDirName,
} from './command-checkpoints.ts';
import { ContractViolation, MetricsTail, toMetricsLine } from './command-metrics.ts';
import { startTrainer, stopOrphan, writePidFile, type Exit, type TrainerProcess } from './command-process.ts';

export const COMMAND_CONTRACT_VERSION = 1;

/**
 * The only variables of the build's own environment a trainer gets (when set): what a program
 * needs to run at all, and which accelerators it may use. Anything else — LD_LIBRARY_PATH,
 * PYTHONPATH, HF_HOME, WANDB_* — is declared: the train target's `env` or `secrets`
 * (rc1.build.ts), or train.command.env.
 */
export const TRAINER_BASE_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TERM',
  'TMPDIR',
  'CUDA_VISIBLE_DEVICES',
  'CUDA_DEVICE_ORDER',
  'NVIDIA_VISIBLE_DEVICES',
  'HIP_VISIBLE_DEVICES',
  'ROCR_VISIBLE_DEVICES',
  'ZE_AFFINITY_MASK',
] as const;

/** The base environment of a trainer: TRAINER_BASE_ENV's variables that are set in `from`. */
export function trainerBaseEnv(from: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(TRAINER_BASE_ENV.flatMap((k) => (from[k] === undefined ? [] : [[k, from[k]!]])));
}

/** Files the engine keeps in `<workDir>/command/`. */
function enginePaths(workDir: string): {
  dir: string;
  metrics: string;
  configJson: string;
  inputsJson: string;
  pidFile: string;
} {
  const dir = path.join(workDir, 'command');
  return {
    dir,
    metrics: path.join(dir, 'metrics.jsonl'),
    configJson: path.join(dir, 'config_effective.json'),
    inputsJson: path.join(dir, 'inputs.json'),
    pidFile: path.join(dir, 'trainer.pid'),
  };
}

function describeExit(e: Exit): string {
  return e.signal
    ? `was killed by ${e.signal}${e.signal === 'SIGKILL' ? ' (out of memory? see dmesg)' : ''}`
    : `exited with code ${e.code}`;
}

function withTail(message: string, proc: TrainerProcess | null): string {
  const tail = proc?.tail() ?? [];
  return tail.length
    ? `${message}\n  last output of the trainer:\n${tail
        .slice(-20)
        .map((l) => `    | ${l}`)
        .join('\n')}`
    : message;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function run(ctx: TrainContext): Promise<TrainResult> {
  const cfg = ctx.config.command;
  if (!cfg)
    throw new RuleError(
      'train.engine is "command" but train.command is not set: add train.command.argv (the trainer\'s command line), cwd, env, grace_s and poll_ms',
    );
  const total = ctx.config.steps;
  const p = enginePaths(ctx.paths.workDir);
  const ckDir = ctx.paths.checkpointDir;
  const graceMs = cfg.grace_s * 1000;
  fs.mkdirSync(p.dir, { recursive: true });
  fs.mkdirSync(ckDir, { recursive: true });

  const orphan = await stopOrphan(p.pidFile, graceMs);
  if (orphan) ctx.log(`command: ${orphan}`);
  if (ctx.paths.resumeFrom && ctx.startStep >= total) {
    // The build was interrupted after the final checkpoint was adopted (latest names step
    // train.steps) but before the run was recorded complete: nothing is left to train, and a
    // trainer started at its last step could write no checkpoint. The adopted one is the result.
    ctx.log(
      `command: ${path.basename(ctx.paths.resumeFrom)} is the final checkpoint (step ${ctx.startStep} of ${total}), adopted before the interrupt: nothing left to train, the trainer is not started`,
    );
    const meta = JSON.parse(fs.readFileSync(path.join(ctx.paths.resumeFrom, 'checkpoint.json'), 'utf8')) as {
      backend?: unknown;
    };
    return {
      finalStep: ctx.startStep,
      finalCheckpoint: ctx.paths.resumeFrom,
      backend: typeof meta.backend === 'string' ? meta.backend : 'external',
      metricsLines: 0,
      bestEval: null,
      interrupted: false,
    };
  }
  const gone = discardAfter(ckDir, ctx.startStep);
  if (gone.length)
    ctx.log(
      `command: removed ${gone.join(', ')}: left after the resume point (step ${ctx.startStep}) by an interrupted run`,
    );
  fs.writeFileSync(p.metrics, '');
  const effective = redact(
    {
      contract: COMMAND_CONTRACT_VERSION,
      train: ctx.config,
      ppo: ctx.settings?.ppo ?? null,
      overclar: ctx.settings?.overclar ?? null,
      config_hash: ctx.configHash,
      profile: ctx.profile,
      start_step: ctx.startStep,
    },
    secretValues(ctx.env),
  );
  fs.writeFileSync(p.configJson, `${JSON.stringify(effective, null, 2)}\n`);
  fs.writeFileSync(p.inputsJson, `${JSON.stringify(ctx.inputs, null, 2)}\n`);

  const resume = ctx.paths.resumeFrom;
  const argv = [
    ...cfg.argv,
    '--config',
    ctx.paths.effectiveConfig,
    '--checkpoint-dir',
    ckDir,
    '--metrics',
    p.metrics,
    ...(resume ? ['--resume-from', resume] : []),
  ];
  const scenarios = ctx.inputs.scenarios?.[0]; // the balanced pool: target('balanced_pool', 'pool')
  const declared = Object.fromEntries(Object.entries(ctx.env).filter((e): e is [string, string] => e[1] !== undefined));
  const env: NodeJS.ProcessEnv = {
    ...trainerBaseEnv(process.env),
    ...declared,
    ...cfg.env,
    RC1_CONTRACT: String(COMMAND_CONTRACT_VERSION),
    RC1_CONFIG: ctx.paths.effectiveConfig,
    RC1_CONFIG_JSON: p.configJson,
    RC1_CHECKPOINT_DIR: ckDir,
    RC1_METRICS: p.metrics,
    RC1_RESUME_FROM: resume ?? '',
    RC1_START_STEP: String(ctx.startStep),
    RC1_TOTAL_STEPS: String(total),
    RC1_INPUTS_JSON: p.inputsJson,
    RC1_PARENT_PID: String(process.pid),
    ...(scenarios ? { RC1_SCENARIOS: scenarios } : {}),
  };
  const shownMetrics = path.relative(ctx.paths.root, p.metrics);
  const tail = new MetricsTail(p.metrics, shownMetrics, { after: ctx.startStep, max: total });
  const watcher = new CheckpointWatcher(ckDir, { after: ctx.startStep, max: total });
  let backend = 'external';
  let lastLineAt: number | null = null;

  ctx.log(
    `command: starting ${JSON.stringify(argv)} in ${cfg.cwd}${resume ? `, resuming from ${path.basename(resume)} (step ${ctx.startStep})` : ', fresh start'}`,
  );
  let proc: TrainerProcess;
  try {
    proc = await startTrainer({
      argv,
      cwd: path.resolve(ctx.paths.root, cfg.cwd),
      env,
      onLine: (line, stream) => ctx.log(`trainer${stream === 'stderr' ? '!' : ':'} ${line}`),
    });
  } catch (e) {
    throw new RuleError(
      `command engine: ${(e as Error).message} (train.command.argv[0], looked up on PATH from ${cfg.cwd})`,
    );
  }
  writePidFile(p.pidFile, proc.pid, argv);
  await ctx.callbacks.onStart({
    startStep: ctx.startStep,
    totalSteps: total,
    resumedFrom: resume,
    engine: 'command',
    strategy: 'external',
    backend,
  });
  const onAbort = (): void => {
    ctx.log(`command: build interrupted: SIGTERM to the trainer's process group (SIGKILL after ${cfg.grace_s} s)`);
    void proc.stop(graceMs);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  /** Forwards new metrics lines and adopts new checkpoints. */
  const pump = async (final: boolean): Promise<void> => {
    for (const m of tail.poll(final)) {
      const now = Date.now();
      if (m.backend) backend = m.backend;
      await ctx.callbacks.onStep(
        toMetricsLine(m, lastLineAt === null ? null : (now - lastLineAt) / 1000, new Date(now)),
      );
      lastLineAt = now;
      ctx.progress(m.step, total);
    }
    for (const d of watcher.poll()) {
      const info = await adoptCheckpoint(d, { configHash: ctx.configHash, backend });
      watcher.record(info);
      ctx.log(`command: checkpoint ${d.name} complete (${Object.keys(info.meta.files).length} files)`);
      await ctx.callbacks.onCheckpoint(info);
    }
  };

  let exit: Exit | null = null;
  void proc.exited.then((e) => {
    exit = e;
  });
  let violation: ContractViolation | null = null;
  try {
    for (;;) {
      const done = exit !== null;
      await pump(done);
      if (done) break;
      await Promise.race([sleep(cfg.poll_ms), proc.exited]);
    }
  } catch (e) {
    if (!(e instanceof ContractViolation)) {
      await proc.stop(graceMs);
      throw e;
    }
    violation = e;
    ctx.log(`command: contract broken, stopping the trainer: ${e.message}`);
    await proc.stop(graceMs);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    fs.rmSync(p.pidFile, { force: true });
  }
  const ended = (exit ?? (await proc.exited)) as Exit;
  const last = watcher.last;
  const kept = last
    ? ` Its last complete checkpoint, ${path.basename(last.dir)}, stays: the next build resumes from it.`
    : '';
  if (violation)
    throw new RuleError(withTail(`the trainer broke the command contract: ${violation.message}.${kept}`, proc));

  if (ctx.signal.aborted) {
    ctx.log(
      `command: the trainer ${describeExit(ended)} after the interrupt; last complete checkpoint: ${last ? path.basename(last.dir) : 'none this run'}`,
    );
    return {
      finalStep: last?.step ?? ctx.startStep,
      finalCheckpoint: last?.dir ?? resume,
      backend,
      metricsLines: tail.lines,
      bestEval: null,
      interrupted: true,
    };
  }
  if (ended.code !== 0)
    throw new RuleError(
      withTail(
        `the trainer ${describeExit(ended)} (train.command.argv ${JSON.stringify(cfg.argv)}); its output is in logs/train.log.${kept}`,
        proc,
      ),
    );
  if (!last) {
    throw new RuleError(
      withTail(
        `the trainer exited 0 but wrote no complete checkpoint: expected ${path.join(ckDir, stepDirName(total))}/ closed by a ${COMPLETE_MARKER} file (the command contract, clause 2)`,
        proc,
      ),
    );
  }
  if (tail.lines === 0)
    throw new RuleError(
      withTail(
        `the trainer exited 0 but wrote no metrics line to ${shownMetrics} (the command contract, clause 1)`,
        proc,
      ),
    );
  if (last.step !== total) {
    throw new RuleError(
      withTail(
        `the trainer exited 0 at step ${last.step} of ${total} (train.steps): its last complete checkpoint is ${path.basename(last.dir)}; a finished run checkpoints step ${total}`,
        proc,
      ),
    );
  }
  if (tail.lastStep !== last.step) {
    throw new RuleError(
      withTail(
        `the trainer's last metrics line is step ${tail.lastStep} but its last checkpoint is step ${last.step}: the final state must be checkpointed after the last step`,
        proc,
      ),
    );
  }
  const files = Object.entries(last.meta.files);
  ctx.log(`command: final checkpoint ${path.basename(last.dir)}: ${files.length} files, sha256 in its checkpoint.json`);
  for (const [f, h] of files) ctx.log(`command:   ${h}  ${f}`);
  return {
    finalStep: last.step,
    finalCheckpoint: last.dir,
    backend,
    metricsLines: tail.lines,
    bestEval: null,
    interrupted: false,
  };
}

/** The `command` engine (see the contract above). */
export const commandEngine: Engine = { name: 'command', run };
