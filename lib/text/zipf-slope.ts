// Zipf slope of a corpus's token frequencies: tokens ranked by frequency (descending; ties in
// code-unit order of the token, so the fit is deterministic), then the ordinary least-squares slope
// b of ln(frequency) = a + b·ln(rank) over ranks 1..min(V, maxRank). Natural language gives b near
// −1; a flatter slope (nearer 0) means frequency is spread over more types. null when fewer than
// two ranks are available.
import { countNgrams, type Corpus } from './corpus.ts';

export function zipfSlope(corpus: Corpus, maxRank: number): number | null {
  const freqs = [...countNgrams(corpus, 1)]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, Math.max(0, maxRank))
    .map(([, c]) => c);
  if (freqs.length < 2) return null;
  let sx = 0,
    sy = 0,
    sxx = 0,
    sxy = 0;
  freqs.forEach((f, i) => {
    const x = Math.log(i + 1);
    const y = Math.log(f);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  });
  const m = freqs.length;
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}
