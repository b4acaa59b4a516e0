// Supervised fine-tuning (behaviour cloning) of the built-in policy on the pool's reference
// trajectories — the `sft` target, whose policy is PPO's starting point and its KL reference.
// The reference trajectory of a scenario is its plan: the clarifying question when the scenario
// needs one, one wiki call per supporting page, one calc call per arithmetic step, then the answer.
// In the stochastic environment the expert follows that plan and repeats what did not work (a
// time-out, a vague reply, a distractor page): `expertAction` reads the simulator's counters, the
// privileged information a reference trajectory has. The student sees only the observations
// (features.ts) and learns the expert's action by cross-entropy; its value head learns the
// expert episode's reward (γ = 1, a single terminal reward). Per training scenario
// `sft.episodes` episodes are played (seeded per scenario and episode), the transitions of the
// held-out source questions (data.ts splitHoldout) measure held-out accuracy. Adam over shuffled
// minibatches for `sft.epochs` epochs; one TrainRng(seed) draws everything, so on a deterministic
// backend the same inputs give byte-identical weights.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deriveSeed } from '../data/index.ts';
import { sealCheckpoint } from './checkpoints.ts';
import { configHash, type TrainConfig } from './config.ts';
import { loadTrainingData } from './data.ts';
import { loadTf } from './engines/tfjs/backend.ts';
import { writeModelFiles } from './policy.ts';
import {
  ANSWER,
  ASK,
  CALC,
  N_ACTIONS,
  WIKI,
  newState,
  stepEnv,
  type DialogueState,
  type EnvOptions,
} from './env/dialogue-env.ts';
import { OBS_DIM, observeState } from './env/features.ts';
import type { EnvScenario } from './env/scenario-spec.ts';
import type { Tf } from './engines/tfjs/backend.ts';
import { TfModel } from './engines/tfjs/model.ts';
import { initParams, type NetShape, type Params } from './mlp.ts';
import { TrainRng } from './rng.ts';

/** The reference plan's next action in a state (privileged: reads the simulator's counters). */
export function expertAction(spec: EnvScenario, st: DialogueState, maxTurns: number): number {
  if (st.turn >= maxTurns - 1) return ANSWER;
  if (spec.needsClarification && !st.clarified) return ASK;
  if (st.wikiFound < spec.wiki.length) return WIKI;
  if (st.calcFound < spec.calc.length) return CALC;
  return ANSWER;
}

export interface Demonstrations {
  n: number;
  obs: Float32Array;
  actions: Int32Array;
  returns: Float32Array;
  success: number;
}

/** Plays the expert `episodes` times per scenario and records (observation, action, episode reward). */
export function demonstrations(
  specs: readonly EnvScenario[],
  env: EnvOptions,
  episodes: number,
  seed: number,
): Demonstrations {
  const obs: number[] = [];
  const actions: number[] = [];
  const returns: number[] = [];
  let successes = 0;
  const buf = new Float32Array(OBS_DIM);
  for (const spec of specs) {
    for (let e = 0; e < episodes; e++) {
      const rng = new TrainRng(deriveSeed(seed, `sft:${spec.id}:${e}`));
      const st = newState();
      const start = actions.length;
      for (;;) {
        observeState(spec, st, env.maxTurns, buf);
        const a = expertAction(spec, st, env.maxTurns);
        for (const x of buf) obs.push(x);
        actions.push(a);
        const out = stepEnv(spec, st, a, rng, env);
        if (out) {
          for (let k = start; k < actions.length; k++) returns.push(out.reward);
          if (out.success) successes += 1;
          break;
        }
      }
    }
  }
  return {
    n: actions.length,
    obs: Float32Array.from(obs),
    actions: Int32Array.from(actions),
    returns: Float32Array.from(returns),
    success: successes / Math.max(1, specs.length * episodes),
  };
}

export interface SftEpoch {
  epoch: number;
  loss: number;
  train_accuracy: number;
  holdout_accuracy: number | null;
}

export interface SftResult {
  params: Params;
  shape: NetShape;
  epochs: SftEpoch[];
  train: { transitions: number; expert_success: number };
  holdout: { transitions: number; expert_success: number };
}

function accuracy(tf: Tf, model: TfModel, d: Demonstrations): number {
  if (d.n === 0) return 0;
  return tf.tidy(() => {
    const pred = tf.argMax(model.logits(tf.tensor2d(d.obs, [d.n, OBS_DIM])), 1).dataSync();
    let ok = 0;
    for (let i = 0; i < d.n; i++) if (pred[i] === d.actions[i]) ok += 1;
    return ok / d.n;
  });
}

/** Behaviour cloning (see the head of this file). */
export function trainSft(
  tf: Tf,
  cfg: Readonly<TrainConfig>,
  train: readonly EnvScenario[],
  holdout: readonly EnvScenario[],
  env: EnvOptions,
  signal: AbortSignal,
  log: (line: string) => void,
): SftResult {
  const s = cfg.sft;
  const rng = new TrainRng(cfg.seed);
  const shape: NetShape = { obsDim: OBS_DIM, hidden: cfg.model.hidden, actions: N_ACTIONS };
  const init = initParams(shape, rng);
  const model = new TfModel(tf, init.specs, init, cfg.adam);
  const d = demonstrations(train, env, s.episodes, cfg.seed);
  const h = demonstrations(holdout, env, s.episodes, cfg.seed);
  log(
    `sft: ${d.n} expert transitions from ${train.length} training scenarios (expert success ${d.success.toFixed(3)}), ${h.n} from ${holdout.length} held-out ones`,
  );
  const epochs: SftEpoch[] = [];
  const order = Array.from({ length: d.n }, (_, i) => i);
  try {
    for (let epoch = 1; epoch <= s.epochs; epoch++) {
      rng.shuffle(order);
      let loss = 0;
      let batches = 0;
      for (let start = 0; start < d.n; start += s.batch) {
        signal.throwIfAborted();
        const idx = order.slice(start, start + s.batch);
        const m = idx.length;
        const x = new Float32Array(m * OBS_DIM);
        const y = new Float32Array(m * N_ACTIONS);
        const r = new Float32Array(m);
        idx.forEach((t, j) => {
          x.set(d.obs.subarray(t * OBS_DIM, (t + 1) * OBS_DIM), j * OBS_DIM);
          y[j * N_ACTIONS + d.actions[t]!] = 1;
          r[j] = d.returns[t]!;
        });
        loss += tf.tidy(() => {
          const xs = tf.tensor2d(x, [m, OBS_DIM]);
          const ys = tf.tensor2d(y, [m, N_ACTIONS]);
          const rs = tf.tensor1d(r);
          let value = 0;
          const { grads } = tf.variableGrads(() => {
            const ce = tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(model.logits(xs)), ys), 1)));
            const v = tf.mul(tf.mean(tf.square(tf.sub(model.values(xs), rs))), 0.5);
            value = ce.dataSync()[0] ?? 0;
            return tf.add(ce, v) as ReturnType<typeof tf.scalar>;
          }, model.vars);
          model.apply(
            model.vars.map((v) => grads[v.name]),
            s.lr,
            cfg.max_grad_norm,
          );
          return value;
        });
        batches += 1;
      }
      const e: SftEpoch = {
        epoch,
        loss: loss / Math.max(1, batches),
        train_accuracy: accuracy(tf, model, d),
        holdout_accuracy: h.n > 0 ? accuracy(tf, model, h) : null,
      };
      epochs.push(e);
      if (epoch === 1 || epoch === s.epochs || epoch % 5 === 0) {
        log(
          `sft epoch ${epoch}: cross-entropy ${e.loss.toFixed(4)}, accuracy ${e.train_accuracy.toFixed(3)} (held out ${e.holdout_accuracy?.toFixed(3) ?? 'n/a'})`,
        );
      }
    }
    return {
      params: model.params(),
      shape,
      epochs,
      train: { transitions: d.n, expert_success: d.success },
      holdout: { transitions: h.n, expert_success: h.success },
    };
  } finally {
    model.dispose();
  }
}

/**
 * The sft target's work: reads the pool and weights of `inputs` (as the train target does), clones
 * the expert, writes the policy as a sealed checkpoint dir (model.json, model.bin, checkpoint.json)
 * into `outDir`, and returns the report.
 */
export async function runSft(o: {
  config: Readonly<TrainConfig>;
  inputs: Readonly<Record<string, readonly string[]>>;
  root: string;
  outDir: string;
  signal: AbortSignal;
  log: (line: string) => void;
}): Promise<Record<string, unknown>> {
  const tfh = await loadTf(o.config.tfjs.backend);
  o.log(`sft: backend ${tfh.detail}`);
  const data = await loadTrainingData(o.config, o.inputs, o.root);
  const r = trainSft(tfh.tf, o.config, data.train, data.holdout, data.env, o.signal, o.log);
  await mkdir(o.outDir, { recursive: true });
  await writeModelFiles(o.outDir, r.shape, r.params, o.config.env.max_turns);
  const hash = configHash(o.config);
  await sealCheckpoint(o.outDir, {
    format: 'rc1-train-checkpoint-v1',
    step: 0,
    config_hash: hash,
    engine: 'tfjs',
    strategy: 'ppo',
    backend: tfh.backend,
    state: { sft: true },
  });
  const last = r.epochs.at(-1)!;
  return {
    what: "behaviour cloning of the pool's reference trajectories (the expert plan, repeated where a tool or the user did not deliver) in the simulated dialogue environment: the initial policy and KL reference of PPO",
    synthetic_environment: true,
    seed: o.config.seed,
    backend: tfh.backend,
    deterministic: tfh.deterministic,
    config_hash: hash,
    scenarios: {
      train: data.train.length,
      holdout: data.holdout.length,
      split: 'by source question (no held-out scenario shares its source question with a training one)',
    },
    transitions: { train: r.train.transitions, holdout: r.holdout.transitions },
    expert_success: { train: r.train.expert_success, holdout: r.holdout.expert_success },
    final: { loss: last.loss, train_accuracy: last.train_accuracy, holdout_accuracy: last.holdout_accuracy },
    epochs: r.epochs,
    model: join('checkpoints', 'sft'),
  };
}
