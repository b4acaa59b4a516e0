// Tokenisation for every text statistic in rc1-build (diversity, leak check, difficulty).
// Definition (stated in each report): NFKC-normalise, lower-case; a token is a run of letters,
// digits, apostrophes or hyphens inside a word (\p{L}\p{N}, e.g. "don't", "3.5" splits at the dot
// into "3" and "5"), except that each CJK ideograph, kana or Hangul syllable is a token of its own
// (Chinese and Japanese have no spaces, and per-character tokens are the usual unit for CJK
// distinct-n). Punctuation and whitespace separate tokens and are dropped.
export const TOKENIZATION =
  "NFKC, lower-case; tokens are runs of letters/digits (with inner ' or -), each CJK ideograph/kana/Hangul syllable is one token; punctuation dropped";

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const TOKEN =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

export function tokenize(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(TOKEN) ?? [];
}

/** 1 for the ASCII letters and digits (the only ASCII characters of \p{L} and \p{N}), 2 for ' and -. */
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  ASCII_CLASS[c] = /[\p{L}\p{N}]/u.test(ch) ? 1 : ch === "'" || ch === '-' ? 2 : 0;
}

/**
 * tokenize(text).length, without building the tokens. An ASCII text is counted in one pass: NFKC
 * leaves ASCII as it is and lower-casing moves no boundary, so a token is a run of ASCII letters
 * and digits, with inner runs joined by ' or -; any other text is tokenized.
 */
export function countTokens(text: string): number {
  const n = text.length;
  let count = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c > 127) return tokenize(text).length;
    if (ASCII_CLASS[c] !== 1) {
      i++;
      continue;
    }
    count++;
    i++;
    // The rest of the token: letters and digits, and a joiner followed by one.
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d > 127) return tokenize(text).length;
      const k = ASCII_CLASS[d];
      if (k === 1) i++;
      else if (k === 2 && i + 1 < n && ASCII_CLASS[text.charCodeAt(i + 1)] === 1) i += 2;
      else break;
    }
  }
  return count;
}

export function isCjk(token: string): boolean {
  return CJK.test(token);
}

/** The n-grams of a token list, each joined with a single space. */
export function ngrams(tokens: readonly string[], n: number): string[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`ngrams: n must be a positive integer, got ${n}`);
  const out: string[] = [];
  for (let i = 0; i + n <= tokens.length; i++) {
    // tokens.slice(i, i + n).join(' '), without the array
    let g = tokens[i]!;
    for (let k = 1; k < n; k++) g += ` ${tokens[i + k]!}`;
    out.push(g);
  }
  return out;
}

/** Jaccard similarity of two n-gram sets (0 when both are empty). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}
