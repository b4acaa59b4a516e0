// The built-in policy's network, engine-free: the named parameter layout of two small MLPs (a
// policy with one logit per action, a value head with one output; tanh hidden layers), their
// seeded initialisation, and a plain-JavaScript forward pass. The tfjs engine trains the same
// parameters (engines/tfjs/model.ts); acting during collection, evaluation (policy.ts) and the
// GGUF export read them through this module, so none of those needs tfjs.
//
// Parameter names:  policy.l<i>.weight [in, out], policy.l<i>.bias [out], policy.head.weight
// [H, actions], policy.head.bias [actions]; value.* likewise with value.head.weight [H, 1].
// Weights are row-major Float32 ([in, out]: element (i, o) at i * out + o).
import type { TrainRng } from './rng.ts';

export interface ParamSpec {
  name: string;
  shape: number[];
}

export interface NetShape {
  obsDim: number;
  hidden: readonly number[];
  actions: number;
}

/** Named Float32 tensors in layout order. */
export interface Params {
  specs: ParamSpec[];
  data: Float32Array[];
}

export function paramSpecs(s: NetShape): ParamSpec[] {
  const out: ParamSpec[] = [];
  for (const net of ['policy', 'value'] as const) {
    let inDim = s.obsDim;
    s.hidden.forEach((h, i) => {
      out.push({ name: `${net}.l${i}.weight`, shape: [inDim, h] }, { name: `${net}.l${i}.bias`, shape: [h] });
      inDim = h;
    });
    const heads = net === 'policy' ? s.actions : 1;
    out.push({ name: `${net}.head.weight`, shape: [inDim, heads] }, { name: `${net}.head.bias`, shape: [heads] });
  }
  return out;
}

export const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/**
 * Seeded initialisation: weights uniform in ±gain·√(6 / (in + out)) (Glorot), gain √2 for hidden
 * layers, 0.01 for the policy head (a near-uniform initial policy), 1 for the value head; biases 0.
 */
export function initParams(s: NetShape, rng: TrainRng): Params {
  const specs = paramSpecs(s);
  const data = specs.map((p) => {
    const a = new Float32Array(sizeOf(p.shape));
    if (p.shape.length === 2) {
      const [fanIn, fanOut] = p.shape as [number, number];
      const gain = p.name === 'policy.head.weight' ? 0.01 : p.name === 'value.head.weight' ? 1 : Math.SQRT2;
      const limit = gain * Math.sqrt(6 / (fanIn + fanOut));
      for (let i = 0; i < a.length; i++) a[i] = (2 * rng.next() - 1) * limit;
    }
    return a;
  });
  return { specs, data };
}

export function cloneParams(p: Params): Params {
  return { specs: p.specs.map((s) => ({ name: s.name, shape: [...s.shape] })), data: p.data.map((d) => d.slice()) };
}

function dense(
  x: Float64Array,
  w: Float32Array,
  b: Float32Array,
  outDim: number,
  tanh: boolean,
): Float64Array<ArrayBuffer> {
  const inDim = x.length;
  const y = new Float64Array(outDim);
  for (let o = 0; o < outDim; o++) y[o] = b[o]!;
  for (let i = 0; i < inDim; i++) {
    const xi = x[i]!;
    if (xi === 0) continue;
    const row = i * outDim;
    for (let o = 0; o < outDim; o++) y[o] = y[o]! + xi * w[row + o]!;
  }
  if (tanh) for (let o = 0; o < outDim; o++) y[o] = Math.tanh(y[o]!);
  return y;
}

/** Forward pass of one net ('policy' → logits, 'value' → [v]) on one observation. */
export function forwardNet(
  p: Params,
  net: 'policy' | 'value',
  obs: Float32Array,
  offset: number,
  obsDim: number,
): Float64Array {
  let x: Float64Array<ArrayBuffer> = new Float64Array(obsDim);
  for (let i = 0; i < obsDim; i++) x[i] = obs[offset + i]!;
  const base = net === 'policy' ? 0 : p.specs.length / 2;
  const layers = p.specs.length / 4;
  for (let l = 0; l < layers; l++) {
    const w = p.data[base + 2 * l]!;
    const spec = p.specs[base + 2 * l]!;
    x = dense(x, w, p.data[base + 2 * l + 1]!, spec.shape[1]!, l < layers - 1);
  }
  return x;
}

/** log-softmax of logits. */
export function logSoftmax(logits: Float64Array): Float64Array {
  let m = -Infinity;
  for (const v of logits) if (v > m) m = v;
  let z = 0;
  for (const v of logits) z += Math.exp(v - m);
  const lz = m + Math.log(z);
  return logits.map((v) => v - lz);
}

/** KL(p ‖ q) of two categorical distributions given as log-probabilities. */
export function categoricalKl(logp: Float64Array, logq: Float64Array): number {
  let kl = 0;
  for (let i = 0; i < logp.length; i++) kl += Math.exp(logp[i]!) * (logp[i]! - logq[i]!);
  return kl;
}

export function entropyOf(logp: Float64Array): number {
  let h = 0;
  for (const l of logp) h -= Math.exp(l) * l;
  return h;
}
