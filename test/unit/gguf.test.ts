// The GGUF v3 writer, checked against an independent parser (@huggingface/gguf): metadata of every
// type, tensor infos, alignment and data bytes round-trip; the verifier catches a changed byte or
// value; the built-in policy exports in ggml's convention (ne[0] = a weight's input dimension) and
// a forward pass through the file as ggml computes it matches the policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  encodeGguf,
  ggmlForwardDifference,
  policyGgufContent,
  readGgmlPolicy,
  verifyGguf,
  writeGguf,
  type GgufContent,
} from '../../lib/gguf/index.ts';
import { initParams } from '../../lib/train/mlp.ts';
import { makePolicy } from '../../lib/train/policy.ts';
import { TrainRng } from '../../lib/train/rng.ts';

function content(): GgufContent {
  return {
    metadata: [
      { key: 'general.architecture', value: { type: 'string', value: 'rc1-test' } },
      { key: 'general.name', value: { type: 'string', value: 'tiny – ünïcode' } },
      { key: 'general.alignment', value: { type: 'uint32', value: 32 } },
      { key: 'rc1-test.i', value: { type: 'int32', value: -7 } },
      { key: 'rc1-test.f', value: { type: 'float32', value: 0.1 } },
      { key: 'rc1-test.b', value: { type: 'bool', value: true } },
      { key: 'rc1-test.u64', value: { type: 'uint64', value: 2n ** 40n } },
      { key: 'rc1-test.names', value: { type: 'array', itemType: 'string', value: ['ask', 'wiki', 'calc', 'answer'] } },
      { key: 'rc1-test.dims', value: { type: 'array', itemType: 'uint32', value: [3, 5] } },
      { key: 'rc1-test.scales', value: { type: 'array', itemType: 'float32', value: [0.5, -1.25, 1e-3] } },
    ],
    tensors: [
      { name: 'a.weight', shape: [3, 5], data: Float32Array.from({ length: 15 }, (_, i) => Math.sin(i) / 3) },
      { name: 'a.bias', shape: [5], data: new Float32Array([1, -0, Number.NaN, 1e-30, -3.5]) },
      { name: 'b.weight', shape: [2, 2, 2], data: Float32Array.from({ length: 8 }, (_, i) => i) },
    ],
  };
}

function tmpFile(name: string): { file: string; done: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-gguf-'));
  return { file: path.join(dir, name), done: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

test('a GGUF file round-trips through @huggingface/gguf: metadata of every type, tensor infos and data bytes', async () => {
  const t = tmpFile('t.gguf');
  try {
    const c = content();
    const layout = writeGguf(t.file, c);
    const v = await verifyGguf(t.file, c);
    assert.deepEqual(v.differences, []);
    assert.equal(v.ok, true);
    assert.equal(v.readBack.version, 3);
    assert.deepEqual(
      v.readBack.tensors.map((x) => [x.name, x.shape, x.dtype]),
      [
        ['a.weight', [5, 3], 0],
        ['a.bias', [5], 0],
        ['b.weight', [2, 2, 2], 0],
      ],
    );
    assert.equal(layout.tensorDataOffset % 32, 0);
    assert.ok(layout.tensors.every((x) => x.offset % 32 === 0));
    assert.equal(v.readBack.tensorDataOffset, layout.tensorDataOffset);
    const bytes = fs.readFileSync(t.file);
    assert.equal(bytes.subarray(0, 4).toString('ascii'), 'GGUF');
    assert.equal(bytes.readUInt32LE(4), 3);
    assert.equal(bytes.length % 32, 0, 'each tensor, the last included, is padded to the alignment');
  } finally {
    t.done();
  }
});

test('the same content always encodes to the same bytes', () => {
  assert.deepEqual(encodeGguf(content()).bytes, encodeGguf(content()).bytes);
});

test('the verifier reports a changed data byte, a changed value and a missing tensor', async () => {
  const t = tmpFile('t.gguf');
  try {
    const c = content();
    const layout = writeGguf(t.file, c);
    const bytes = fs.readFileSync(t.file);
    bytes[layout.tensorDataOffset + layout.tensors[2]!.offset + 9]! ^= 0xff;
    fs.writeFileSync(t.file, bytes);
    const v = await verifyGguf(t.file, c);
    assert.deepEqual(v.differences, ['tensor b.weight: data differs from byte 9 (value 2)']);

    writeGguf(t.file, c);
    const other = content();
    other.metadata[4] = { key: 'rc1-test.f', value: { type: 'float32', value: 0.2 } };
    other.tensors.push({ name: 'c', shape: [1], data: new Float32Array([1]) });
    const w = await verifyGguf(t.file, other);
    assert.ok(
      w.differences.includes('metadata rc1-test.f: 0.10000000149011612, expected 0.20000000298023224'),
      w.differences.join('\n'),
    );
    assert.ok(w.differences.includes('tensor c: missing'), w.differences.join('\n'));
    assert.ok(w.differences.includes('tensor_count 3, expected 4'), w.differences.join('\n'));
  } finally {
    t.done();
  }
});

test('the writer refuses content a reader could not trust', () => {
  const noAlign = content();
  noAlign.metadata.splice(2, 1);
  assert.throws(() => encodeGguf(noAlign), /general\.alignment = 32/);
  const dup = content();
  dup.metadata.push({ key: 'general.name', value: { type: 'string', value: 'x' } });
  assert.throws(() => encodeGguf(dup), /key written twice: general\.name/);
  const bad = content();
  bad.tensors[0]!.shape = [4, 5];
  assert.throws(() => encodeGguf(bad), /a\.weight: shape \[4, 5\] holds 20 values, data has 15/);
  const wide = content();
  wide.metadata.push({ key: 'x', value: { type: 'uint32', value: -1 } });
  assert.throws(() => encodeGguf(wide), /uint32 value out of range: -1/);
});

test("the built-in policy exports its policy net in ggml's convention (ne[0] = input dimension): multiplying through the file as ggml does gives the policy's log-probabilities", async () => {
  const t = tmpFile('policy.gguf');
  try {
    const shape = { obsDim: 19, hidden: [32, 16], actions: 4 };
    const policy = makePolicy(shape, initParams(shape, new TrainRng(3)), 6);
    const c = policyGgufContent(policy, {
      name: 'rc1-policy',
      actions: ['ask', 'wiki', 'calc', 'answer'],
      featureNames: Array.from({ length: 19 }, (_, i) => `f${i}`),
      env: 'simulated-dialogue-v1',
      step: 120,
      configHash: 'ab'.repeat(32),
    });
    assert.deepEqual(
      c.tensors.map((x) => x.name),
      [
        'policy.l0.weight',
        'policy.l0.bias',
        'policy.l1.weight',
        'policy.l1.bias',
        'policy.head.weight',
        'policy.head.bias',
      ],
    );
    writeGguf(t.file, c);
    const v = await verifyGguf(t.file, c);
    assert.deepEqual(v.differences, []);
    assert.deepEqual(v.readBack.tensors[0]!.shape, [19, 32], 'ggml: ne[0] is the input dimension of a matmul weight');
    assert.deepEqual(v.readBack.tensors[4]!.shape, [16, 4]);
    assert.ok(v.readBack.metadataKeys.includes('rc1-mlp-policy.feature_names'));
    const bytes = fs.readFileSync(t.file);
    const l0 = bytes.subarray(v.readBack.tensorDataOffset, v.readBack.tensorDataOffset + 19 * 32 * 4);
    assert.equal(
      l0.readFloatLE(4 * (5 * 19 + 2)),
      policy.params.data[0]![2 * 32 + 5],
      'element (i=2, o=5) sits at o * n_in + i',
    );

    // Multiply through the file's tensors as a ggml reader does (ggml_mul_mat: y[o] = Σ_i W[o·ne0 + i]·x[i], ne0 = n_in).
    const tensor = (name: string): { ne: number[]; data: Float32Array } => {
      const info = v.readBack.tensors.find((x) => x.name === name)!;
      const n = info.shape.reduce((a, b) => a * b, 1);
      const at = v.readBack.tensorDataOffset + info.offset;
      return { ne: info.shape, data: Float32Array.from({ length: n }, (_, k) => bytes.readFloatLE(at + 4 * k)) };
    };
    const rng = new TrainRng(11);
    for (let k = 0; k < 16; k++) {
      const obs = Float32Array.from({ length: 19 }, () => rng.next());
      let x = Array.from(obs);
      for (const [l, layer] of ['policy.l0', 'policy.l1', 'policy.head'].entries()) {
        const w = tensor(`${layer}.weight`);
        const b = tensor(`${layer}.bias`);
        const [ne0, ne1] = w.ne as [number, number];
        assert.equal(ne0, x.length, `${layer}.weight: ne[0] is the input dimension`);
        x = Array.from({ length: ne1 }, (_, o) => {
          let sum = b.data[o]!;
          for (let i = 0; i < ne0; i++) sum += w.data[o * ne0 + i]! * x[i]!;
          return l < 2 ? Math.tanh(sum) : sum;
        });
      }
      const lz = Math.log(x.reduce((acc, z) => acc + Math.exp(z), 0));
      const want = policy.logProbs(obs);
      x.forEach((z, a) =>
        assert.ok(
          Math.abs(z - lz - want[a]!) < 1e-9,
          `observation ${k}, action ${a}: ${z - lz} vs the policy's ${want[a]}`,
        ),
      );
    }
    assert.ok((await ggmlForwardDifference(t.file, policy, 16, 5)) < 1e-9, "the export rule's own check agrees");
  } finally {
    t.done();
  }
});

test('a policy file whose weights are stored the other way round (ne = [n_out, n_in]) is refused by the ggml-style reader', async () => {
  const t = tmpFile('transposed.gguf');
  try {
    const shape = { obsDim: 19, hidden: [32, 16], actions: 4 };
    const policy = makePolicy(shape, initParams(shape, new TrainRng(3)), 6);
    const c = policyGgufContent(policy, {
      name: 'rc1-policy',
      actions: ['ask', 'wiki', 'calc', 'answer'],
      featureNames: Array.from({ length: 19 }, (_, i) => `f${i}`),
      env: 'simulated-dialogue-v1',
      step: 1,
      configHash: 'ab'.repeat(32),
    });
    // The orientation this export used to write: the policy's [n_in][n_out] bytes as they are.
    const raw = new Map(policy.tensors().map((x) => [x.name, x]));
    const old = {
      ...c,
      tensors: c.tensors.map((x) => ({ ...x, shape: [...raw.get(x.name)!.shape], data: raw.get(x.name)!.data })),
    };
    writeGguf(t.file, old);
    await assert.rejects(
      readGgmlPolicy(t.file, 'rc1-mlp-policy'),
      /tensor policy\.l0\.weight has ne \[32, 19\], expected \[19, 32\] \(ggml: ne\[0\] = the input dimension of a matmul weight\)/,
    );
  } finally {
    t.done();
  }
});
