// The schemas of configs/difficulty.yaml's `difficulty:` keys, one per part, so each rule declares
// (and is rebuilt by) only the keys it reads:
//   difficulty_metrics  difficulty.metrics
//   balanced_pool       difficulty.bands, difficulty.dimensions, difficulty.balance
//   difficulty_report   difficulty.bands, difficulty.dimensions, difficulty.gate
import { z } from 'zod';
import { balanceSchema } from './balance.ts';
import { bandsSchema, dimensionsSchema } from './bands.ts';

export const metricsSchema = z
  .object({
    /** ambiguity flag multi-entity: at least this many distinct named entities in the request. */
    multi_entity_min: z.number().int().positive(),
    /** worker_threads computing metrics (1: the rule's own thread); the output is the same for any value. */
    workers: z.number().int().positive(),
  })
  .strict();

const share = z.number().min(0).max(1);
export const gateSchema = z
  .object({
    max_easy_share: share,
    min_medium_share: share,
    max_medium_share: share,
    min_hard_share: share,
    max_hard_share: share,
    /** Cramér's V of bucket × needs_clarification, in the pool and in the balanced pool. */
    max_association: share,
    /** Below this many scenarios in a scope the association check is n/a (V's sampling noise is about 1/sqrt(n)). */
    min_association_n: z.number().int().positive(),
    max_len_tokens: z.number().int().positive(),
    max_turns: z.number().int().positive(),
    max_tool_hops: z.number().int().nonnegative(),
    max_clue_overlap_hard_median: share,
    min_clue_overlap_easy_median: share,
  })
  .strict();
export type GateConfig = z.infer<typeof gateSchema>;

export const metricsParams = z.object({ difficulty: z.object({ metrics: metricsSchema }).strict() });
export const balanceParams = z.object({
  difficulty: z.object({ bands: bandsSchema, dimensions: dimensionsSchema, balance: balanceSchema }).strict(),
});
export const reportParams = z.object({
  difficulty: z.object({ bands: bandsSchema, dimensions: dimensionsSchema, gate: gateSchema }).strict(),
});
