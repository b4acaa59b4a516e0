// The definitions of every text statistic, as written into each report that uses them (the code
// in this folder is what they describe). Reports add the parameters they use: n-gram orders,
// α, the rank range, the sample or batch size.
import { TOKENIZATION } from './tokenize.ts';

export const TEXT_STAT_DEFINITIONS = {
  tokenization: TOKENIZATION,
  segments:
    'a corpus is a list of token sequences (segments); n-grams are taken inside a segment, never across a boundary',
  distinct_n: 'distinct-n = |distinct n-grams| / |n-grams| over the corpus (0 when it has no n-gram)',
  distinct_batched:
    'for a pool, distinct-n is measured per batch of a fixed number of documents (a seeded shuffle cut into consecutive batches) and averaged over the batches, so it means the same at any pool size',
  ttr: 'TTR = |distinct tokens| / |tokens| (= distinct-1)',
  kl: 'KL(P‖Q) = Σ_{g∈V} p(g)·ln(p(g)/q(g)) in nats over n-grams g; V = union of the n-gram types of P and Q; p(g) = (c_P(g)+α)/(N_P+α|V|), q(g) likewise (add-α smoothing)',
  zipf_slope:
    'least-squares slope b of ln(frequency) = a + b·ln(rank) over token ranks 1..min(V, max_rank); ranks by descending frequency, ties by token in code-unit order',
  coverage: 'count = declared labels that occur; fraction = count / declared',
  normalization: 'duplicate detection compares texts normalised to their tokens joined by single spaces',
} as const;
