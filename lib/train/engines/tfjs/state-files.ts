// The files of a tfjs-engine checkpoint, and the in-memory snapshot they are written from:
//   model.json + model.bin   the policy and value weights (policy.ts: named Float32 tensors)
//   optimizer.bin            Adam's first moments m, then second moments v, in parameter order
//   reference.bin            the frozen reference policy's weights (same layout as model.bin)
//   checkpoint.json          (checkpoints.ts) step, config hash, file hashes and `state`: Adam's
//                            step count, the RNG state, the strategy's state (KL coefficient,
//                            sampler statistics / pair order)
// The engine snapshots all of it after every completed step, so an interrupt in the middle of a
// step can still checkpoint the last completed one exactly.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue } from 'rc1-build';
import type { NetShape, Params } from '../../mlp.ts';
import { readTensors, writeModelFiles } from '../../policy.ts';

export interface Snapshot {
  step: number;
  params: Params;
  m: Float32Array[];
  v: Float32Array[];
  adamT: number;
  rng: number;
  strategy: JsonValue;
}

export interface EngineState {
  adam_t: number;
  rng: number;
  strategy: JsonValue;
}

function toBin(arrays: readonly Float32Array[]): Buffer {
  const total = arrays.reduce((a, x) => a + x.length, 0);
  const buf = Buffer.alloc(total * 4);
  let off = 0;
  for (const a of arrays) {
    for (let k = 0; k < a.length; k++) buf.writeFloatLE(a[k]!, off + 4 * k);
    off += 4 * a.length;
  }
  return buf;
}

function layout(p: Params, times: number): { offset: number; length: number }[] {
  const out: { offset: number; length: number }[] = [];
  let off = 0;
  for (let r = 0; r < times; r++) {
    for (const d of p.data) {
      out.push({ offset: off, length: d.length });
      off += 4 * d.length;
    }
  }
  return out;
}

export async function writeStateFiles(
  dir: string,
  s: Snapshot,
  reference: Params,
  shape: NetShape,
  maxTurns: number,
): Promise<void> {
  await writeModelFiles(dir, shape, s.params, maxTurns);
  await writeFile(join(dir, 'optimizer.bin'), toBin([...s.m, ...s.v]));
  await writeFile(join(dir, 'reference.bin'), toBin(reference.data));
}

export function engineState(s: Snapshot): EngineState {
  return { adam_t: s.adamT, rng: s.rng, strategy: s.strategy };
}

/** Reads a checkpoint's weights, moments and reference (its layout must match `like`). */
export async function readStateFiles(
  dir: string,
  like: Params,
): Promise<{ params: Params; m: Float32Array[]; v: Float32Array[]; reference: Params }> {
  const specs = like.specs;
  const n = specs.length;
  const model = readTensors(await readFile(join(dir, 'model.bin')), layout(like, 1));
  const opt = readTensors(await readFile(join(dir, 'optimizer.bin')), layout(like, 2));
  const ref = readTensors(await readFile(join(dir, 'reference.bin')), layout(like, 1));
  return { params: { specs, data: model }, m: opt.slice(0, n), v: opt.slice(n), reference: { specs, data: ref } };
}

export function parseEngineState(state: JsonValue, where: string): EngineState {
  const o = state as Partial<EngineState> | null;
  if (!o || typeof o.adam_t !== 'number' || typeof o.rng !== 'number' || o.strategy === undefined) {
    throw new Error(`${where}: checkpoint.json state lacks adam_t, rng or strategy: not a tfjs-engine checkpoint`);
  }
  return o as EngineState;
}
