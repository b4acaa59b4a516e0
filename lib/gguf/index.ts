// GGUF, imported by rules as 'rc1-build/gguf': a GGUF v3 writer for F32 tensors (the inference
// hand-off format of RC1: llama.cpp and ggml read GGUF) and a verifier that reads the file back with
// @huggingface/gguf and compares metadata, tensor infos and data bytes with what was written, and
// a forward pass through the file's tensors as ggml computes it (ggml-forward.ts).
export {
  encodeGguf,
  writeGguf,
  GGML_TYPE_F32,
  GGUF_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_TYPE,
  GGUF_VERSION,
  type GgufContent,
  type GgufKv,
  type GgufLayout,
  type GgufScalarType,
  type GgufTensor,
  type GgufValue,
} from './write-gguf.ts';
export { verifyGguf, GGUF_PARSER, type GgufReadBack, type GgufVerification } from './verify-gguf.ts';
export { policyGgufContent, POLICY_ARCH, POLICY_LAYOUT, type PolicyGgufInfo } from './policy-gguf.ts';
export { ggmlForwardDifference, ggmlLogits, readGgmlPolicy, type GgmlPolicy } from './ggml-forward.ts';
