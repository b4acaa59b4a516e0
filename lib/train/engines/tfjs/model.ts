// The built-in policy in tfjs: the parameters of mlp.ts as tf.Variables, batched forward passes of
// the policy and value nets, and Adam written out (so its moments m and v, and the step count t,
// are plain tensors a checkpoint stores and a resume restores bit for bit):
//   m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²;  w ← w − lr · m̂ / (√v̂ + ε),
//   m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t); gradients first clipped to a global norm.
import type * as TfModule from '@tensorflow/tfjs';
import { sizeOf, type Params, type ParamSpec } from '../../mlp.ts';
import type { Tf } from './backend.ts';

type Tensor = TfModule.Tensor;
type Variable = TfModule.Variable;

export interface AdamConfig {
  beta1: number;
  beta2: number;
  eps: number;
}

export class TfModel {
  readonly vars: Variable[];
  readonly m: Variable[];
  readonly v: Variable[];
  /** Adam's step count (updates applied so far). */
  t = 0;
  private readonly layers: number;

  constructor(
    private readonly tf: Tf,
    readonly specs: readonly ParamSpec[],
    init: Params,
    private readonly adam: AdamConfig,
  ) {
    const made = tf.tidy(() => ({
      vars: specs.map((s, i) => tf.variable(tf.tensor(init.data[i]!, s.shape, 'float32'), true)),
      m: specs.map((s) => tf.variable(tf.zeros(s.shape, 'float32'), false)),
      v: specs.map((s) => tf.variable(tf.zeros(s.shape, 'float32'), false)),
    }));
    this.vars = made.vars;
    this.m = made.m;
    this.v = made.v;
    this.layers = specs.length / 4;
  }

  private net(x: Tensor, base: number): Tensor {
    const tf = this.tf;
    let h = x;
    for (let l = 0; l < this.layers; l++) {
      const y = tf.add(
        tf.matMul(h as TfModule.Tensor2D, this.vars[base + 2 * l]! as Tensor as TfModule.Tensor2D),
        this.vars[base + 2 * l + 1]!,
      );
      h = l < this.layers - 1 ? tf.tanh(y) : y;
    }
    return h;
  }

  /** Policy logits [B, actions] for observations [B, obsDim]. */
  logits(x: Tensor): Tensor {
    return this.net(x, 0);
  }

  /** Values [B] for observations [B, obsDim]. */
  values(x: Tensor): Tensor {
    return this.tf.reshape(this.net(x, this.specs.length / 2), [-1]);
  }

  /**
   * One Adam step on the gradients (in vars order; undefined for a variable the loss does not
   * reach, e.g. the value net under DPO: that variable and its moments are left as they are) at
   * learning rate lr; returns the global gradient norm before clipping.
   */
  apply(all: readonly (Tensor | undefined)[], lr: number, maxNorm: number): number {
    const idx = all.flatMap((g, i) => (g ? [i] : []));
    const grads = idx.map((i) => all[i]!);
    const tf = this.tf;
    this.t += 1;
    const { beta1, beta2, eps } = this.adam;
    const norm = Math.sqrt(tf.tidy(() => tf.addN(grads.map((g) => tf.sum(tf.square(g)))).dataSync()[0]!));
    const scale = maxNorm > 0 && norm > maxNorm ? maxNorm / (norm + 1e-6) : 1;
    const c1 = 1 - beta1 ** this.t;
    const c2 = 1 - beta2 ** this.t;
    tf.tidy(() => {
      grads.forEach((g0, k) => {
        const i = idx[k]!;
        const g = scale === 1 ? g0 : tf.mul(g0, scale);
        const m = tf.add(tf.mul(this.m[i]!, beta1), tf.mul(g, 1 - beta1));
        const v = tf.add(tf.mul(this.v[i]!, beta2), tf.mul(tf.square(g), 1 - beta2));
        this.m[i]!.assign(m);
        this.v[i]!.assign(v);
        const step = tf.div(tf.mul(m, lr / c1), tf.add(tf.sqrt(tf.div(v, c2)), eps));
        this.vars[i]!.assign(tf.sub(this.vars[i]!, step));
      });
    });
    return norm;
  }

  /** The current parameters as Float32 arrays (copies). */
  params(): Params {
    return {
      specs: this.specs.map((s) => ({ name: s.name, shape: [...s.shape] })),
      data: this.vars.map((x) => Float32Array.from(x.dataSync() as Float32Array)),
    };
  }

  moments(): { m: Float32Array[]; v: Float32Array[] } {
    return {
      m: this.m.map((x) => Float32Array.from(x.dataSync() as Float32Array)),
      v: this.v.map((x) => Float32Array.from(x.dataSync() as Float32Array)),
    };
  }

  /** Restores parameters, Adam moments and step count (a resume). */
  load(p: Params, m: Float32Array[], v: Float32Array[], t: number): void {
    const tf = this.tf;
    tf.tidy(() =>
      this.specs.forEach((s, i) => {
        for (const [arr, what] of [
          [p.data[i], 'weights'],
          [m[i], 'adam m'],
          [v[i], 'adam v'],
        ] as const) {
          if (!arr || arr.length !== sizeOf(s.shape))
            throw new Error(
              `checkpoint ${what}: tensor ${s.name} has ${arr?.length ?? 0} values, expected ${sizeOf(s.shape)}`,
            );
        }
        this.vars[i]!.assign(tf.tensor(p.data[i]!, s.shape, 'float32'));
        this.m[i]!.assign(tf.tensor(m[i]!, s.shape, 'float32'));
        this.v[i]!.assign(tf.tensor(v[i]!, s.shape, 'float32'));
      }),
    );
    this.t = t;
  }

  dispose(): void {
    for (const x of [...this.vars, ...this.m, ...this.v]) x.dispose();
  }
}
