// Reads a GGUF file back with an independent parser (@huggingface/gguf, from npm) and compares it
// with what was meant to be written: version 3, every metadata key with its value and GGUF type
// (array element types too), no key more or less, every tensor's name, ggml shape, type F32, and
// its data bytes, read from the file at tensorDataOffset + the offset the parser reports.
// Returns the list of differences (empty when the file round-trips), each one line:
//   tensor policy.l1.weight: shape [16, 64] read back as [64, 16]
import { open } from 'node:fs/promises';
import { GGML_TYPE_F32, GGUF_TYPE, GGUF_VERSION, type GgufContent, type GgufValue } from './write-gguf.ts';

export interface GgufReadBack {
  version: number;
  tensorDataOffset: number;
  tensors: { name: string; shape: number[]; dtype: number; offset: number }[];
  metadataKeys: string[];
}

export interface GgufVerification {
  ok: boolean;
  differences: string[];
  readBack: GgufReadBack;
  parser: string;
}

export const GGUF_PARSER = '@huggingface/gguf';

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));

function expectedTypes(v: GgufValue): { type: number; subType?: number } {
  return v.type === 'array' ? { type: GGUF_TYPE.array, subType: GGUF_TYPE[v.itemType] } : { type: GGUF_TYPE[v.type] };
}

/** The value as the parser returns it: float32 rounded, uint64 a bigint. */
function expectedValue(v: GgufValue): unknown {
  if (v.type === 'float32') return Math.fround(v.value);
  if (v.type === 'array' && v.itemType === 'float32') return (v.value as number[]).map((x) => Math.fround(x));
  return v.value;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
  return a === b;
}

/** Parses `file` with @huggingface/gguf and compares it with `expected`. */
export async function verifyGguf(file: string, expected: GgufContent): Promise<GgufVerification> {
  // Imported where it is used, so importing a rule that reaches this module does not load the parser.
  const { gguf, GGUFValueType } = await import('@huggingface/gguf');
  const parsed = await gguf(file, { allowLocalFile: true, typedMetadata: true });
  const diffs: string[] = [];
  const meta = parsed.typedMetadata as unknown as Record<string, { value: unknown; type: number; subType?: number }>;
  if (parsed.metadata.version !== GGUF_VERSION)
    diffs.push(`version ${parsed.metadata.version}, expected ${GGUF_VERSION}`);
  if (!parsed.littleEndian) diffs.push('read back as big-endian');
  if (parsed.metadata.kv_count !== BigInt(expected.metadata.length))
    diffs.push(`kv_count ${parsed.metadata.kv_count}, expected ${expected.metadata.length}`);
  if (parsed.metadata.tensor_count !== BigInt(expected.tensors.length))
    diffs.push(`tensor_count ${parsed.metadata.tensor_count}, expected ${expected.tensors.length}`);

  const header = new Set(['version', 'tensor_count', 'kv_count']);
  const wanted = new Set(expected.metadata.map((kv) => kv.key));
  for (const key of Object.keys(meta))
    if (!header.has(key) && !wanted.has(key)) diffs.push(`metadata ${key}: present in the file, not written`);
  for (const kv of expected.metadata) {
    const got = meta[kv.key];
    if (!got) {
      diffs.push(`metadata ${kv.key}: missing`);
      continue;
    }
    const t = expectedTypes(kv.value);
    if (got.type !== t.type || got.subType !== t.subType) {
      diffs.push(
        `metadata ${kv.key}: type ${GGUFValueType[got.type] ?? got.type}${got.subType !== undefined ? `[${GGUFValueType[got.subType] ?? got.subType}]` : ''}, expected ${kv.value.type}${kv.value.type === 'array' ? `[${kv.value.itemType}]` : ''}`,
      );
    }
    const want = expectedValue(kv.value);
    if (!sameValue(got.value, want))
      diffs.push(`metadata ${kv.key}: ${show(got.value).slice(0, 120)}, expected ${show(want).slice(0, 120)}`);
  }

  const dataStart = Number(parsed.tensorDataOffset);
  const infos = new Map(parsed.tensorInfos.map((t) => [t.name, t]));
  if (parsed.tensorInfos.length !== expected.tensors.length)
    diffs.push(`${parsed.tensorInfos.length} tensors read back, ${expected.tensors.length} written`);
  const fh = await open(file, 'r');
  try {
    for (const [i, t] of expected.tensors.entries()) {
      const info = infos.get(t.name);
      if (!info) {
        diffs.push(`tensor ${t.name}: missing`);
        continue;
      }
      if (parsed.tensorInfos[i]?.name !== t.name)
        diffs.push(`tensor ${t.name}: at position ${parsed.tensorInfos.indexOf(info)}, written at ${i}`);
      const ne = [...t.shape].reverse();
      const shape = info.shape.map(Number);
      if (!sameValue(shape, ne))
        diffs.push(`tensor ${t.name}: shape [${ne.join(', ')}] read back as [${shape.join(', ')}]`);
      if (Number(info.dtype) !== GGML_TYPE_F32)
        diffs.push(`tensor ${t.name}: ggml type ${info.dtype}, expected ${GGML_TYPE_F32} (F32)`);
      const offset = dataStart + Number(info.offset);
      const want = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      const got = Buffer.alloc(want.length);
      const { bytesRead } = await fh.read(got, 0, got.length, offset);
      if (bytesRead !== got.length)
        diffs.push(`tensor ${t.name}: ${bytesRead} of ${got.length} data bytes at offset ${offset}`);
      else if (!got.equals(want)) {
        let k = 0;
        while (k < got.length && got[k] === want[k]) k++;
        diffs.push(`tensor ${t.name}: data differs from byte ${k} (value ${Math.floor(k / 4)})`);
      }
    }
  } finally {
    await fh.close();
  }
  return {
    ok: diffs.length === 0,
    differences: diffs,
    parser: GGUF_PARSER,
    readBack: {
      version: parsed.metadata.version,
      tensorDataOffset: dataStart,
      tensors: parsed.tensorInfos.map((t) => ({
        name: t.name,
        shape: t.shape.map(Number),
        dtype: Number(t.dtype),
        offset: Number(t.offset),
      })),
      metadataKeys: Object.keys(meta).filter((k) => !header.has(k)),
    },
  };
}
