// The PPO loss of one minibatch in tfjs (ppo.ts runs it under tf.variableGrads):
//   total = −mean min(ρA, clip(ρ, 1±ε)A) + vf_coef · ½ mean (V − R)² − ent_coef · mean H(π)
//           + β · mean KL(π ‖ π_ref),   ρ = exp(log π(a|s) − log π_old(a|s))
// with the exact categorical entropy and KL over the four actions. Returns the scalar tensors, so
// the unit tests can compare each term with ppo-math.ts on the same numbers.
import type * as TfModule from '@tensorflow/tfjs';
import type { Tf } from '../engines/tfjs/backend.ts';
import type { TfModel } from '../engines/tfjs/model.ts';

type Scalar = TfModule.Scalar;

export interface PpoMinibatch {
  /** [m, obsDim] */
  obs: TfModule.Tensor2D;
  /** [m, actions] one-hot of the actions taken */
  actions: TfModule.Tensor2D;
  /** [m] log π_old(a|s) */
  oldLogp: TfModule.Tensor1D;
  /** [m] normalised advantages */
  adv: TfModule.Tensor1D;
  /** [m] GAE returns */
  returns: TfModule.Tensor1D;
  /** [m, actions] log π_ref(·|s) */
  refLogp: TfModule.Tensor2D;
}

export interface PpoCoefs {
  clip: number;
  vf_coef: number;
  ent_coef: number;
  kl_coef: number;
}

export interface PpoLossTerms {
  total: Scalar;
  policy: Scalar;
  value: Scalar;
  entropy: Scalar;
  kl: Scalar;
}

export function ppoLoss(tf: Tf, model: TfModel, b: PpoMinibatch, c: PpoCoefs): PpoLossTerms {
  const logp = tf.logSoftmax(model.logits(b.obs));
  const lpA = tf.sum(tf.mul(logp, b.actions), 1);
  const ratio = tf.exp(tf.sub(lpA, b.oldLogp));
  const surr = tf.minimum(tf.mul(ratio, b.adv), tf.mul(tf.clipByValue(ratio, 1 - c.clip, 1 + c.clip), b.adv));
  const policy = tf.neg(tf.mean(surr)) as Scalar;
  const p = tf.exp(logp);
  const entropy = tf.mean(tf.neg(tf.sum(tf.mul(p, logp), 1))) as Scalar;
  const kl = tf.mean(tf.sum(tf.mul(p, tf.sub(logp, b.refLogp)), 1)) as Scalar;
  const value = tf.mul(tf.mean(tf.square(tf.sub(model.values(b.obs), b.returns))), 0.5) as Scalar;
  const total = tf.addN([
    policy,
    tf.mul(value, c.vf_coef),
    tf.mul(entropy, -c.ent_coef),
    tf.mul(kl, c.kl_coef),
  ]) as Scalar;
  return { total, policy, value, entropy, kl };
}
