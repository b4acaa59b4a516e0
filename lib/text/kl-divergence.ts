// KL divergence of two corpora's n-gram distributions, with add-α smoothing over the union
// vocabulary (so an n-gram one corpus never uses still has non-zero probability):
//   V = n-gram types of P ∪ types of Q;  p(g) = (c_P(g) + α) / (N_P + α|V|), q(g) likewise;
//   KL(P‖Q) = Σ_{g∈V} p(g) · ln(p(g) / q(g))   (natural log: nats; 0 for identical counts).
import { countNgrams, type Corpus } from './corpus.ts';

export function klFromCounts(p: ReadonlyMap<string, number>, q: ReadonlyMap<string, number>, alpha: number): number {
  if (!(alpha > 0)) throw new RangeError(`KL smoothing α must be > 0, got ${alpha}`);
  const vocab = new Set<string>([...p.keys(), ...q.keys()]);
  if (vocab.size === 0) return 0;
  let np = 0;
  let nq = 0;
  for (const c of p.values()) np += c;
  for (const c of q.values()) nq += c;
  const zp = np + alpha * vocab.size;
  const zq = nq + alpha * vocab.size;
  let kl = 0;
  for (const g of vocab) {
    const pg = ((p.get(g) ?? 0) + alpha) / zp;
    const qg = ((q.get(g) ?? 0) + alpha) / zq;
    kl += pg * Math.log(pg / qg);
  }
  return Math.max(0, kl);
}

/** KL(P‖Q) of the n-gram distributions of two corpora, add-α smoothed over the union vocabulary. */
export function ngramKl(p: Corpus, q: Corpus, n: number, alpha: number): number {
  return klFromCounts(countNgrams(p, n), countNgrams(q, n), alpha);
}
