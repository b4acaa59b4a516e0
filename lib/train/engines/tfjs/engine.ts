// The built-in `tfjs` engine: trains the dialogue-control policy (a small MLP over hand-built
// features, lib/train/README.md) in the simulated dialogue environment with the configured strategy (ppo or
// dpo). Order of a run: pick the backend, read the data, start from the SFT policy (the `sft`
// input group: the sft target's checkpoints/sft/; without one, a seeded random initialisation,
// said in the log) — the reference policy of the KL term is that initial policy, written once to
// initial/ —, or restore every
// piece of state from the resume checkpoint; then per step: the strategy collects and updates,
// the engine writes one metrics line, snapshots the state, and every checkpoint.every steps (and
// at the last step) writes a step dir. On interrupt (ctx.signal) it stops at the next minibatch,
// writes the last completed step's snapshot as a checkpoint, and returns `interrupted`.
import {
  ENV_NAME,
  type CheckpointInfo,
  type Engine,
  type MetricsLine,
  type TrainContext,
  type TrainResult,
} from '../../api.ts';
import { lrAt } from '../../config.ts';
import { writeCheckpoint, verifyCheckpoint } from '../../checkpoints.ts';
import { loadTrainingData } from '../../data.ts';
import { N_ACTIONS } from '../../env/dialogue-env.ts';
import { OBS_DIM } from '../../env/features.ts';
import { dirname } from 'node:path';
import { RuleError } from 'rc1-build';
import { cloneParams, initParams, type NetShape, type Params } from '../../mlp.ts';
import { loadPolicy } from '../../policy.ts';
import { TrainRng } from '../../rng.ts';
import { createStrategy } from '../../strategies/create-strategy.ts';
import { StepAborted } from '../../strategies/step-aborted.ts';
import { loadTf } from './backend.ts';
import { TfjsModelHandle } from './handle.ts';
import { TfModel } from './model.ts';
import { engineState, parseEngineState, readStateFiles, writeStateFiles, type Snapshot } from './state-files.ts';
import { writeInitialPolicy } from './initial-policy.ts';

/** The SFT policy's parameters from the `sft` input group (its model.json), or null when there is none. */
async function sftParams(files: readonly string[], shape: NetShape): Promise<Params | null> {
  const index = files.find((f) => f.endsWith('model.json'));
  if (!index) return null;
  const p = await loadPolicy(dirname(index));
  if (p.shape.hidden.join(',') !== shape.hidden.join(',')) {
    throw new RuleError(
      `train: the SFT policy (${index}) has hidden layers [${p.shape.hidden.join(', ')}], the train config [${shape.hidden.join(', ')}]: rebuild sft with the same train.model.hidden`,
    );
  }
  return cloneParams(p.params);
}

export const tfjsEngine: Engine = {
  name: 'tfjs',
  async run(ctx: TrainContext): Promise<TrainResult> {
    const cfg = ctx.config;
    const tfh = await loadTf(cfg.tfjs.backend);
    ctx.log(`engine tfjs, strategy ${cfg.strategy}, backend ${tfh.detail}`);
    if (!tfh.deterministic)
      ctx.log(
        'warning: this backend is not bit-reproducible: a resumed run continues correctly but not byte-identically to a straight run',
      );
    const data = await loadTrainingData(cfg, ctx.inputs, ctx.paths.root);
    ctx.log(
      `env ${ENV_NAME} (a simulation built from the data): ${data.train.length} training scenarios, ${data.holdout.length} held out (by source question) for the held-out eval that picks best, max_turns ${cfg.env.max_turns}`,
    );

    const rng = new TrainRng(ctx.seed);
    const shape: NetShape = { obsDim: OBS_DIM, hidden: cfg.model.hidden, actions: N_ACTIONS };
    const random = initParams(shape, rng);
    const sft = await sftParams(ctx.inputs.sft ?? [], shape);
    const init = sft ?? random;
    ctx.log(
      sft
        ? `initial policy: the SFT policy (${ctx.inputs.sft!.find((f) => f.endsWith('model.json'))}); KL reference = the SFT policy`
        : 'initial policy: a seeded random initialisation (no `sft` input); KL reference = that policy',
    );
    let reference = cloneParams(init);
    const model = new TfModel(tfh.tf, init.specs, init, cfg.adam);
    const strategy = await createStrategy(cfg, data, rng, reference, ctx.inputs, ctx.paths.root, (l) => ctx.log(l));
    let step = 0;
    if (ctx.paths.resumeFrom) {
      const v = await verifyCheckpoint(ctx.paths.resumeFrom);
      if (!v.ok)
        throw new Error(
          `internal error: resume checkpoint ${ctx.paths.resumeFrom} is incomplete (${v.problem}); please report this`,
        );
      const files = await readStateFiles(ctx.paths.resumeFrom, init);
      const st = parseEngineState(v.meta.state, ctx.paths.resumeFrom);
      model.load(files.params, files.m, files.v, st.adam_t);
      reference = files.reference;
      rng.state = st.rng;
      strategy.restore(st.strategy);
      step = v.meta.step;
      ctx.log(`resumed from ${ctx.paths.resumeFrom} at step ${step}`);
    } else {
      await writeInitialPolicy(
        ctx.paths.checkpointDir,
        init,
        shape,
        cfg.env.max_turns,
        ctx.configHash,
        tfh.backend,
        cfg.strategy,
      );
    }
    const handle = new TfjsModelHandle(tfh.tf, model, reference, shape, ctx.signal);

    const take = (): Snapshot => {
      const { m, v } = model.moments();
      return { step, params: handle.params(), m, v, adamT: model.t, rng: rng.state, strategy: strategy.state() };
    };
    const save = async (s: Snapshot): Promise<CheckpointInfo> => {
      const meta = {
        format: 'rc1-train-checkpoint-v1' as const,
        config_hash: ctx.configHash,
        engine: 'tfjs' as const,
        strategy: cfg.strategy,
        backend: tfh.backend,
        state: { ...engineState(s) },
      };
      const info = await writeCheckpoint(ctx.paths.checkpointDir, s.step, meta, (dir) =>
        writeStateFiles(dir, s, reference, shape, cfg.env.max_turns),
      );
      await ctx.callbacks.onCheckpoint(info);
      return info;
    };

    await ctx.callbacks.onStart({
      startStep: step,
      totalSteps: cfg.steps,
      resumedFrom: ctx.paths.resumeFrom,
      engine: 'tfjs',
      strategy: cfg.strategy,
      backend: tfh.backend,
    });
    let snapshot = take();
    let lastSaved: CheckpointInfo | null = null;
    let lastSavedStep = ctx.paths.resumeFrom ? step : -1;
    let lines = 0;
    let interrupted = false;
    try {
      while (step < cfg.steps) {
        if (ctx.signal.aborted) {
          interrupted = true;
          break;
        }
        const t0 = performance.now();
        let stats: Awaited<ReturnType<typeof strategy.update>>;
        try {
          const batch = await strategy.collect(step, handle);
          stats = await strategy.update(step, handle, batch, lrAt(cfg, step));
        } catch (e) {
          if (e instanceof StepAborted) {
            interrupted = true;
            break;
          }
          throw e;
        }
        const lr = lrAt(cfg, step);
        step += 1;
        const secs = Math.max(1e-9, (performance.now() - t0) / 1000);
        const line: MetricsLine = {
          step,
          loss: stats.loss,
          reward: stats.reward,
          kl: stats.kl,
          kl_rollout: stats.kl_rollout,
          kl_coef: stats.kl_coef,
          kl_engaged: stats.kl_engaged,
          entropy: stats.entropy,
          lr,
          throughput: stats.envSteps / secs,
          updates_per_s: stats.updates / secs,
          success: stats.success,
          episode_len: stats.episode_len,
          seed_ratio: stats.seed_ratio,
          backend: tfh.backend,
          engine: 'tfjs',
          strategy: cfg.strategy,
          env: ENV_NAME,
          time: new Date().toISOString(),
        };
        await ctx.callbacks.onStep(line);
        lines += 1;
        snapshot = take();
        if (step % cfg.checkpoint.every === 0 || step === cfg.steps) {
          lastSaved = await save(snapshot);
          lastSavedStep = step;
        }
        ctx.progress(step, cfg.steps);
      }
      if (interrupted && snapshot.step > lastSavedStep) {
        lastSaved = await save(snapshot);
        ctx.log(
          `interrupted: checkpointed the last completed step ${snapshot.step}; the next \`rc1-build train\` resumes from it`,
        );
      }
    } finally {
      model.dispose();
    }
    const result: TrainResult = {
      finalStep: snapshot.step,
      finalCheckpoint: lastSaved?.dir ?? ctx.paths.resumeFrom,
      backend: tfh.backend,
      metricsLines: lines,
      bestEval: null,
      interrupted,
    };
    await ctx.callbacks.onEnd(result);
    return result;
  },
};
