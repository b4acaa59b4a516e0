// The built-in policy's forward pass computed from a GGUF file the way a ggml reader computes it:
// tensors found by name through an independent parser (@huggingface/gguf), their F32 data read at
// tensor_data_offset + offset, and every dense layer as ggml_mul_mat(W, x) — W with
// ne = [n_in, n_out] (ne[0], the fastest-varying dimension, is the input dimension), its data
// row-major [n_out][n_in], so y[o] = Σ_i W[o·n_in + i] · x[i] — plus the bias, tanh between
// layers. export_gguf runs it on seeded observations and requires the log-probabilities to match
// the policy's own; a file written in another orientation fails here, at its first layer.
import { open } from 'node:fs/promises';
import { createRng } from 'rc1-build';
import type { Policy } from '../train/policy.ts';
import { POLICY_ARCH } from './policy-gguf.ts';
import { GGML_TYPE_F32 } from './write-gguf.ts';

export interface GgmlPolicy {
  /** Per layer, in order (hidden layers then the head): name, n_in, n_out, weight [n_out][n_in], bias [n_out]. */
  layers: { name: string; nIn: number; nOut: number; weight: Float32Array; bias: Float32Array }[];
  obsDim: number;
}

/** Reads the policy net of a GGUF file written by export_gguf, checking ggml's orientation layer by layer. */
export async function readGgmlPolicy(file: string, arch: string): Promise<GgmlPolicy> {
  // Imported where it is used, so importing a rule that reaches this module does not load the parser.
  const { gguf } = await import('@huggingface/gguf');
  const parsed = await gguf(file, { allowLocalFile: true });
  const meta = parsed.metadata as Record<string, unknown>;
  const obsDim = Number(meta[`${arch}.obs_dim`]);
  const hidden = (meta[`${arch}.hidden`] as unknown[]).map(Number);
  const infos = new Map(parsed.tensorInfos.map((t) => [t.name, t]));
  const fh = await open(file, 'r');
  const read = async (name: string, ne: number[]): Promise<Float32Array> => {
    const t = infos.get(name);
    if (!t) throw new Error(`${file}: tensor ${name} is missing`);
    const got = t.shape.map(Number);
    if (got.join(',') !== ne.join(','))
      throw new Error(
        `${file}: tensor ${name} has ne [${got.join(', ')}], expected [${ne.join(', ')}] (ggml: ne[0] = the input dimension of a matmul weight)`,
      );
    if (Number(t.dtype) !== GGML_TYPE_F32)
      throw new Error(`${file}: tensor ${name} is ggml type ${t.dtype}, expected F32`);
    const n = ne.reduce((a, b) => a * b, 1);
    const buf = Buffer.alloc(n * 4);
    await fh.read(buf, 0, buf.length, Number(parsed.tensorDataOffset + t.offset));
    const out = new Float32Array(n);
    for (let k = 0; k < n; k++) out[k] = buf.readFloatLE(4 * k);
    return out;
  };
  try {
    const layers: GgmlPolicy['layers'] = [];
    let nIn = obsDim;
    const names = [...hidden.map((_, i) => `policy.l${i}`), 'policy.head'];
    const actions = (meta[`${arch}.actions`] as unknown[]).length;
    for (const [i, name] of names.entries()) {
      const nOut = i < hidden.length ? hidden[i]! : actions;
      layers.push({
        name,
        nIn,
        nOut,
        weight: await read(`${name}.weight`, [nIn, nOut]),
        bias: await read(`${name}.bias`, [nOut]),
      });
      nIn = nOut;
    }
    return { layers, obsDim };
  } finally {
    await fh.close();
  }
}

/** Logits of one observation: y = W x + b per layer (ggml_mul_mat), tanh on every layer but the head. */
export function ggmlLogits(p: GgmlPolicy, obs: ArrayLike<number>): Float64Array {
  let x = Float64Array.from({ length: p.obsDim }, (_, i) => obs[i]!);
  for (const [l, layer] of p.layers.entries()) {
    const y = new Float64Array(layer.nOut);
    for (let o = 0; o < layer.nOut; o++) {
      let s = layer.bias[o]!;
      const row = o * layer.nIn;
      for (let i = 0; i < layer.nIn; i++) s += layer.weight[row + i]! * x[i]!;
      y[o] = l < p.layers.length - 1 ? Math.tanh(s) : s;
    }
    x = y;
  }
  return x;
}

/**
 * The largest |Δ log-probability| between the file's ggml-style forward pass and the policy's
 * own (policy.logProbs), over the zero observation and n − 1 seeded observations in [0, 1).
 */
export async function ggmlForwardDifference(file: string, policy: Policy, n: number, seed: number): Promise<number> {
  const g = await readGgmlPolicy(file, POLICY_ARCH);
  const rng = createRng(seed);
  let worst = 0;
  for (let k = 0; k < n; k++) {
    const obs = Float32Array.from({ length: policy.shape.obsDim }, () => (k === 0 ? 0 : rng.next()));
    const logits = ggmlLogits(g, obs);
    const m = Math.max(...logits);
    const lz = m + Math.log(logits.reduce((a, x) => a + Math.exp(x - m), 0));
    const want = policy.logProbs(obs);
    for (let a = 0; a < want.length; a++) worst = Math.max(worst, Math.abs(logits[a]! - lz - want[a]!));
  }
  return worst;
}
