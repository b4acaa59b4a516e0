// The `ppo` strategy of the tfjs engine: each step collects at least rollout_len environment
// steps of whole episodes with the current policy (scenarios from the difficulty-aware sampler,
// actions sampled from the policy with the run's RNG), computes GAE(λ) advantages with the value
// head, then runs `epochs` passes of shuffled minibatches minimising
//   L = −mean min(ρA, clip(ρ, 1±ε)A) + vf_coef · ½ mean (V − R)² − ent_coef · H(π) + β · KL(π ‖ π_ref)
// where KL(π ‖ π_ref) is the exact KL over the four actions to the frozen reference policy (the
// policy at step 0: the SFT policy). Two controls hold the realised KL near target_kl:
//   projection  when the policy starts a step already further than target_kl from the reference
//               on the step's states (new states, visited by a changed policy), its policy weights
//               are moved back along the line to the reference's, θ_ref + λ(θ − θ_ref), with the
//               largest λ (bisection, 12 halvings) whose KL is within target_kl
//   early stop  after each epoch the mean KL over the step's states is measured; an epoch that
//               takes it above kl_stop × target_kl is undone (weights and Adam state restored)
//               and the step's update ends there
// So the post-update KL on every step's states is at most kl_stop × target_kl (metrics `kl`) by
// construction; it is not evidence. The evidence is `kl_rollout`: the KL on the step's states of
// the policy that generated them (before the projection), i.e. how far the policy the agent
// actually ran was from the reference. ppo_eval gates on it.
//   adaptive β  after the step, β adapts toward target_kl from kl_rollout (ppo-math.ts adaptKlCoef)
import type { JsonValue } from 'rc1-build';
import type { StepStats, Strategy } from '../api.ts';
import type { TrainConfig } from '../config.ts';
import { N_ACTIONS, newState, stepEnv, type EnvOptions } from '../env/dialogue-env.ts';
import { OBS_DIM, observeState } from '../env/features.ts';
import type { ScenarioSampler } from '../env/sampler.ts';
import { categoricalKl, entropyOf, forwardNet, logSoftmax, type Params } from '../mlp.ts';
import type { TrainRng } from '../rng.ts';
import type { TfjsModelHandle } from '../engines/tfjs/handle.ts';
import { ppoLoss } from './ppo-loss.ts';
import { adaptKlCoef, gae, normalize } from './ppo-math.ts';
import { StepAborted } from './step-aborted.ts';

export interface PpoBatch {
  n: number;
  obs: Float32Array;
  actions: Int32Array;
  oldLogp: Float64Array;
  values: Float64Array;
  rewards: Float64Array;
  dones: Uint8Array;
  refLogp: Float32Array;
  episodes: { reward: number; success: boolean; actions: number; seed: boolean }[];
}

/** Mean KL(π ‖ π_ref) over a batch's states. */
export function batchKl(params: Params, b: Pick<PpoBatch, 'n' | 'obs' | 'refLogp'>): number {
  let kl = 0;
  for (let t = 0; t < b.n; t++) {
    const lp = logSoftmax(forwardNet(params, 'policy', b.obs, t * OBS_DIM, OBS_DIM));
    kl += categoricalKl(lp, Float64Array.from(b.refLogp.subarray(t * N_ACTIONS, (t + 1) * N_ACTIONS)));
  }
  return b.n === 0 ? 0 : kl / b.n;
}

/** Moves the policy net's weights to θ_ref + λ(θ − θ_ref) with the largest λ whose KL on the batch is within `limit` (value net and Adam state kept). */
export function projectToReference(
  h: TfjsModelHandle,
  b: Pick<PpoBatch, 'n' | 'obs' | 'refLogp'>,
  limit: number,
): number {
  const cur = h.model.params();
  const half = cur.specs.length / 2;
  const mix = (lambda: number): Params => ({
    specs: cur.specs,
    data: cur.data.map((d, i) =>
      i >= half ? d : d.map((x, k) => h.reference.data[i]![k]! + lambda * (x - h.reference.data[i]![k]!)),
    ),
  });
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 12; i++) {
    const mid = (lo + hi) / 2;
    if (batchKl(mix(mid), b) <= limit) lo = mid;
    else hi = mid;
  }
  const { m, v } = h.model.moments();
  h.model.load(mix(lo), m, v, h.model.t);
  return lo;
}

export class PpoStrategy implements Strategy<TfjsModelHandle, PpoBatch> {
  readonly name = 'ppo' as const;
  private klCoef: number;

  constructor(
    private readonly cfg: Readonly<TrainConfig>,
    private readonly sampler: ScenarioSampler,
    private readonly env: EnvOptions,
    private readonly rng: TrainRng,
  ) {
    this.klCoef = cfg.ppo.kl_coef;
  }

  collect(step: number, h: TfjsModelHandle): PpoBatch {
    const cap = this.cfg.ppo.rollout_len + this.env.maxTurns;
    const obs = new Float32Array(cap * OBS_DIM);
    const refLogp = new Float32Array(cap * N_ACTIONS);
    const actions = new Int32Array(cap);
    const oldLogp = new Float64Array(cap);
    const values = new Float64Array(cap);
    const rewards = new Float64Array(cap);
    const dones = new Uint8Array(cap);
    const episodes: PpoBatch['episodes'] = [];
    const params = h.params();
    let n = 0;
    while (n < this.cfg.ppo.rollout_len) {
      if (h.signal.aborted) throw new StepAborted();
      const { spec, seed } = this.sampler.draw(step, this.rng);
      const st = newState();
      for (;;) {
        observeState(spec, st, this.env.maxTurns, obs, n * OBS_DIM);
        const lp = logSoftmax(forwardNet(params, 'policy', obs, n * OBS_DIM, OBS_DIM));
        const rl = logSoftmax(forwardNet(h.reference, 'policy', obs, n * OBS_DIM, OBS_DIM));
        for (let k = 0; k < N_ACTIONS; k++) refLogp[n * N_ACTIONS + k] = rl[k]!;
        const a = this.rng.pick(lp.map(Math.exp));
        actions[n] = a;
        oldLogp[n] = lp[a]!;
        values[n] = forwardNet(params, 'value', obs, n * OBS_DIM, OBS_DIM)[0]!;
        const out = stepEnv(spec, st, a, this.rng, this.env);
        n += 1;
        if (out) {
          rewards[n - 1] = out.reward;
          dones[n - 1] = 1;
          this.sampler.record(spec, out.success);
          episodes.push({ reward: out.reward, success: out.success, actions: out.actions, seed });
          break;
        }
      }
    }
    return { n, obs, actions, oldLogp, values, rewards, dones, refLogp, episodes };
  }

  update(_step: number, h: TfjsModelHandle, b: PpoBatch, lr: number): StepStats {
    const { tf, model } = h;
    const c = this.cfg.ppo;
    const { advantages, returns } = gae(
      b.rewards.subarray(0, b.n),
      b.values.subarray(0, b.n),
      b.dones.subarray(0, b.n),
      c.gamma,
      c.lam,
    );
    const adv = normalize(advantages);
    const sums = { policy: 0, value: 0, entropy: 0, kl: 0, total: 0 };
    let updates = 0;
    const order = Array.from({ length: b.n }, (_, i) => i);
    const bound = c.kl_stop * c.target_kl;
    const klRollout = batchKl(h.params(), b);
    if (klRollout > c.target_kl) projectToReference(h, b, c.target_kl);
    let stopped = false;
    for (let epoch = 0; epoch < c.epochs && !stopped; epoch++) {
      this.rng.shuffle(order);
      const before = { p: model.params(), ...model.moments(), t: model.t };
      const epochSums = { policy: 0, value: 0, entropy: 0, kl: 0, total: 0 };
      let epochUpdates = 0;
      for (let start = 0; start < b.n; start += c.batch) {
        if (h.signal.aborted) throw new StepAborted();
        const idx = order.slice(start, start + c.batch);
        const m = idx.length;
        const x = new Float32Array(m * OBS_DIM);
        const onehot = new Float32Array(m * N_ACTIONS);
        const ref = new Float32Array(m * N_ACTIONS);
        const old = new Float32Array(m);
        const av = new Float32Array(m);
        const ret = new Float32Array(m);
        idx.forEach((t, j) => {
          x.set(b.obs.subarray(t * OBS_DIM, (t + 1) * OBS_DIM), j * OBS_DIM);
          ref.set(b.refLogp.subarray(t * N_ACTIONS, (t + 1) * N_ACTIONS), j * N_ACTIONS);
          onehot[j * N_ACTIONS + b.actions[t]!] = 1;
          old[j] = b.oldLogp[t]!;
          av[j] = adv[t]!;
          ret[j] = returns[t]!;
        });
        const terms = tf.tidy(() => {
          const mb = {
            obs: tf.tensor2d(x, [m, OBS_DIM]),
            actions: tf.tensor2d(onehot, [m, N_ACTIONS]),
            oldLogp: tf.tensor1d(old),
            adv: tf.tensor1d(av),
            returns: tf.tensor1d(ret),
            refLogp: tf.tensor2d(ref, [m, N_ACTIONS]),
          };
          const parts: Record<string, number> = {};
          const { grads } = tf.variableGrads(() => {
            const t = ppoLoss(tf, model, mb, {
              clip: c.clip,
              vf_coef: c.vf_coef,
              ent_coef: c.ent_coef,
              kl_coef: this.klCoef,
            });
            for (const k of ['policy', 'value', 'entropy', 'kl', 'total'] as const) parts[k] = t[k].dataSync()[0]!;
            return t.total;
          }, model.vars);
          model.apply(
            model.vars.map((v) => grads[v.name]),
            lr,
            this.cfg.max_grad_norm,
          );
          return parts;
        });
        for (const k of Object.keys(sums) as (keyof typeof sums)[]) epochSums[k] += terms[k]!;
        epochUpdates += 1;
      }
      if (batchKl(model.params(), b) > bound) {
        model.load(before.p, before.m, before.v, before.t);
        stopped = true;
      } else {
        for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += epochSums[k];
        updates += epochUpdates;
      }
    }
    h.sync();
    const after = h.params();
    const kl = batchKl(after, b);
    let entropy = 0;
    for (let t = 0; t < b.n; t++)
      entropy += entropyOf(logSoftmax(forwardNet(after, 'policy', b.obs, t * OBS_DIM, OBS_DIM)));
    entropy /= b.n;
    const coefUsed = this.klCoef;
    if (c.adaptive_kl) this.klCoef = adaptKlCoef(this.klCoef, klRollout, c.target_kl, b.n, c.kl_horizon);
    const eps = b.episodes;
    const mean = (f: (e: PpoBatch['episodes'][number]) => number): number =>
      eps.reduce((a, e) => a + f(e), 0) / eps.length;
    return {
      loss: {
        policy: sums.policy / Math.max(1, updates),
        value: sums.value / Math.max(1, updates),
        entropy: sums.entropy / Math.max(1, updates),
        kl: sums.kl / Math.max(1, updates),
        total: sums.total / Math.max(1, updates),
      },
      reward: mean((e) => e.reward),
      kl,
      kl_rollout: klRollout,
      kl_coef: coefUsed,
      entropy,
      updates,
      envSteps: b.n,
      success: mean((e) => (e.success ? 1 : 0)),
      episode_len: mean((e) => e.actions),
      seed_ratio: mean((e) => (e.seed ? 1 : 0)),
    };
  }

  state(): JsonValue {
    return { kl_coef: this.klCoef, sampler: this.sampler.state() };
  }

  restore(s: JsonValue): void {
    const o = s as { kl_coef?: unknown; sampler?: JsonValue };
    if (typeof o.kl_coef !== 'number' || o.sampler === undefined)
      throw new Error('checkpoint strategy state: expected { kl_coef, sampler } for ppo');
    this.klCoef = o.kl_coef;
    this.sampler.restore(o.sampler);
  }
}
