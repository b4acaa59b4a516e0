// A GGUF v3 writer (the llama.cpp / ggml container format, little-endian), for F32 tensors:
//   magic "GGUF" · version u32 = 3 · tensor_count u64 · kv_count u64
//   kv_count × (key: gguf string, value type u32, value)          gguf string = u64 length + UTF-8 bytes
//   tensor_count × (name: gguf string, n_dims u32, ne[n_dims] u64, ggml type u32 = 0 (F32), offset u64)
//   zero padding to `general.alignment` (written, always 32), then every tensor's data at its offset
//   (relative to the start of the data section, a multiple of the alignment), each padded with zeros
//   to the alignment.
// Shapes are given row-major ([rows, cols], as in the policy's weights) and written in ggml order,
// ne[0] the fastest-varying dimension (so [rows, cols] is written ne = [cols, rows]); the data bytes
// are the row-major float32 bytes copied unchanged (bit for bit, NaN payloads included), which is exactly ggml's layout for those ne. Same input, same
// bytes: keys and tensors are written in the order given, nothing depends on the clock.
import { writeFileSync } from 'node:fs';
import { endianness } from 'node:os';

export const GGUF_MAGIC = 'GGUF';
export const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;
/** ggml_type of 32-bit float tensors. */
export const GGML_TYPE_F32 = 0;

/** GGUF metadata value types (gguf.h enum gguf_type). */
export const GGUF_TYPE = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

export type GgufScalarType = 'uint32' | 'int32' | 'float32' | 'bool' | 'string' | 'uint64';
export type GgufValue =
  | { type: 'uint32' | 'int32' | 'float32'; value: number }
  | { type: 'uint64'; value: bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: 'uint32' | 'int32' | 'float32'; value: number[] }
  | { type: 'array'; itemType: 'string'; value: string[] };

export interface GgufKv {
  key: string;
  value: GgufValue;
}

export interface GgufTensor {
  name: string;
  /** Row-major shape, outermost first (e.g. [out, in] for a dense layer's weight). */
  shape: number[];
  data: Float32Array;
}

export interface GgufContent {
  metadata: GgufKv[];
  tensors: GgufTensor[];
}

/** Where each tensor landed: its ggml shape, offset in the data section and byte length. */
export interface GgufLayout {
  tensorDataOffset: number;
  tensors: { name: string; ne: number[]; offset: number; bytes: number }[];
  size: number;
}

const pad = (n: number, a: number): number => Math.ceil(n / a) * a;

/** A growable little-endian byte buffer. */
class Bytes {
  private buf = Buffer.alloc(4096);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }
  i32(v: number): void {
    this.room(4);
    this.buf.writeInt32LE(v, this.length);
    this.length += 4;
  }
  f32(v: number): void {
    this.room(4);
    this.buf.writeFloatLE(v, this.length);
    this.length += 4;
  }
  u64(v: bigint | number): void {
    this.room(8);
    this.buf.writeBigUInt64LE(BigInt(v), this.length);
    this.length += 8;
  }
  u8(v: number): void {
    this.room(1);
    this.buf.writeUInt8(v, this.length);
    this.length += 1;
  }
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.raw(b);
  }
  zeros(n: number): void {
    this.room(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  done(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function writeScalar(out: Bytes, type: 'uint32' | 'int32' | 'float32', v: number): void {
  if (type === 'uint32') {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`GGUF uint32 value out of range: ${v}`);
    out.u32(v);
  } else if (type === 'int32') {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff)
      throw new RangeError(`GGUF int32 value out of range: ${v}`);
    out.i32(v);
  } else {
    out.f32(v);
  }
}

function writeValue(out: Bytes, v: GgufValue): void {
  switch (v.type) {
    case 'uint32':
    case 'int32':
    case 'float32':
      out.u32(GGUF_TYPE[v.type]);
      writeScalar(out, v.type, v.value);
      return;
    case 'uint64':
      out.u32(GGUF_TYPE.uint64);
      out.u64(v.value);
      return;
    case 'bool':
      out.u32(GGUF_TYPE.bool);
      out.u8(v.value ? 1 : 0);
      return;
    case 'string':
      out.u32(GGUF_TYPE.string);
      out.str(v.value);
      return;
    case 'array':
      out.u32(GGUF_TYPE.array);
      out.u32(GGUF_TYPE[v.itemType]);
      out.u64(v.value.length);
      if (v.itemType === 'string') for (const s of v.value as string[]) out.str(s);
      else for (const x of v.value as number[]) writeScalar(out, v.itemType, x);
      return;
  }
}

/** Checks what a reader relies on: unique keys and names, general.alignment = 32, sizes that match. */
function validate(c: GgufContent): void {
  const keys = new Set<string>();
  for (const kv of c.metadata) {
    if (keys.has(kv.key)) throw new Error(`GGUF metadata key written twice: ${kv.key}`);
    keys.add(kv.key);
  }
  const alignment = c.metadata.find((kv) => kv.key === 'general.alignment');
  if (alignment?.value.type !== 'uint32' || alignment.value.value !== GGUF_ALIGNMENT) {
    throw new Error(`GGUF metadata must hold general.alignment = ${GGUF_ALIGNMENT} (uint32)`);
  }
  for (const k of ['general.architecture', 'general.name']) {
    const kv = c.metadata.find((x) => x.key === k);
    if (kv?.value.type !== 'string') throw new Error(`GGUF metadata must hold ${k} (string)`);
  }
  const names = new Set<string>();
  for (const t of c.tensors) {
    if (names.has(t.name)) throw new Error(`GGUF tensor written twice: ${t.name}`);
    names.add(t.name);
    if (Buffer.byteLength(t.name) > 63)
      throw new Error(`GGUF tensor name longer than 63 bytes (GGML_MAX_NAME): ${t.name}`);
    if (t.shape.length < 1 || t.shape.length > 4 || t.shape.some((d) => !Number.isInteger(d) || d < 1)) {
      throw new Error(`GGUF tensor ${t.name}: shape must be 1 to 4 positive integers, got [${t.shape.join(', ')}]`);
    }
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length)
      throw new Error(
        `GGUF tensor ${t.name}: shape [${t.shape.join(', ')}] holds ${n} values, data has ${t.data.length}`,
      );
  }
}

/** Encodes a GGUF v3 file; returns its bytes and where each tensor landed. */
export function encodeGguf(content: GgufContent): { bytes: Buffer; layout: GgufLayout } {
  if (endianness() !== 'LE')
    throw new Error('the GGUF writer copies float32 bytes as they lie in memory and needs a little-endian machine');
  validate(content);
  const out = new Bytes();
  out.raw(Buffer.from(GGUF_MAGIC, 'ascii'));
  out.u32(GGUF_VERSION);
  out.u64(content.tensors.length);
  out.u64(content.metadata.length);
  for (const kv of content.metadata) {
    out.str(kv.key);
    writeValue(out, kv.value);
  }
  const placed: GgufLayout['tensors'] = [];
  let offset = 0;
  for (const t of content.tensors) {
    const ne = [...t.shape].reverse();
    out.str(t.name);
    out.u32(ne.length);
    for (const d of ne) out.u64(d);
    out.u32(GGML_TYPE_F32);
    out.u64(offset);
    placed.push({ name: t.name, ne, offset, bytes: t.data.length * 4 });
    offset = pad(offset + t.data.length * 4, GGUF_ALIGNMENT);
  }
  const tensorDataOffset = pad(out.length, GGUF_ALIGNMENT);
  out.zeros(tensorDataOffset - out.length);
  for (const [i, t] of content.tensors.entries()) {
    const start = out.length - tensorDataOffset;
    if (start !== placed[i]!.offset)
      throw new Error(`internal error: GGUF tensor ${t.name} at ${start}, planned ${placed[i]!.offset}; please report`);
    out.raw(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    out.zeros(pad(out.length, GGUF_ALIGNMENT) - out.length);
  }
  const bytes = out.done();
  return { bytes, layout: { tensorDataOffset, tensors: placed, size: bytes.length } };
}

/** Writes a GGUF v3 file (see encodeGguf). */
export function writeGguf(file: string, content: GgufContent): GgufLayout {
  const { bytes, layout } = encodeGguf(content);
  writeFileSync(file, bytes);
  return layout;
}
