// benchmarkTraining: the built-in engine's throughput per tfjs backend, for bench/train.ts.
// For each backend it runs `steps` PPO iterations (after `warmup` unmeasured ones) of the real
// strategy on the given scenarios and reports, separately, environment steps per second of the
// collection phase (policy forward passes in JavaScript + the simulated dialogue + scoring and
// reward), gradient updates per second of the update phase (tfjs forward + backward + Adam + the
// KL controller's check on its replay states; a step its early stop undid counts), the
// mean wall time of a whole step, and peak memory (process RSS sampled after every phase, and the
// tfjs backend's own tensor bytes). No checkpoints, no files.
import type { RolloutScenario } from '../rollouts/index.ts';
import type { TrainConfig } from './config.ts';
import { lrAt } from './config.ts';
import { N_ACTIONS } from './env/dialogue-env.ts';
import { OBS_DIM } from './env/features.ts';
import type { Weights } from './env/reward.ts';
import { ScenarioSampler } from './env/sampler.ts';
import { scenarioSpecs } from './env/scenario-spec.ts';
import { loadTf } from './engines/tfjs/backend.ts';
import { TfjsModelHandle } from './engines/tfjs/handle.ts';
import { TfModel } from './engines/tfjs/model.ts';
import { cloneParams, initParams } from './mlp.ts';
import { TrainRng } from './rng.ts';
import { PpoStrategy } from './strategies/ppo.ts';

export interface BenchmarkOptions {
  scenarios: readonly RolloutScenario[];
  weights: Weights;
  /** A full train config (configs/train.yaml validated), e.g. with the dev profile's sizes. */
  config: TrainConfig;
  backends: readonly ('wasm' | 'cpu' | 'tfjs-node' | 'tfjs-node-gpu')[];
  steps: number;
  warmup?: number;
}

export interface BenchmarkRow {
  backend: string;
  detail: string;
  steps: number;
  env_steps: number;
  env_steps_per_s: number;
  updates: number;
  updates_per_s: number;
  step_ms: number;
  peak_rss_mb: number;
  tf_bytes: number;
}

export async function benchmarkTraining(o: BenchmarkOptions): Promise<BenchmarkRow[]> {
  const rows: BenchmarkRow[] = [];
  const specs = scenarioSpecs(o.scenarios);
  for (const b of o.backends) {
    const tfh = await loadTf(b);
    const rng = new TrainRng(o.config.seed);
    const shape = { obsDim: OBS_DIM, hidden: o.config.model.hidden, actions: N_ACTIONS };
    const init = initParams(shape, rng);
    const model = new TfModel(tfh.tf, init.specs, init, o.config.adam);
    const handle = new TfjsModelHandle(tfh.tf, model, cloneParams(init), shape, new AbortController().signal);
    const env = {
      maxTurns: o.config.env.max_turns,
      weights: o.weights,
      reward: { ...o.config.reward },
      noise: { ...o.config.env.noise },
    };
    const strategy = new PpoStrategy(o.config, new ScenarioSampler(specs, o.config.sampling), env, rng);
    let peak = process.memoryUsage().rss;
    let collectS = 0;
    let updateS = 0;
    let envSteps = 0;
    let updates = 0;
    const warm = o.warmup ?? 2;
    for (let step = 0; step < warm + o.steps; step++) {
      const t0 = performance.now();
      const batch = strategy.collect(step, handle);
      const t1 = performance.now();
      const stats = strategy.update(step, handle, batch, lrAt(o.config, step));
      const t2 = performance.now();
      peak = Math.max(peak, process.memoryUsage().rss);
      if (step < warm) continue;
      collectS += (t1 - t0) / 1000;
      updateS += (t2 - t1) / 1000;
      envSteps += stats.envSteps;
      // gradient steps taken: the kept ones, plus the one the KL controller's early stop undid
      // (the update ends there, so a step that kept fewer than all its minibatches undid one)
      const minibatches = o.config.ppo.epochs * Math.ceil(stats.envSteps / o.config.ppo.batch);
      updates += stats.updates < minibatches ? stats.updates + 1 : stats.updates;
    }
    rows.push({
      backend: tfh.backend,
      detail: tfh.detail,
      steps: o.steps,
      env_steps: envSteps,
      env_steps_per_s: envSteps / collectS,
      updates,
      updates_per_s: updates / updateS,
      step_ms: ((collectS + updateS) * 1000) / o.steps,
      peak_rss_mb: peak / 2 ** 20,
      tf_bytes: tfh.tf.memory().numBytes,
    });
    model.dispose();
  }
  return rows;
}
