// The `ppo` strategy of the tfjs engine: each step collects at least rollout_len environment
// steps of whole episodes with the current policy (scenarios from the difficulty-aware sampler,
// actions sampled from the policy with the run's RNG), computes GAE(λ) advantages with the value
// head, then runs `epochs` passes of shuffled minibatches minimising
//   L = −mean min(ρA, clip(ρ, 1±ε)A) + vf_coef · ½ mean (V − R)² − ent_coef · H(π) + β · KL(π ‖ π_ref)
// where KL(π ‖ π_ref) is the exact KL over the four actions to the frozen reference policy (the
// policy at step 0: the SFT policy).
// The KL that counts is `kl_rollout`: KL(π ‖ π_ref) of the policy that GENERATED a batch, on that
// batch's states (ppo_eval gates its maximum over every step of every seed at kl_stop × target_kl).
// It is measured on ~rollout_len states, so for one fixed policy it scatters from batch to batch
// (docs/kl-control.md: coefficient of variation ≈ 0.2 at 130 states, the largest of 300 batches
// ≈ 1.55 × the policy's mean). A controller that lets the updated policy reach the bound on the
// old batch's states therefore sees the next batch's estimate overshoot it. So the controller
// holds the policy at a setpoint below the bound, measured on more states than one batch:
//   replay      the states of the last kl_replay batches (this one included) with their reference
//               log-probabilities; every KL the controller acts on is the mean over them
//   projection  a policy that starts a step above kl_hold × target_kl on the replay states has its
//               policy weights moved back along the line to the reference's,
//               θ_ref + λ(θ − θ_ref), with the largest λ (bisection, 12 halvings) within it
//   early stop  after every minibatch the replay KL is measured; a minibatch that takes it above
//               kl_hold × target_kl is undone (weights and Adam state restored) and the step's
//               update ends there
//   adaptive β  after the step, β adapts so the replay KL of the policy that generated the batch
//               approaches kl_coef_target × target_kl, below the setpoint, so the penalty holds the
//               KL and the stop is the safety net (ppo-math.ts adaptKlCoef; at kl_horizon 1000
//               transitions it moves ≤ 2.6 % a step), capped at kl_coef_max
// So the post-update replay KL is at most kl_hold × target_kl by construction (metrics `kl` is the
// post-update KL on the step's own states); the evidence is kl_rollout of the next step. The
// replay is part of the strategy's checkpointed state, so a resumed run continues exactly.
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

/**
 * Moves the policy net's weights to θ_ref + λ(θ − θ_ref) with the largest λ (bisection, 12 halvings)
 * whose KL, as `klOf` measures it with the weights loaded, is within `limit` (value net and Adam state
 * kept); returns λ.
 */
export function projectToReference(h: TfjsModelHandle, limit: number, klOf: () => number): number {
  const { model } = h;
  const cur = model.params();
  const { m, v } = model.moments();
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
    model.load(mix(mid), m, v, model.t);
    if (klOf() <= limit) lo = mid;
    else hi = mid;
  }
  model.load(mix(lo), m, v, model.t);
  return lo;
}

/** The states of recent batches and their reference log-probabilities (the controller's KL sample). */
export class KlReplay {
  private batches: { n: number; obs: Float32Array; refLogp: Float32Array | null }[] = [];

  constructor(private readonly size: number) {}

  /** Adds a batch's states (copied), dropping the oldest beyond `size` batches. */
  push(b: Pick<PpoBatch, 'n' | 'obs' | 'refLogp'>): void {
    this.batches.push({
      n: b.n,
      obs: b.obs.slice(0, b.n * OBS_DIM),
      refLogp: b.refLogp.slice(0, b.n * N_ACTIONS),
    });
    if (this.batches.length > this.size) this.batches.splice(0, this.batches.length - this.size);
  }

  /** All the states as one batch; reference log-probabilities of restored batches are recomputed from `reference`. */
  sample(reference: Params): Pick<PpoBatch, 'n' | 'obs' | 'refLogp'> {
    const n = this.batches.reduce((a, x) => a + x.n, 0);
    const obs = new Float32Array(n * OBS_DIM);
    const refLogp = new Float32Array(n * N_ACTIONS);
    let off = 0;
    for (const x of this.batches) {
      if (!x.refLogp) {
        x.refLogp = new Float32Array(x.n * N_ACTIONS);
        for (let t = 0; t < x.n; t++)
          x.refLogp.set(logSoftmax(forwardNet(reference, 'policy', x.obs, t * OBS_DIM, OBS_DIM)), t * N_ACTIONS);
      }
      obs.set(x.obs, off * OBS_DIM);
      refLogp.set(x.refLogp, off * N_ACTIONS);
      off += x.n;
    }
    return { n, obs, refLogp };
  }

  state(): JsonValue {
    return this.batches.map((x) => {
      const buf = Buffer.alloc(4 * x.obs.length);
      for (let i = 0; i < x.obs.length; i++) buf.writeFloatLE(x.obs[i]!, 4 * i);
      return buf.toString('base64');
    });
  }

  restore(s: unknown): void {
    if (!Array.isArray(s) || s.some((x) => typeof x !== 'string'))
      throw new Error('checkpoint strategy state: kl_replay must be a list of base64 strings');
    this.batches = (s as string[]).slice(-this.size).map((b64) => {
      const buf = Buffer.from(b64, 'base64');
      if (buf.length % (4 * OBS_DIM) !== 0)
        throw new Error(
          `checkpoint strategy state: a kl_replay batch has ${buf.length} bytes, not a multiple of ${4 * OBS_DIM} (${OBS_DIM} float32 features per state)`,
        );
      const obs = new Float32Array(buf.length / 4);
      for (let i = 0; i < obs.length; i++) obs[i] = buf.readFloatLE(4 * i);
      return { n: obs.length / OBS_DIM, obs, refLogp: null };
    });
  }
}

export class PpoStrategy implements Strategy<TfjsModelHandle, PpoBatch> {
  readonly name = 'ppo' as const;
  private klCoef: number;
  private readonly replay: KlReplay;

  constructor(
    private readonly cfg: Readonly<TrainConfig>,
    private readonly sampler: ScenarioSampler,
    private readonly env: EnvOptions,
    private readonly rng: TrainRng,
  ) {
    this.klCoef = cfg.ppo.kl_coef;
    this.replay = new KlReplay(cfg.ppo.kl_replay);
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
    const hold = c.kl_hold * c.target_kl;
    const klRollout = batchKl(h.params(), b);
    this.replay.push(b);
    const replay = this.replay.sample(h.reference);
    const replayObs = tf.tensor2d(replay.obs, [replay.n, OBS_DIM]);
    const replayRef = tf.tensor2d(replay.refLogp, [replay.n, N_ACTIONS]);
    const replayKl = (): number =>
      tf.tidy(() => {
        const lp = tf.logSoftmax(model.logits(replayObs));
        return tf.mean(tf.sum(tf.mul(tf.exp(lp), tf.sub(lp, replayRef)), 1)).dataSync()[0]!;
      });
    let stopped = false;
    let engaged = false;
    let klReplay = 0;
    try {
      klReplay = replayKl();
      if (klReplay > hold) {
        projectToReference(h, hold, replayKl);
        engaged = true;
      }
      for (let epoch = 0; epoch < c.epochs && !stopped; epoch++) {
        this.rng.shuffle(order);
        for (let start = 0; start < b.n && !stopped; start += c.batch) {
          if (h.signal.aborted) throw new StepAborted();
          const before = { p: model.params(), ...model.moments(), t: model.t };
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
          if (replayKl() > hold) {
            model.load(before.p, before.m, before.v, before.t);
            stopped = true;
            engaged = true;
          } else {
            for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += terms[k]!;
            updates += 1;
          }
        }
      }
    } finally {
      replayObs.dispose();
      replayRef.dispose();
    }
    h.sync();
    const after = h.params();
    const kl = batchKl(after, b);
    let entropy = 0;
    for (let t = 0; t < b.n; t++)
      entropy += entropyOf(logSoftmax(forwardNet(after, 'policy', b.obs, t * OBS_DIM, OBS_DIM)));
    entropy /= b.n;
    const coefUsed = this.klCoef;
    if (c.adaptive_kl)
      this.klCoef = adaptKlCoef(
        this.klCoef,
        klReplay,
        c.kl_coef_target * c.target_kl,
        b.n,
        c.kl_horizon,
        c.kl_coef_max,
      );
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
      kl_engaged: engaged,
      entropy,
      updates,
      envSteps: b.n,
      success: mean((e) => (e.success ? 1 : 0)),
      episode_len: mean((e) => e.actions),
      seed_ratio: mean((e) => (e.seed ? 1 : 0)),
    };
  }

  state(): JsonValue {
    return { kl_coef: this.klCoef, sampler: this.sampler.state(), kl_replay: this.replay.state() };
  }

  restore(s: JsonValue): void {
    const o = s as { kl_coef?: unknown; sampler?: JsonValue; kl_replay?: unknown };
    if (typeof o.kl_coef !== 'number' || o.sampler === undefined || o.kl_replay === undefined)
      throw new Error('checkpoint strategy state: expected { kl_coef, sampler, kl_replay } for ppo');
    this.klCoef = o.kl_coef;
    this.sampler.restore(o.sampler);
    this.replay.restore(o.kl_replay);
  }
}
