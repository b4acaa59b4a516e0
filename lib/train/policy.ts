// A trained built-in policy as other code uses it: loadPolicy(dir) reads a checkpoint's model
// (model.json + model.bin: named Float32 tensors), a Policy acts on observations, and
// evaluatePolicy plays it over scenarios in simulated-dialogue-v3 and reports, per episode and
// summarised by task, difficulty and clarification need, what the ppo_eval gate compares: success,
// success on needs-clarification items, over-clarification rate, average turns, hard-bucket
// success of hotpotqa + strategyqa. Pure JavaScript: no tfjs needed to load or evaluate.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deriveSeed } from '../data/index.ts';
import type { RolloutScenario } from '../rollouts/index.ts';
import { ENV_NAME } from './api.ts';
import { ACTIONS, N_ACTIONS, newState, stepEnv, type EnvOptions } from './env/dialogue-env.ts';
import { FEATURE_NAMES, OBS_DIM, observeState } from './env/features.ts';
import { scenarioSpecs, type EnvScenario } from './env/scenario-spec.ts';
import { forwardNet, logSoftmax, paramSpecs, sizeOf, type NetShape, type Params } from './mlp.ts';
import { TrainRng } from './rng.ts';
import { summarizeEval, type EvalEpisode, type EvalSummary } from './eval-summary.ts';

export { summarizeEval, type EvalEpisode, type EvalSummary, type GroupStats } from './eval-summary.ts';

export const MODEL_FORMAT = 'rc1-policy-v1';

export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

export interface ModelIndex {
  format: typeof MODEL_FORMAT;
  env: string;
  obs_dim: number;
  hidden: number[];
  actions: string[];
  feature_names: string[];
  max_turns: number;
  tensors: { name: string; shape: number[]; offset: number; length: number }[];
}

/** Anything that picks actions from observations: a trained policy, or a scripted baseline (baselines.ts). */
export interface Actor {
  readonly maxTurns: number;
  /** Action log-probabilities for one observation. */
  logProbs(obs: Float32Array, offset?: number): Float64Array;
}

export interface Policy extends Actor {
  readonly shape: NetShape;
  readonly params: Params;
  /** The weights as named Float32 tensors (policy and value nets), layout order. */
  tensors(): NamedTensor[];
  value(obs: Float32Array, offset?: number): number;
}

export function makePolicy(shape: NetShape, params: Params, maxTurns: number): Policy {
  return {
    shape,
    params,
    maxTurns,
    tensors: () => params.specs.map((s, i) => ({ name: s.name, shape: [...s.shape], data: params.data[i]! })),
    logProbs: (obs, offset = 0) => logSoftmax(forwardNet(params, 'policy', obs, offset, shape.obsDim)),
    value: (obs, offset = 0) => forwardNet(params, 'value', obs, offset, shape.obsDim)[0]!,
  };
}

/** Writes model.json + model.bin for a policy into dir. Returns the two file names. */
export async function writeModelFiles(
  dir: string,
  shape: NetShape,
  params: Params,
  maxTurns: number,
): Promise<string[]> {
  const total = params.data.reduce((a, d) => a + d.length, 0);
  const bin = Buffer.alloc(total * 4);
  const tensors: ModelIndex['tensors'] = [];
  let off = 0;
  params.specs.forEach((s, i) => {
    const d = params.data[i]!;
    for (let k = 0; k < d.length; k++) bin.writeFloatLE(d[k]!, off + 4 * k);
    tensors.push({ name: s.name, shape: [...s.shape], offset: off, length: d.length });
    off += 4 * d.length;
  });
  const index: ModelIndex = {
    format: MODEL_FORMAT,
    env: ENV_NAME,
    obs_dim: shape.obsDim,
    hidden: [...shape.hidden],
    actions: [...ACTIONS],
    feature_names: [...FEATURE_NAMES],
    max_turns: maxTurns,
    tensors,
  };
  await writeFile(join(dir, 'model.json'), `${JSON.stringify(index, null, 2)}\n`);
  await writeFile(join(dir, 'model.bin'), bin);
  return ['model.json', 'model.bin'];
}

/** Reads Float32 tensors (little-endian) described by an index from a .bin buffer. */
export function readTensors(bin: Buffer, index: readonly { offset: number; length: number }[]): Float32Array[] {
  return index.map((t) => {
    const a = new Float32Array(t.length);
    for (let k = 0; k < t.length; k++) a[k] = bin.readFloatLE(t.offset + 4 * k);
    return a;
  });
}

/** Loads the policy of a checkpoint dir (step_XXXXX/, best/, initial/ or `latest`). */
export async function loadPolicy(dir: string): Promise<Policy> {
  const index = JSON.parse(await readFile(join(dir, 'model.json'), 'utf8')) as ModelIndex;
  if (index.format !== MODEL_FORMAT)
    throw new Error(`${dir}/model.json: format ${String(index.format)}, expected ${MODEL_FORMAT}`);
  if (index.obs_dim !== OBS_DIM || index.feature_names.join(',') !== FEATURE_NAMES.join(',')) {
    throw new Error(
      `${dir}/model.json: the policy was trained on other features (${index.feature_names.join(', ')}) than this version computes (${FEATURE_NAMES.join(', ')})`,
    );
  }
  const shape: NetShape = { obsDim: index.obs_dim, hidden: index.hidden, actions: index.actions.length };
  const specs = paramSpecs(shape);
  const bin = await readFile(join(dir, 'model.bin'));
  specs.forEach((s, i) => {
    const t = index.tensors[i];
    if (!t || t.name !== s.name || sizeOf(t.shape) !== sizeOf(s.shape) || t.length !== sizeOf(s.shape)) {
      throw new Error(
        `${dir}/model.json: tensor ${i} is ${t ? `${t.name} ${JSON.stringify(t.shape)}` : 'missing'}, expected ${s.name} ${JSON.stringify(s.shape)}`,
      );
    }
  });
  return makePolicy(shape, { specs, data: readTensors(bin, index.tensors) }, index.max_turns);
}

export interface EvaluateOptions extends Omit<EnvOptions, 'maxTurns'> {
  /** Defaults to the policy's max_turns. */
  maxTurns?: number;
  /** Argmax actions (default) or sampled ones. */
  greedy?: boolean;
  /** Seeds the environment's events and sampled actions (two streams), per scenario: the same seed, the same episodes. */
  seed: number;
}

/** Plays one episode; returns it with the actions taken. `rng` draws the environment's events, `actRng` (default: the same) sampled actions. */
export function playEpisode(
  policy: Actor,
  spec: EnvScenario,
  o: EnvOptions & { greedy: boolean },
  rng: TrainRng,
  actRng: TrainRng = rng,
): EvalEpisode {
  const st = newState();
  const obs = new Float32Array(OBS_DIM);
  const trace: string[] = [];
  for (;;) {
    observeState(spec, st, o.maxTurns, obs);
    const lp = policy.logProbs(obs);
    let a = 0;
    if (o.greedy) {
      for (let i = 1; i < N_ACTIONS; i++) if (lp[i]! > lp[a]!) a = i;
    } else a = actRng.pick(lp.map(Math.exp));
    trace.push(ACTIONS[a]!);
    const out = stepEnv(spec, st, a, rng, o);
    if (out) {
      return {
        scenario_id: spec.id,
        task: spec.task,
        difficulty: spec.difficulty,
        needs_clarification: spec.needsClarification,
        success: out.success,
        reward: out.reward,
        clarifications: out.clarifications,
        turns: out.turns,
        actions: out.actions,
        tool_calls: out.toolCalls,
        answered: out.answered,
        trace,
      };
    }
  }
}

/** Plays the policy over the scenarios (greedy by default) and summarises. */
export function evaluatePolicy(
  policy: Actor,
  scenarios: readonly (RolloutScenario | EnvScenario)[],
  o: EvaluateOptions,
): { env: string; episodes: EvalEpisode[]; summary: EvalSummary } {
  const env = {
    maxTurns: o.maxTurns ?? policy.maxTurns,
    weights: o.weights,
    reward: o.reward,
    noise: o.noise,
    greedy: o.greedy ?? true,
  };
  // raw scenarios are made specs together (scenarioSpecs: each draws its off-topic pages from the others)
  const raw = scenarios.filter((s): s is RolloutScenario => !('scenario' in s));
  const built = new Map(scenarioSpecs(raw).map((sp) => [sp.scenario, sp]));
  const episodes = scenarios.map((s) => {
    const spec = 'scenario' in s ? s : built.get(s)!;
    return playEpisode(
      policy,
      spec,
      env,
      new TrainRng(deriveSeed(o.seed, spec.id)),
      new TrainRng(deriveSeed(o.seed, `actions:${spec.id}`)),
    );
  });
  return { env: ENV_NAME, episodes, summary: summarizeEval(episodes) };
}
