// The config sections of the seed pool and its gate, as zod schemas shared by the rules:
//   pool        seed_pool (the stage size n comes from the target's args, not from here; the
//               lead's pool.n and pool.stages, which declare the stages, are accepted and unused)
//   validation  pool_validation: sampling, statistic parameters and thresholds
import { z } from 'zod';

export const PoolParamsSchema = z.object({
  seed: z.number().int(),
  mix: z.record(z.string(), z.number().min(0)),
  max_turns: z.number().int().positive(),
  clarify_rate: z.number().min(0).max(1),
  tools: z.array(z.enum(['wiki', 'calc'])).min(1),
  /** Construction bounds on a scenario's length (user turns + context, tokenize tokens). */
  length: z.object({ min: z.number().int().min(0), max: z.number().int().positive() }).strict(),
  id_prefix: z.string().regex(/^[A-Za-z0-9_-]+$/),
  n: z.number().int().positive().optional(),
  stages: z.unknown().optional(),
}).strict();

export const ValidationParamsSchema = z.object({
  seed: z.number().int(),
  /** distinct-n per batch of batch_size scenarios, averaged over at most `batches` seeded batches; KL, TTR and Zipf over those batches' scenarios. */
  sample: z.object({ batch_size: z.number().int().positive(), batches: z.number().int().positive() }).strict(),
  kl: z.object({ n: z.number().int().positive(), alpha: z.number().positive() }).strict(),
  zipf_max_rank: z.number().int().min(2),
  min_distinct_2: z.number().min(0).max(1),
  min_kl: z.number().min(0),
  min_roles: z.number().int().min(0),
  min_styles: z.number().int().min(0),
  max_duplicate_rate: z.number().min(0).max(1),
  length: z.object({ min: z.number().int().min(0), max: z.number().int().positive() }).strict(),
  leak: z.object({ ngram: z.number().int().positive(), max_similarity: z.number().min(0).max(1), max_leaks: z.number().int().min(0) }).strict(),
  /** Allowed deviation of each task's share from pool.mix, in percentage points. */
  mix_tolerance_pp: z.number().min(0),
}).strict();

export type PoolParams = z.infer<typeof PoolParamsSchema>;
export type ValidationParams = z.infer<typeof ValidationParamsSchema>;
