// The built-in policy as GGUF content: what export_gguf writes to models/rc1-policy.gguf.
// Tensors, F32, in ggml's convention for a matmul weight: ne[0] is the input dimension, so a layer
// with n_in inputs and n_out outputs is policy.l<i>.weight with ne = [n_in, n_out] and its data
// row-major [n_out][n_in] (the policy keeps [n_in][n_out]: the export transposes), and
// y = ggml_mul_mat(W, x) + b; policy.l<i>.bias and policy.head.bias have ne = [n_out]. The value
// net is a training aid (PPO's baseline) and is not exported. Metadata (architecture "rc1-mlp-policy"):
//   general.architecture, general.name, general.alignment (32), general.file_type (0: all F32),
//   general.description, rc1-mlp-policy.{obs_dim, hidden, actions, feature_names, activation,
//   max_turns, env, step, config_hash, layout}
// This is a dialogue-control MLP, not a language model: llama.cpp cannot run it; any GGUF reader
// (ggml's gguf.h, @huggingface/gguf, gguf-py) reads its tensors and the metadata that says how to
// compute a forward pass.
import type { Policy } from '../train/policy.ts';
import type { GgufContent, GgufKv } from './write-gguf.ts';
import { GGUF_ALIGNMENT } from './write-gguf.ts';

export const POLICY_ARCH = 'rc1-mlp-policy';

export interface PolicyGgufInfo {
  name: string;
  actions: readonly string[];
  featureNames: readonly string[];
  env: string;
  step: number;
  configHash: string;
}

export const POLICY_LAYOUT =
  'ggml: weight ne = [n_in, n_out] (ne[0] = input dimension), data row-major [n_out][n_in]; h = tanh(W_i x + b_i) per hidden layer (ggml_mul_mat(W_i, x)), logits = W_head h + b_head over the actions; argmax or softmax sampling';

/** [rows][cols] row-major → [cols][rows] row-major. */
function transpose(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

/** GGUF metadata and tensors of a loaded policy (policy net only), weights in ggml's orientation. */
export function policyGgufContent(policy: Policy, info: PolicyGgufInfo): GgufContent {
  // GgufTensor shapes are row-major (outermost first) and written reversed as ne: a weight stored
  // [n_out][n_in] is shape [n_out, n_in], ne = [n_in, n_out].
  const tensors = policy
    .tensors()
    .filter((t) => t.name.startsWith('policy.'))
    .map((t) => {
      if (t.shape.length !== 2) return { name: t.name, shape: [...t.shape], data: t.data };
      const [nIn, nOut] = t.shape as [number, number];
      return { name: t.name, shape: [nOut, nIn], data: transpose(t.data, nIn, nOut) };
    });
  const k = (key: string, value: GgufKv['value']): GgufKv => ({ key, value });
  const metadata: GgufKv[] = [
    k('general.architecture', { type: 'string', value: POLICY_ARCH }),
    k('general.name', { type: 'string', value: info.name }),
    k('general.alignment', { type: 'uint32', value: GGUF_ALIGNMENT }),
    k('general.file_type', { type: 'uint32', value: 0 }),
    k('general.description', {
      type: 'string',
      value:
        'RC1 built-in dialogue-control policy: a tanh MLP over hand-built features of the request and the dialogue state, choosing ask / wiki / calc / answer each turn. Not a language model.',
    }),
    k(`${POLICY_ARCH}.obs_dim`, { type: 'uint32', value: policy.shape.obsDim }),
    k(`${POLICY_ARCH}.hidden`, { type: 'array', itemType: 'uint32', value: [...policy.shape.hidden] }),
    k(`${POLICY_ARCH}.actions`, { type: 'array', itemType: 'string', value: [...info.actions] }),
    k(`${POLICY_ARCH}.feature_names`, { type: 'array', itemType: 'string', value: [...info.featureNames] }),
    k(`${POLICY_ARCH}.activation`, { type: 'string', value: 'tanh' }),
    k(`${POLICY_ARCH}.max_turns`, { type: 'uint32', value: policy.maxTurns }),
    k(`${POLICY_ARCH}.env`, { type: 'string', value: info.env }),
    k(`${POLICY_ARCH}.step`, { type: 'uint32', value: info.step }),
    k(`${POLICY_ARCH}.config_hash`, { type: 'string', value: info.configHash }),
    k(`${POLICY_ARCH}.layout`, { type: 'string', value: POLICY_LAYOUT }),
  ];
  return { metadata, tensors };
}
