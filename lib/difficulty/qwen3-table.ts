// Qwen3's byte-level BPE as a compact table (the tokenizer_table target, docs/rc1.md), so a thread that
// counts tokens need not load the tokenizer package (≈0.6 s and ~50 MB of heap per thread: JSON of
// the 11 MB tokenizer.json, a 151 643-entry vocabulary Map, the merge list). The table holds what
// counting uses, in vocabulary ids: the id of each of the 256 bytes (the ByteLevel stage maps a
// piece's UTF-8 bytes to one symbol each), and per merge rank the pair it joins and the id it makes;
// plus the added tokens, the split regex and the normaliser's name. It is derived from the loaded
// package (whose probe ids are checked at load) and written only when the package's pipeline is the
// one it encodes (NFC, Qwen3's split regex, ByteLevel without prefix space or regex, plain BPE) and
// its counts equal encode() on the self-check strings and its ids the published probe ids; otherwise
// the table says so and its readers count with the package (loadQwen3), as before.
// Counting from the table is sentenceCounter (lib/difficulty/qwen3-tokens.ts) over this BPE: the
// same pieces, merged in the same order (lowest rank first, the leftmost of equal ones). A text
// holding an added token, a piece the table cannot merge (a merge result outside the vocabulary),
// a piece longer than QWEN3_MAX_PIECE_BYTES or a gap in the split takes the package's own path:
// the counter throws NeedsQwen3Package until a package counter is attached (attachPackage), and
// then hands such texts to it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import {
  QWEN3_MAX_PIECE_BYTES,
  QWEN3_PROBES,
  QWEN3_SELF_CHECK,
  QWEN3_SELF_CHECK_COUNTS,
  QWEN3_SPLIT,
  QWEN3_TOKENIZER_SHA256,
  escapeRe,
  loadQwen3,
  memoCount,
  sentenceCounter,
  type PackageTokenizer,
  type Qwen3Counter,
} from './qwen3-tokens.ts';

const MAGIC = 'RC1-QWEN3-BPE\n';
const LITTLE_ENDIAN = endianness() === 'LE';
/** The table file's format version (in its header). 2: the header holds the payload's sha256. */
export const QWEN3_TABLE_FORMAT = 2;

/** The table's JSON header. */
export interface Qwen3TableHeader {
  format: number;
  /** false: the package's pipeline is not the one the table encodes; count with the package. */
  usable: boolean;
  /** Why the table is not usable (usable: false). */
  reason?: string;
  /** The byte order of the Int32 arrays that follow. */
  endianness: 'LE';
  normalizer: 'NFC';
  split: string;
  /** Merge ranks (the length of the merge array / 3). */
  merges: number;
  added: { content: string; id: number }[];
  /** The sha256 (hex) of the Int32 payload (byteIds, then merges, little-endian); written by encodeQwen3Table, checked by readQwen3Table. */
  sha256?: string;
}

export interface Qwen3Table {
  header: Qwen3TableHeader;
  /** Vocabulary id of each byte 0..255. */
  byteIds: Int32Array;
  /** Per rank r: [3r] left id, [3r + 1] right id (-1 -1: a merge no vocabulary pair can meet), [3r + 2] the merged id (-1: not in the vocabulary). */
  merges: Int32Array;
}

/** Thrown by a table counter for a text only the package counts exactly (see attachPackage). */
export class NeedsQwen3Package extends Error {
  constructor() {
    super(
      'this text needs the Qwen3 tokenizer package (an added token, a piece the BPE table cannot merge, or one longer than QWEN3_MAX_PIECE_BYTES)',
    );
    this.name = 'NeedsQwen3Package';
  }
}

export interface Qwen3TableCounter extends Qwen3Counter {
  /** Loads the package (loadQwen3) for the texts the table does not count; idempotent. */
  attachPackage(): Promise<void>;
}

/** Derives the table from the loaded package tokenizer; usable: false (with the reason) where its pipeline is not the one the table encodes. */
export function qwen3TableOf(tok: PackageTokenizer): Qwen3Table {
  const stages = tok.pre_tokenizer.tokenizers;
  const split = stages?.[0]?.pattern;
  const byteLevel = stages?.[1];
  const m = tok.model;
  if (tok.normalizer?.config?.type !== 'NFC') return unusableTable('the normaliser is not NFC');
  if (stages?.length !== 2 || !(split instanceof RegExp) || split.source !== QWEN3_SPLIT || split.flags !== 'gu')
    return unusableTable("the pre-tokenizer is not Qwen3's split regex followed by ByteLevel");
  const bl = byteLevel?.config as { type?: unknown; add_prefix_space?: unknown; use_regex?: unknown } | undefined;
  const byteEncoder = byteLevel?.byte_encoder as Record<number, string> | undefined;
  if (bl?.type !== 'ByteLevel' || bl.add_prefix_space !== false || bl.use_regex !== false || !byteEncoder)
    return unusableTable('the ByteLevel stage adds a prefix space or splits by its own regex');
  const { merges, tokens_to_ids: vocab } = m;
  if (
    !Array.isArray(merges) ||
    !(vocab instanceof Map) ||
    m.byte_fallback !== false ||
    m.ignore_merges !== false ||
    (m.end_of_word_suffix ?? '') !== '' ||
    (m.continuing_subword_suffix ?? '') !== ''
  )
    return unusableTable('the model is not a plain byte-level BPE');
  const ids = vocab as Map<string, number>;
  const added = tok.added_tokens.map((t) => ({ content: t.content, id: t.id ?? ids.get(t.content) ?? -1 }));
  if (added.some((t) => t.id < 0)) return unusableTable('an added token has no id');
  return tableOf(ids, (b) => byteEncoder[b] ?? '', merges as unknown[], added);
}

/** A table that says why it cannot be used (its readers count with the package instead). */
function unusableTable(reason: string): Qwen3Table {
  return {
    header: {
      format: QWEN3_TABLE_FORMAT,
      usable: false,
      reason,
      endianness: 'LE',
      normalizer: 'NFC',
      split: QWEN3_SPLIT,
      merges: 0,
      added: [],
    },
    byteIds: new Int32Array(256),
    merges: new Int32Array(0),
  };
}

/**
 * The table of a byte-level BPE, from its token ids (`ids`), the vocabulary symbol of each byte
 * and its merges in rank order: qwen3TableOf (the loaded package) and qwen3TableFromJson (the JSON)
 * differ only in where the ids come from.
 */
function tableOf(
  ids: { get(token: string): number | undefined },
  byteSymbol: (b: number) => string,
  merges: unknown[],
  added: { content: string; id: number }[],
): Qwen3Table {
  const byteIds = new Int32Array(256);
  for (let b = 0; b < 256; b++) {
    const id = ids.get(byteSymbol(b));
    if (id === undefined) return unusableTable(`byte ${b} has no vocabulary id`);
    byteIds[b] = id;
  }
  const table = new Int32Array(3 * merges.length);
  for (let r = 0; r < merges.length; r++) {
    const pair = merges[r];
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string')
      return unusableTable(`merge ${r} is not a pair of strings`);
    const a = ids.get(pair[0]);
    const b = ids.get(pair[1]);
    table[3 * r] = a === undefined || b === undefined ? -1 : a;
    table[3 * r + 1] = a === undefined || b === undefined ? -1 : b;
    table[3 * r + 2] = ids.get(pair[0] + pair[1]) ?? -1;
  }
  return {
    header: {
      format: QWEN3_TABLE_FORMAT,
      usable: true,
      endianness: 'LE',
      normalizer: 'NFC',
      split: QWEN3_SPLIT,
      merges: merges.length,
      added,
    },
    byteIds,
    merges: table,
  };
}

/** tokenizer.json's split pattern of the Qwen2/Qwen3 tokenizers (HF syntax; the package compiles it to QWEN3_SPLIT). */
export const QWEN3_HF_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** GPT-2's byte-to-symbol map of byte-level BPE (the ByteLevel stage): printable bytes stand for themselves, the rest for U+0100 on. */
function byteSymbols(): string[] {
  const printable = (b: number): boolean =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let next = 0;
  for (let b = 0; b < 256; b++) out.push(String.fromCharCode(printable(b) ? b : 256 + next++));
  return out;
}

interface TokenizerJson {
  normalizer?: { type?: unknown } | null;
  pre_tokenizer?: { type?: unknown; pretokenizers?: Record<string, unknown>[] } | null;
  model?: {
    type?: unknown;
    vocab?: unknown;
    merges?: unknown;
    byte_fallback?: unknown;
    ignore_merges?: unknown;
    dropout?: unknown;
    continuing_subword_prefix?: unknown;
    end_of_word_suffix?: unknown;
  };
  added_tokens?: { content?: unknown; id?: unknown }[];
}

/**
 * The same table derived from tokenizer.json itself (no package load: its JSON only), for the
 * pipeline the table encodes: NFC, the Qwen2/Qwen3 split pattern, ByteLevel without prefix space
 * or regex, a plain BPE; the vocabulary ids are the package's (the vocabulary, then the added
 * tokens). Byte for byte qwen3TableOf() of the package built from the same file (a test checks it).
 */
export function qwen3TableFromJson(json: TokenizerJson): Qwen3Table {
  if (json.normalizer?.type !== 'NFC') return unusableTable('the normaliser is not NFC');
  const stages = json.pre_tokenizer?.type === 'Sequence' ? json.pre_tokenizer.pretokenizers : undefined;
  const [splitStage, byteStage] = stages ?? [];
  const pattern = (splitStage?.pattern as { Regex?: unknown } | undefined)?.Regex;
  if (
    stages?.length !== 2 ||
    splitStage?.type !== 'Split' ||
    pattern !== QWEN3_HF_SPLIT ||
    splitStage.behavior !== 'Isolated' ||
    splitStage.invert !== false
  )
    return unusableTable("the pre-tokenizer is not Qwen3's split regex followed by ByteLevel");
  if (byteStage?.type !== 'ByteLevel' || byteStage.add_prefix_space !== false || byteStage.use_regex !== false)
    return unusableTable('the ByteLevel stage adds a prefix space or splits by its own regex');
  const m = json.model;
  if (
    m?.type !== 'BPE' ||
    m.byte_fallback !== false ||
    m.ignore_merges !== false ||
    (m.dropout ?? null) !== null ||
    (m.end_of_word_suffix ?? '') !== '' ||
    (m.continuing_subword_prefix ?? '') !== '' ||
    typeof m.vocab !== 'object' ||
    m.vocab === null ||
    !Array.isArray(m.merges)
  )
    return unusableTable('the model is not a plain byte-level BPE');
  // Ids as the package's tokens_to_ids gives them: the added tokens', then the vocabulary's (looked
  // up in the parsed object: building a 151 643-entry Map would cost more than every look-up here).
  const vocab = m.vocab as Record<string, unknown>;
  const addedIds = new Map<string, number>();
  const added: { content: string; id: number }[] = [];
  for (const t of json.added_tokens ?? []) {
    if (typeof t.content !== 'string' || typeof t.id !== 'number')
      return unusableTable('an added token has no content or id');
    added.push({ content: t.content, id: t.id });
    addedIds.set(t.content, t.id);
  }
  const ids = {
    get(token: string): number | undefined {
      const a = addedIds.get(token);
      if (a !== undefined) return a;
      // One look-up: a name the vocabulary lacks finds Object.prototype's members, none of them a number.
      const id = vocab[token];
      return typeof id === 'number' ? id : undefined;
    },
  };
  const symbols = byteSymbols();
  return tableOf(ids, (b) => symbols[b]!, m.merges as unknown[], added);
}

/**
 * Refuses a tokenizer.json (its bytes; where: how to name it) that is not the pinned Qwen3 file: the
 * self-check counts and probe ids the table is checked against are pinned for that file, so a
 * package upgrade (or a change of the file in place) must re-check them before the pin moves.
 */
export function checkPinnedTokenizer(bytes: Uint8Array, where: string): void {
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== QWEN3_TOKENIZER_SHA256)
    throw new Error(
      `${where} is not the pinned Qwen3 tokenizer.json (its sha256 is ${sha}, expected ${QWEN3_TOKENIZER_SHA256}, ` +
        'the file published with the Qwen3 models): re-check QWEN3_SELF_CHECK_COUNTS and QWEN3_PROBES against ' +
        "the package's encode() (test/integration/difficulty-qwen3.test.ts), then update QWEN3_TOKENIZER_SHA256 " +
        'in lib/difficulty/qwen3-tokens.ts',
    );
}

/**
 * Checks a usable table on its own: its ids are the published probe ids and its counts of the
 * self-check strings are the ones encode() gives (QWEN3_SELF_CHECK_COUNTS, pinned; a test compares
 * them with the package). Returns what differs (empty: none).
 */
export function checkTable(table: Qwen3Table): string[] {
  const bpe = tableBpe(table);
  return [...probeProblems(table, bpe), ...selfCheckProblems(table, bpe)];
}

/** Where the table's counts of the self-check strings differ from the pinned QWEN3_SELF_CHECK_COUNTS (encode()'s). */
function selfCheckProblems(table: Qwen3Table, bpe: (piece: string, ids?: number[]) => number): string[] {
  const problems: string[] = [];
  const counter = tableCounter(table, undefined, bpe);
  QWEN3_SELF_CHECK.forEach((s, i) => {
    let got: number | string;
    try {
      got = counter.count(s);
    } catch (e) {
      got = (e as Error).message;
    }
    if (got !== QWEN3_SELF_CHECK_COUNTS[i])
      problems.push(`${JSON.stringify(s)}: the table counts ${got}, Qwen3 ${QWEN3_SELF_CHECK_COUNTS[i]}`);
  });
  return problems;
}

/**
 * Checks a usable table against the package it came from: its count equals encode() on the
 * self-check strings and the probes, and its ids are the published probe ids. Returns what differs
 * (empty: none).
 */
export function checkTableAgainst(table: Qwen3Table, tok: PackageTokenizer): string[] {
  const bpe = tableBpe(table);
  const problems = probeProblems(table, bpe);
  const counter = tableCounter(table, tok, bpe);
  for (const s of [...QWEN3_SELF_CHECK, ...QWEN3_PROBES.map((p) => p.text)]) {
    const want = tok.encode(s, { add_special_tokens: false }).length;
    let got: number | string;
    try {
      got = counter.count(s);
    } catch (e) {
      got = (e as Error).message;
    }
    if (got !== want) problems.push(`${JSON.stringify(s)}: the table counts ${got}, encode() ${want}`);
  }
  return problems;
}

/**
 * The table as a file: magic, a 4-byte header length, the JSON header (with the payload's sha256,
 * last), padding to 4, then the payload: byteIds and merges (Int32, little-endian).
 */
export function encodeQwen3Table(t: Qwen3Table): Buffer {
  const payload = Buffer.concat([ints(t.byteIds), ints(t.merges)]);
  const { sha256: _, ...fields } = t.header;
  const sha256 = createHash('sha256').update(payload).digest('hex');
  const header = Buffer.from(JSON.stringify({ ...fields, sha256 }), 'utf8');
  const head = Buffer.alloc(MAGIC.length + 4);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(header.length, MAGIC.length);
  const pad = Buffer.alloc((4 - ((head.length + header.length) % 4)) % 4, 0x20);
  return Buffer.concat([head, header, pad, payload]);
}

/** An Int32Array's bytes, little-endian. */
function ints(a: Int32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const b = Buffer.alloc(a.length * 4);
  for (let i = 0; i < a.length; i++) b.writeInt32LE(a[i]!, 4 * i);
  return b;
}

/** What is wrong with a header's fields (null: nothing): each field as encodeQwen3Table writes it. */
function headerProblem(h: Record<string, unknown>): string | null {
  if (h.format !== QWEN3_TABLE_FORMAT) return `format ${JSON.stringify(h.format)}, expected ${QWEN3_TABLE_FORMAT}`;
  if (typeof h.usable !== 'boolean')
    return `header field usable is ${JSON.stringify(h.usable)}, expected true or false`;
  if (h.reason !== undefined && typeof h.reason !== 'string')
    return `header field reason is ${JSON.stringify(h.reason)}, expected a string`;
  if (h.endianness !== 'LE') return `header field endianness is ${JSON.stringify(h.endianness)}, expected "LE"`;
  if (h.normalizer !== 'NFC') return `header field normalizer is ${JSON.stringify(h.normalizer)}, expected "NFC"`;
  if (h.split !== QWEN3_SPLIT) return "header field split is not Qwen3's split regex";
  if (!Number.isInteger(h.merges) || (h.merges as number) < 0)
    return `header field merges is ${JSON.stringify(h.merges)}, expected an integer >= 0`;
  if (!Array.isArray(h.added)) return 'header field added is not a list';
  const i = h.added.findIndex(
    (a: unknown) =>
      typeof a !== 'object' ||
      a === null ||
      typeof (a as { content?: unknown }).content !== 'string' ||
      !Number.isInteger((a as { id?: unknown }).id),
  );
  if (i >= 0)
    return `header field added[${i}] is ${JSON.stringify(h.added[i])}, expected {"content": a string, "id": an integer}`;
  if (typeof h.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(h.sha256))
    return `header field sha256 is ${JSON.stringify(h.sha256)}, expected 64 hex digits`;
  return null;
}

/**
 * Reads a table file (encodeQwen3Table); a clear error naming the file where it is not one: its
 * magic, its header's fields, its length and its payload's sha256 are checked.
 */
export function readQwen3Table(file: string): Qwen3Table {
  const buf = readFileSync(file);
  const bad = (why: string): Error =>
    new Error(`${file}: not a Qwen3 BPE table (${why}); rebuild it: rc1-build tokenizer_table --force`);
  if (buf.length < MAGIC.length + 4 || buf.toString('latin1', 0, MAGIC.length) !== MAGIC) return throwIt(bad('magic'));
  const len = buf.readUInt32LE(MAGIC.length);
  let header: Qwen3TableHeader;
  try {
    header = JSON.parse(buf.toString('utf8', MAGIC.length + 4, MAGIC.length + 4 + len)) as Qwen3TableHeader;
  } catch {
    return throwIt(bad('header is not JSON'));
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    return throwIt(bad('header is not a JSON object'));
  const problem = headerProblem(header as unknown as Record<string, unknown>);
  if (problem !== null) throw bad(problem);
  let at = MAGIC.length + 4 + len;
  at += (4 - (at % 4)) % 4;
  const want = at + 4 * (256 + 3 * header.merges);
  if (buf.length !== want) throw bad(`${buf.length} bytes, the header implies ${want}`);
  const sha256 = createHash('sha256').update(buf.subarray(at)).digest('hex');
  if (sha256 !== header.sha256)
    throw bad(`the payload's sha256 is ${sha256}, the header says ${header.sha256}: the file is damaged`);
  const ints = (from: number, n: number): Int32Array => {
    // A copy of the bytes is 4-aligned; on a little-endian host it is the array as it is.
    if (LITTLE_ENDIAN) return new Int32Array(buf.buffer.slice(buf.byteOffset + from, buf.byteOffset + from + 4 * n));
    const a = new Int32Array(n);
    for (let i = 0; i < n; i++) a[i] = buf.readInt32LE(from + 4 * i);
    return a;
  };
  return { header, byteIds: ints(at, 256), merges: ints(at + 1024, 3 * header.merges) };
}

function throwIt(e: Error): never {
  throw e;
}

/** BPE over the table: a piece's token ids (or count), merging the lowest rank first, the leftmost of equal ones. */
function tableBpe(t: Qwen3Table): (piece: string, ids?: number[]) => number {
  const { byteIds, merges } = t;
  const ranks = merges.length / 3;
  let size = 1;
  while (size < 2 * ranks + 2) size *= 2;
  const mask = size - 1;
  const left = new Int32Array(size).fill(-1);
  const right = new Int32Array(size);
  const rankAt = new Int32Array(size);
  const slot = (a: number, b: number): number => {
    let i = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) & mask;
    while (left[i] !== -1 && (left[i] !== a || right[i] !== b)) i = (i + 1) & mask;
    return i;
  };
  for (let r = 0; r < ranks; r++) {
    const a = merges[3 * r]!;
    if (a === -1) continue;
    const b = merges[3 * r + 1]!;
    // A pair listed twice takes its LAST rank, as the package's bpe_ranks (a Map built from the
    // merge list in order) does: a later entry overwrites an earlier one.
    const i = slot(a, b);
    left[i] = a;
    right[i] = b;
    rankAt[i] = r;
  }
  const encoder = new TextEncoder();
  let bytes = new Uint8Array(256);
  const sym: number[] = [];
  return (piece: string, ids?: number[]): number => {
    if (bytes.length < 3 * piece.length) bytes = new Uint8Array(3 * piece.length);
    const { written } = encoder.encodeInto(piece, bytes);
    // Quadratic in the piece's length: a long piece is the package's (QWEN3_MAX_PIECE_BYTES).
    if (written > QWEN3_MAX_PIECE_BYTES) return -1;
    sym.length = 0;
    for (let i = 0; i < written; i++) sym.push(byteIds[bytes[i]!]!);
    let n = sym.length;
    while (n > 1) {
      let best = Infinity;
      let at = -1;
      for (let i = 0; i + 1 < n; i++) {
        const k = slot(sym[i]!, sym[i + 1]!);
        if (left[k] !== -1 && rankAt[k]! < best) {
          best = rankAt[k]!;
          at = i;
        }
      }
      if (at < 0) break;
      const id = merges[3 * best + 2]!;
      if (id === -1) return -1;
      sym[at] = id;
      sym.splice(at + 1, 1);
      n -= 1;
    }
    if (ids) ids.push(...sym);
    return n;
  };
}

/** Token ids of a text by the table (added tokens as their ids, the rest by NFC, split and BPE); null where the table cannot tell. */
function tableIds(t: Qwen3Table, bpe: (piece: string, ids?: number[]) => number, text: string): number[] | null {
  const split = new RegExp(t.header.split, 'gu');
  const out: number[] = [];
  const plain = (s: string): boolean => {
    for (const p of s.normalize('NFC').match(split) ?? []) if (bpe(p, out) < 0) return false;
    return true;
  };
  if (t.header.added.length === 0) return plain(text) ? out : null;
  const byContent = new Map(t.header.added.map((a) => [a.content, a.id]));
  const re = new RegExp(t.header.added.map((a) => escapeRe(a.content)).join('|'), 'g');
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (!plain(text.slice(last, m.index))) return null;
    out.push(byContent.get(m[0])!);
    last = m.index + m[0].length;
  }
  return plain(text.slice(last)) ? out : null;
}

/** Where the table's ids differ from the published probe ids. */
function probeProblems(t: Qwen3Table, bpe = tableBpe(t)): string[] {
  return QWEN3_PROBES.flatMap((p) => {
    const got = tableIds(t, bpe, p.text);
    return JSON.stringify(got) === JSON.stringify(p.ids)
      ? []
      : [`${JSON.stringify(p.text)} gave ${JSON.stringify(got)}, Qwen3 gives ${JSON.stringify(p.ids)}`];
  });
}

/** A counter over a usable table; tok: the package tokenizer for the texts the table does not count (else attachPackage()). */
function tableCounter(t: Qwen3Table, tok?: PackageTokenizer, bpe = tableBpe(t)): Qwen3TableCounter {
  /** The package's count, for the texts the table does not count: encode() of tok where given, else loadQwen3()'s once attached. */
  let pkg: ((text: string) => number) | undefined = tok
    ? (text) => tok.encode(text, { add_special_tokens: false }).length
    : undefined;
  const whole = (text: string): number => {
    if (pkg === undefined) throw new NeedsQwen3Package();
    return pkg(text);
  };
  const count = sentenceCounter({
    special:
      t.header.added.length === 0 ? /(?!)/ : new RegExp(t.header.added.map((a) => escapeRe(a.content)).join('|')),
    normalize: (text) => text.normalize('NFC'),
    split: new RegExp(t.header.split, 'gu'),
    bySentence: t.header.split === QWEN3_SPLIT,
    piece: (p) => bpe(p),
    whole,
  });
  return {
    count,
    countRecurring: memoCount(count),
    mode: 'table',
    async attachPackage() {
      if (pkg === undefined) {
        const c = await loadQwen3();
        pkg = (text) => c.count(text);
      }
    },
  };
}

/**
 * The Qwen3 counter of a table file: over the table where it is usable (its ids checked against
 * the published probe ids here, as loadQwen3 checks the package's, and its counts of the
 * self-check strings against the pinned QWEN3_SELF_CHECK_COUNTS), else the package's (loadQwen3).
 */
export async function loadQwen3Table(file: string): Promise<Qwen3TableCounter> {
  const t = readQwen3Table(file);
  if (!t.header.usable) {
    const c = await loadQwen3();
    return { ...c, async attachPackage() {} };
  }
  const bpe = tableBpe(t);
  const problems = [...probeProblems(t, bpe), ...selfCheckProblems(t, bpe)];
  if (problems.length > 0)
    throw new Error(
      `${file} is not Qwen3's BPE table: ${problems.join('; ')}; rebuild it: rc1-build tokenizer_table --force`,
    );
  return tableCounter(t, undefined, bpe);
}
