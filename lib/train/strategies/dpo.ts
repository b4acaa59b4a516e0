// The `dpo` strategy of the tfjs engine (Rafailov et al. 2023) on the preference pairs of
// dpo-pairs.ts: each step draws `dpo.batch` pairs (with replacement, from the run's RNG) and makes
// one update minimising
//   L = −mean log σ(β [(log π(y_c) − log π_ref(y_c)) − (log π(y_r) − log π_ref(y_r))])
// where log π(y) is the sum of the policy's action log-probabilities along the trajectory's
// replayed states. Metrics: reward = the mean implicit reward margin β[…] of the batch; kl = mean
// KL(π ‖ π_ref) over the batch's states; kl_coef = β (DPO's KL-regularisation strength); the value
// loss is 0 (DPO trains no value head); success / episode_len / seed_ratio are null.
import type { JsonValue } from 'rc1-build';
import type { StepStats, Strategy } from '../api.ts';
import type { TrainConfig } from '../config.ts';
import { N_ACTIONS } from '../env/dialogue-env.ts';
import { OBS_DIM } from '../env/features.ts';
import { categoricalKl, entropyOf, forwardNet, logSoftmax } from '../mlp.ts';
import type { TrainRng } from '../rng.ts';
import type { TfjsModelHandle } from '../engines/tfjs/handle.ts';
import type { PreferencePair } from './dpo-pairs.ts';
import { StepAborted } from './step-aborted.ts';

export interface DpoBatch {
  pairs: PreferencePair[];
}

export class DpoStrategy implements Strategy<TfjsModelHandle, DpoBatch> {
  readonly name = 'dpo' as const;

  constructor(
    private readonly cfg: Readonly<TrainConfig>,
    private readonly pairs: readonly PreferencePair[],
    private readonly rng: TrainRng,
  ) {
    if (pairs.length === 0)
      throw new Error(
        'dpo: no preference pair (every training scenario has fewer than two scored candidates, or they tie)',
      );
  }

  collect(_step: number, h: TfjsModelHandle): DpoBatch {
    if (h.signal.aborted) throw new StepAborted();
    return { pairs: Array.from({ length: this.cfg.dpo.batch }, () => this.pairs[this.rng.int(this.pairs.length)]!) };
  }

  update(_step: number, h: TfjsModelHandle, b: DpoBatch, lr: number): StepStats {
    const { tf, model } = h;
    const beta = this.cfg.dpo.beta;
    const paths = b.pairs.flatMap((p) => [p.chosen, p.rejected]);
    const total = paths.reduce((a, p) => a + p.actions.length, 0);
    const x = new Float32Array(total * OBS_DIM);
    const onehot = new Float32Array(total * N_ACTIONS);
    const seg = new Float32Array(paths.length * total);
    const ref = new Float32Array(paths.length);
    let t = 0;
    paths.forEach((p, i) => {
      x.set(p.obs, t * OBS_DIM);
      for (let k = 0; k < p.actions.length; k++) {
        onehot[(t + k) * N_ACTIONS + p.actions[k]!] = 1;
        seg[i * total + t + k] = 1;
      }
      ref[i] = p.refLogp;
      t += p.actions.length;
    });
    if (h.signal.aborted) throw new StepAborted();
    const parts = tf.tidy(() => {
      const tx = tf.tensor2d(x, [total, OBS_DIM]);
      const toh = tf.tensor2d(onehot, [total, N_ACTIONS]);
      const tseg = tf.tensor2d(seg, [paths.length, total]);
      const tref = tf.tensor1d(ref);
      const out: { loss: number; margin: number } = { loss: 0, margin: 0 };
      const { grads } = tf.variableGrads(() => {
        const lpA = tf.sum(tf.mul(tf.logSoftmax(model.logits(tx)), toh), 1, true);
        const seqLogp = tf.reshape(tf.matMul(tseg, lpA), [-1]);
        const rel = tf.reshape(tf.sub(seqLogp, tref), [-1, 2]);
        const [c, r] = tf.split(rel, 2, 1);
        const margin = tf.mul(tf.sub(c!, r!), beta);
        const loss = tf.mean(tf.softplus(tf.neg(margin)));
        out.loss = loss.dataSync()[0]!;
        out.margin = tf.mean(margin).dataSync()[0]!;
        return loss as never;
      }, model.vars);
      model.apply(
        model.vars.map((v) => grads[v.name]),
        lr,
        this.cfg.max_grad_norm,
      );
      return out;
    });
    h.sync();
    const after = h.params();
    let kl = 0;
    let entropy = 0;
    for (let i = 0; i < total; i++) {
      const lp = logSoftmax(forwardNet(after, 'policy', x, i * OBS_DIM, OBS_DIM));
      kl += categoricalKl(lp, logSoftmax(forwardNet(h.reference, 'policy', x, i * OBS_DIM, OBS_DIM)));
      entropy += entropyOf(lp);
    }
    kl /= total;
    entropy /= total;
    return {
      loss: { policy: parts.loss, value: 0, entropy, kl, total: parts.loss },
      reward: parts.margin,
      kl,
      kl_rollout: null,
      kl_coef: beta,
      kl_engaged: null,
      entropy,
      updates: 1,
      envSteps: total,
      success: null,
      episode_len: null,
      seed_ratio: null,
    };
  }

  state(): JsonValue {
    return { pairs: this.pairs.length };
  }

  restore(s: JsonValue): void {
    const o = s as { pairs?: unknown };
    if (o.pairs !== this.pairs.length)
      throw new Error(
        `checkpoint strategy state: dpo had ${String(o.pairs)} preference pairs, this run has ${this.pairs.length}`,
      );
  }
}
