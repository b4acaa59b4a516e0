// The engine's file hasher: SHA-256 of a file's bytes, hex, exactly as `sha256sum` prints it.
// Every content hash in rc1-build (input fingerprints, output records, the stat cache, the
// manifest and its sidecars) comes from here.
//
// Why synchronous: the engine hashes many small files on the critical path of a no-op build and
// the occasional multi-GiB dataset or checkpoint. A loop of fs.readSync into one reused buffer is
// the fastest way Node has to feed node:crypto. fs.createReadStream + pipeline is often quoted as
// 20–30 % slower; bench/hash.ts measured worse here: 1.3–3× the time for a 1 GiB file and 17–28×
// for 2 KiB files (16 in flight), from a fresh buffer and an event-loop turn per chunk and the
// thread-pool hop of every async open/read/close.
//
// Why this buffer size and the small-file path (bench/hash.ts prints the sweep; Node 20 on a
// 2-core Xeon with SHA-NI): for a 1 GiB file, 256 KiB and 1 MiB buffers tie and 64 KiB is 1–4 %
// slower; the loop keeps pace with `openssl dgst -sha256` (~1.5 GB/s, ratio 1.04–1.09). For 2 KiB
// files the buffer size makes no difference beyond run-to-run noise, so 256 KiB, the smaller of
// the two fastest, is used. There the cost is per call, not per byte: filling the buffer first
// and, when the whole file fits, hashing it with one crypto.hash() call (no Hash object) is
// ~10–20 % faster than createHash/update/digest, and ~30 % faster than fstat + one exact-size
// read (a fresh buffer and one more syscall per file).
//
// Errors are those of open/read (ENOENT, EACCES, EISDIR …), thrown for the caller to turn into a
// diagnostic; the file descriptor is always closed.
import { createHash, hash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, type BigIntStats } from 'node:fs';

/** Bytes per read: see above (bench/hash.ts prints the sweep). */
const BUFFER_SIZE = 256 * 1024;

/** The one read buffer, allocated on first use. Safe to share: every use is synchronous. */
let sharedBuffer: Buffer | undefined;

function readBuffer(): Buffer {
  sharedBuffer ??= Buffer.allocUnsafeSlow(BUFFER_SIZE);
  return sharedBuffer;
}

interface Digest {
  sha256: string;
  size: number;
}

/**
 * Hashes an open file from its current position to EOF. Only bytes that were read are ever
 * hashed, so the uninitialised tail of the buffer never reaches the digest.
 */
function hashOpenFile(fd: number, keep = false): Digest & { bytes?: Buffer } {
  const buf = readBuffer();
  // Fill the buffer (a read may return less than asked, so loop) until it is full or EOF.
  let filled = 0;
  for (;;) {
    const n = readSync(fd, buf, filled, BUFFER_SIZE - filled, null);
    if (n === 0) break;
    filled += n;
    if (filled === BUFFER_SIZE) break;
  }
  if (filled < BUFFER_SIZE) {
    // EOF seen: the whole file is in the buffer; one-shot hash, no Hash object.
    const sha256 = hash('sha256', buf.subarray(0, filled), 'hex');
    return keep ? { sha256, size: filled, bytes: buf.subarray(0, filled) } : { sha256, size: filled };
  }
  const h = createHash('sha256');
  h.update(buf);
  let size = filled;
  for (;;) {
    const n = readSync(fd, buf, 0, BUFFER_SIZE, null);
    if (n === 0) break;
    h.update(n === BUFFER_SIZE ? buf : buf.subarray(0, n));
    size += n;
  }
  return { sha256: h.digest('hex'), size };
}

/** sha256 of a file's bytes, hex. Synchronous read loop into one reused buffer. */
export function hashFileSync(path: string): string {
  const fd = openSync(path, 'r');
  try {
    return hashOpenFile(fd).sha256;
  } finally {
    closeSync(fd);
  }
}

/**
 * sha256 of a file plus its size; also returns the fs.Stats (bigint) taken from the open fd
 * before reading, so callers can store (size, mtimeNs, ino, ctimeNs) for the same bytes they
 * hashed. `fsync`: also flush the file's data to disk (outputs before their commit).
 * `size` is the number of bytes hashed; if it differs from `stat.size` the file changed while
 * it was read, and the caller should not cache the result. `keepSmall`: a file that fit in the
 * read buffer (≤ 256 KiB) also comes back as `bytes`, the very bytes hashed, so the output cache
 * can store it without reading the file again. `bytes` is a view of the shared read buffer (no
 * copy): valid only until the next hash call of this thread, so use it at once.
 */
export function hashFileWithStatSync(
  path: string,
  opts: { fsync?: boolean; keepSmall?: boolean } = {},
): { sha256: string; size: number; stat: BigIntStats; bytes?: Buffer } {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd, { bigint: true });
    const { sha256, size, bytes } = hashOpenFile(fd, opts.keepSmall === true);
    // An output about to be committed: its bytes reach the disk before any name points at them.
    if (opts.fsync) fsyncSync(fd);
    return bytes ? { sha256, size, stat, bytes } : { sha256, size, stat };
  } finally {
    closeSync(fd);
  }
}

/** sha256 of a string (UTF-8) or buffer, hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}
