// export_gguf (RC1 inference hand-off; docs/rc1.md: inference and offline eval on
// llama.cpp + GGUF): writes the built-in policy of the train target's `latest` checkpoint as a
// GGUF v3 file (policy net, F32, metadata that says how to run it: lib/gguf/policy-gguf.ts), then
// reads the file back with @huggingface/gguf and requires that every metadata key, value and type,
// every tensor's name, shape and type, and every tensor's data bytes (read at the offsets the
// parser reports) match what was written; then multiplies seeded observations through the file's
// tensors as ggml does (W with ne = [n_in, n_out], y = W x + b: rc1-build/gguf readGgmlPolicy) and
// requires the action log-probabilities to match the policy's own. Input group `checkpoints`: the
// train target (its checkpoints/rc1/ directory output). Output `model`: models/rc1-policy.gguf.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import { GGUF_PARSER, ggmlForwardDifference, policyGgufContent, verifyGguf, writeGguf } from '../lib/gguf/index.ts';
import { builtInCheckpoint, checkpointDirOf, loadPolicy, type ModelIndex } from '../lib/train/index.ts';

const OBSERVATIONS = 64;
const FORWARD_TOLERANCE = 1e-9;

export default defineRule({
  name: 'export_gguf',
  version: 1,
  async run(ctx) {
    const ckDir = checkpointDirOf(ctx.inputs('checkpoints'), ctx.target);
    const { dir, name, meta } = builtInCheckpoint(ckDir, 'latest', ctx.target);
    const index = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as ModelIndex;
    const policy = await loadPolicy(dir);
    const content = policyGgufContent(policy, {
      name: 'rc1-policy',
      actions: index.actions,
      featureNames: index.feature_names,
      env: index.env,
      step: meta.step,
      configHash: meta.config_hash,
    });
    const out = ctx.outputPath('model');
    const file = ctx.output('model');
    mkdirSync(dirname(file), { recursive: true });
    const layout = writeGguf(file, content);
    ctx.progress(1, 2, 'steps');
    const v = await verifyGguf(file, content);
    if (!v.ok)
      throw new RuleError(
        `${ctx.target}: ${out} does not read back as written (${GGUF_PARSER}):\n  ${v.differences.join('\n  ')}`,
      );
    const worst = await ggmlForwardDifference(file, policy, OBSERVATIONS, 20250820);
    if (!(worst <= FORWARD_TOLERANCE))
      throw new RuleError(
        `${ctx.target}: ${out}: a forward pass through its tensors as ggml multiplies them differs from the policy's by ${worst} in log-probability (tolerance ${FORWARD_TOLERANCE})`,
      );
    ctx.progress(2, 2, 'steps');
    const params = content.tensors.reduce((a, t) => a + t.data.length, 0);
    for (const t of v.readBack.tensors) ctx.log(`${t.name}: ne [${t.shape.join(', ')}] F32 at data offset ${t.offset}`);
    ctx.log(
      `read back by ${GGUF_PARSER}: GGUF v${v.readBack.version}, ${v.readBack.metadataKeys.length} metadata keys, tensor data at byte ${v.readBack.tensorDataOffset}; metadata, shapes, types and data bytes match`,
    );
    ctx.log(
      `forward pass through the file's tensors as ggml computes it (y = W x + b, W ne = [n_in, n_out]) on ${OBSERVATIONS} seeded observations: max |Δ log-prob| vs the policy ${worst}`,
    );
    return {
      summary: `${out}: ${content.tensors.length} tensors, ${params} parameters, ${layout.size} bytes, from ${name} (step ${meta.step}); verified by reading it back with ${GGUF_PARSER}`,
    };
  },
});
