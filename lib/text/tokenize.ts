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

export function isCjk(token: string): boolean {
  return CJK.test(token);
}

/** The n-grams of a token list, each joined with a single space. */
export function ngrams(tokens: readonly string[], n: number): string[] {
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
