// State files (the trace, the stat cache, the resolved pipeline) parsed once per content in a
// process that opens the workspace again and again (the resident server, `watch`): a no-op there
// otherwise spends about half its time parsing 2 MB of JSON it parsed the command before.
// A parsed file is kept only from its second read in the process on (a one-command process keeps
// nothing and pays nothing), and only while the file is exactly the one it was parsed from: its
// identity — device, inode, size, mtime ns, ctime ns, taken from the open file before and after
// the read, equal — is compared on every later read. Any write gives the file a new identity (the
// engine replaces these files by rename, or appends), except an in-place rewrite of the same size
// within its timestamp tick: so a file modified within that tick of the read is not kept (as the
// stat cache's racy entries). The kept value is deeply frozen, so that no command can change what
// a later one reads; callers copy what they mutate (maps).
// An append-only file (the trace) that changed is read whole again, but when its first bytes are
// exactly the bytes the kept value was parsed from (same device and inode, a byte compare of the
// whole kept prefix), only the appended bytes are parsed, on top of the kept value
// (readParsedGrowing). Anything else — a shorter file, a rewrite, a new inode — is parsed whole.
import * as fs from 'node:fs';

/** Filesystems with nanosecond mtimes stamp with a coarse clock (one kernel tick, ≤ 10 ms). */
const RACY_NS = 100_000_000n;
/** Filesystems with whole-second (or 2 s) mtimes. */
const RACY_COARSE_NS = 2_000_000_000n;

interface Kept {
  id: string;
  value: unknown;
}

const kept = new Map<string, Kept>();
const readBefore = new Set<string>();

function identity(st: fs.BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** Modified long enough ago that a same-size rewrite in place would show in its mtime or ctime. */
function settled(st: fs.BigIntStats, nowNs: bigint): boolean {
  const window = st.mtimeNs % 1_000_000_000n === 0n ? RACY_COARSE_NS : RACY_NS;
  return st.mtimeNs + window <= nowNs && st.ctimeNs + window <= nowNs;
}

/** Freezes a JSON value and everything in it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The first read of `file` in this process: parsed, not kept (most files are read once). */
function firstRead<T>(file: string, parse: (text: string) => T): T | null {
  readBefore.add(file);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  return parse(text);
}

/**
 * The file's text as `parse` makes it, or null when the file cannot be read. `parse` may throw
 * (nothing is kept then). From the second read of `file` in this process on, the value is kept
 * (after `freeze`, which must freeze everything in it) and given back, the same object, for as
 * long as the file keeps its identity.
 */
export function readParsed<T>(file: string, parse: (text: string) => T, freeze: (value: T) => void): T | null {
  if (!readBefore.has(file)) return firstRead(file, parse);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    kept.delete(file);
    return null;
  }
  try {
    const before = fs.fstatSync(fd, { bigint: true });
    const id = identity(before);
    const k = kept.get(file);
    if (k !== undefined && k.id === id) return k.value as T;
    kept.delete(file);
    let text: string;
    try {
      text = fs.readFileSync(fd, 'utf8');
    } catch {
      return null;
    }
    const value = parse(text);
    const after = fs.fstatSync(fd, { bigint: true });
    if (identity(after) === id && settled(after, BigInt(Date.now()) * 1_000_000n)) {
      freeze(value);
      kept.set(file, { id, value });
    }
    return value;
  } finally {
    fs.closeSync(fd);
  }
}

interface KeptBytes {
  dev: bigint;
  ino: bigint;
  /** The identity the file had when `bytes` were read; null when it may not be trusted alone (not settled). */
  id: string | null;
  bytes: Buffer;
  value: unknown;
}

const keptGrowing = new Map<string, KeptBytes>();

/**
 * readParsed for a file that is only ever appended to, or replaced whole: the value as `parse`
 * makes it of the whole text. When the file changed since the kept value was parsed but its first
 * bytes are those very bytes (same device and inode, compared byte for byte), `extend(kept,
 * appended)` makes the value from the kept one and the appended text, without parsing the rest
 * again; it returns null when it cannot (the kept value ended mid-line, say), and the whole text
 * is parsed. `extend` must not change `kept` (it is frozen). Kept from the second read of `file`
 * on, as readParsed.
 */
export function readParsedGrowing<T>(
  file: string,
  parse: (text: string) => T,
  extend: (kept: T, appended: string) => T | null,
  freeze: (value: T) => void,
): T | null {
  if (!readBefore.has(file)) return firstRead(file, parse);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    keptGrowing.delete(file);
    return null;
  }
  try {
    const before = fs.fstatSync(fd, { bigint: true });
    const id = identity(before);
    const k = keptGrowing.get(file);
    if (k !== undefined && k.id === id) return k.value as T;
    keptGrowing.delete(file);
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(fd);
    } catch {
      return null;
    }
    let value: T | null = null;
    if (
      k !== undefined &&
      k.dev === before.dev &&
      k.ino === before.ino &&
      bytes.length >= k.bytes.length &&
      bytes.subarray(0, k.bytes.length).equals(k.bytes)
    )
      value =
        bytes.length === k.bytes.length ? (k.value as T) : extend(k.value as T, bytes.toString('utf8', k.bytes.length));
    value ??= parse(bytes.toString('utf8'));
    const after = fs.fstatSync(fd, { bigint: true });
    // The value is of exactly these bytes, whatever was written meanwhile: kept with them. Their
    // identity alone answers a later read only when the file was settled and unchanged during the read.
    freeze(value);
    const same = identity(after) === id && settled(after, BigInt(Date.now()) * 1_000_000n);
    keptGrowing.set(file, { dev: before.dev, ino: before.ino, id: same ? id : null, bytes, value });
    return value;
  } finally {
    fs.closeSync(fd);
  }
}

/** Forget every kept value (tests). */
export function forgetParsedState(): void {
  kept.clear();
  keptGrowing.clear();
  readBefore.clear();
}
