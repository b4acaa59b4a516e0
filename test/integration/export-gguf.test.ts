// export_gguf through the CLI after a short built-in training run (the one shared with the ppo_eval
// test: trainedPpoRig, built once per code version):
//   scenarios, weights --> train --> checkpoints/rc1/ --> export_gguf --> models/rc1-policy.gguf
// The file is read back here too, independently of the rule, with @huggingface/gguf: metadata,
// tensor names, ggml shapes (ne[0] = a weight's input dimension) and F32 data equal to the trained
// policy's weights in ggml's [n_out][n_in] order; the rule multiplied through them; the export is
// byte-identical when forced to run again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gguf } from '@huggingface/gguf';
import { loadPolicy } from '../../lib/train/policy.ts';
import { SHARED_RUN, trainedPpoRig } from './ppo-eval-rig.ts';

test('export_gguf writes the trained policy as GGUF v3 that @huggingface/gguf reads back tensor for tensor', async () => {
  const rig = await trainedPpoRig(SHARED_RUN);
  try {
    const r = rig.run(['export_gguf']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `models/rc1-policy\\.gguf: 6 tensors, \\d+ parameters, \\d+ bytes, from latest → step_${String(SHARED_RUN.steps).padStart(5, '0')} \\(step ${SHARED_RUN.steps}\\); verified by reading it back with @huggingface/gguf`,
      ),
    );
    const file = path.join(rig.dir, 'models/rc1-policy.gguf');
    const parsed = await gguf(file, { allowLocalFile: true });
    const meta = parsed.metadata as Record<string, unknown>;
    assert.equal(meta.version, 3);
    assert.equal(meta['general.architecture'], 'rc1-mlp-policy');
    assert.equal(meta['general.name'], 'rc1-policy');
    assert.equal(meta['general.alignment'], 32);
    assert.deepEqual(meta['rc1-mlp-policy.actions'], ['ask', 'wiki', 'calc', 'answer']);
    assert.equal(meta['rc1-mlp-policy.step'], SHARED_RUN.steps);
    const policy = await loadPolicy(path.join(rig.dir, 'checkpoints/rc1/latest'));
    const want = policy.tensors().filter((t) => t.name.startsWith('policy.'));
    assert.deepEqual(
      parsed.tensorInfos.map((t) => t.name),
      want.map((t) => t.name),
    );
    const bytes = fs.readFileSync(file);
    for (const [i, t] of parsed.tensorInfos.entries()) {
      const w = want[i]!;
      // ggml's convention: a weight the policy keeps [n_in][n_out] has ne = [n_in, n_out], its data [n_out][n_in].
      assert.deepEqual(t.shape.map(Number), w.shape, t.name);
      assert.equal(Number(t.dtype), 0, `${t.name} is F32`);
      const start = Number(parsed.tensorDataOffset + t.offset);
      const [nIn, nOut] = w.shape.length === 2 ? (w.shape as [number, number]) : [1, w.shape[0]!];
      for (let o = 0; o < nOut; o++) {
        for (let k = 0; k < nIn; k++)
          assert.equal(bytes.readFloatLE(start + 4 * (o * nIn + k)), w.data[k * nOut + o], `${t.name} (${k}, ${o})`);
      }
    }
    assert.match(
      rig.read('logs/export_gguf.log'),
      /forward pass through the file's tensors as ggml computes it \(y = W x \+ b, W ne = \[n_in, n_out\]\) on 64 seeded observations: max \|Δ log-prob\| vs the policy 0/,
    );
    const sha = createHash('sha256').update(bytes).digest('hex');
    assert.equal(rig.run(['--force', 'export_gguf']).code, 0);
    assert.equal(
      createHash('sha256').update(fs.readFileSync(file)).digest('hex'),
      sha,
      'the same checkpoint exports to the same bytes',
    );
  } finally {
    rig.cleanup();
  }
});
