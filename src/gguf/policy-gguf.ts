// The built-in policy as GGUF content: what export_gguf writes to models/rc1-policy.gguf.
// Tensors: the policy net's named weights (policy.l<i>.weight [in, out], policy.l<i>.bias [out],
// policy.head.weight [H, actions], policy.head.bias [actions]) as F32; the value net is a training
// aid (PPO's baseline) and is not exported. Metadata (architecture "rc1-mlp-policy"):
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

export const POLICY_LAYOUT = 'row-major [in, out] weights (GGUF ne = [out, in]); x -> tanh(x W_i + b_i) per hidden layer, logits = h W_head + b_head over the actions; argmax or softmax sampling';

/** GGUF metadata and tensors of a loaded policy (policy net only). */
export function policyGgufContent(policy: Policy, info: PolicyGgufInfo): GgufContent {
  const tensors = policy.tensors().filter((t) => t.name.startsWith('policy.')).map((t) => ({ name: t.name, shape: [...t.shape], data: t.data }));
  const k = (key: string, value: GgufKv['value']): GgufKv => ({ key, value });
  const metadata: GgufKv[] = [
    k('general.architecture', { type: 'string', value: POLICY_ARCH }),
    k('general.name', { type: 'string', value: info.name }),
    k('general.alignment', { type: 'uint32', value: GGUF_ALIGNMENT }),
    k('general.file_type', { type: 'uint32', value: 0 }),
    k('general.description', { type: 'string', value: 'RC1 built-in dialogue-control policy: a tanh MLP over hand-built features of the request and the dialogue state, choosing ask / wiki / calc / answer each turn. Not a language model.' }),
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
