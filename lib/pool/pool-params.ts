// The config sections of the seed pool and its gate, as zod schemas shared by the rules:
//   pool        seed_pool (the stage size n comes from the target's args, not from here; the
//               lead's pool.n and pool.stages, which declare the stages, are accepted and unused)
//   validation  pool_validation: sampling, statistic parameters and thresholds
// poolConfig turns the parsed `pool` section into the PoolBuilder's config.
import { z } from 'zod';
import { TASKS, type Task } from '../data/index.ts';
import type { PoolConfig } from './build-pool.ts';
import { KINDS, type FrameKind } from './pool-kinds.ts';

const share = z.number().min(0).max(1);
const perTask = <T extends z.ZodType>(v: T) =>
  z.object(Object.fromEntries(TASKS.map((t) => [t, v.optional()])) as Record<Task, z.ZodOptional<T>>).strict();
const turnRange = z
  .tuple([z.number().int().positive(), z.number().int().positive()])
  .refine(([a, b]) => a <= b, { message: 'expected [min, max] with min <= max' });

export const PoolParamsSchema = z
  .object({
    seed: z.number().int(),
    mix: z.record(z.string(), z.number().min(0)),
    max_turns: z.number().int().positive(),
    clarify_rate: z.number().min(0).max(1),
    /** Shares of each task's scenarios rendered with each variant, the same in both clarification strata (lib/pool/pool-kinds.ts). */
    variants: z.object({ hint: perTask(share), gold: perTask(share).optional(), split: perTask(share) }).strict(),
    /** Hinted scenarios: the lines that introduce the quoted sentence, and the shortest sentence quoted (tokenize tokens). */
    hint: z
      .object({ lead_ins: z.array(z.string().trim().min(1)).min(1), min_tokens: z.number().int().positive() })
      .strict(),
    /** The template user turns each kind renders with, per task: [min, max]. */
    user_turns: z
      .object(
        Object.fromEntries(KINDS.map((k) => [k, perTask(turnRange)])) as Record<
          FrameKind,
          ReturnType<typeof perTask<typeof turnRange>>
        >,
      )
      .strict(),
    /** Never emit a scenario over these (the difficulty gate's ceilings); len_tokens is checked as tokenize length × qwen3_per_token. */
    ceilings: z
      .object({
        tool_hops: z.number().int().nonnegative(),
        turns: z.number().int().positive(),
        len_tokens: z.number().int().positive(),
        qwen3_per_token: z.number().min(1),
      })
      .strict(),
    tools: z.array(z.enum(['wiki', 'calc'])).min(1),
    /** Construction bounds on a scenario's length (user turns + context, tokenize tokens). */
    length: z.object({ min: z.number().int().min(0), max: z.number().int().positive() }).strict(),
    id_prefix: z.string().regex(/^[A-Za-z0-9_-]+$/),
    n: z.number().int().positive().optional(),
    stages: z.unknown().optional(),
  })
  .strict();

export const ValidationParamsSchema = z
  .object({
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
    leak: z
      .object({
        ngram: z.number().int().positive(),
        max_similarity: z.number().min(0).max(1),
        max_leaks: z.number().int().min(0),
      })
      .strict(),
    /** Per task: how often one source question may be rendered, and the least share of distinct questions among the scenarios. */
    reuse: z
      .object({
        max_renderings_per_source: z.number().int().positive(),
        min_distinct_source_share: z.number().min(0).max(1),
      })
      .strict(),
    /** RC1's target task mix (weights, normalised by their sum): what the realised mix is checked against, never pool.mix (the generator's own setting). */
    mix_target: z.record(z.string(), z.number().min(0)),
    /** Allowed deviation of each task's share from mix_target, in percentage points. */
    mix_tolerance_pp: z.number().min(0),
  })
  .strict();

export type PoolParams = z.infer<typeof PoolParamsSchema>;
export type ValidationParams = z.infer<typeof ValidationParamsSchema>;

/** The PoolBuilder config of a parsed `pool` section. */
export function poolConfig(p: PoolParams): PoolConfig {
  return {
    seed: p.seed,
    mix: p.mix,
    clarifyRate: p.clarify_rate,
    maxTurns: p.max_turns,
    tools: p.tools,
    length: p.length,
    idPrefix: p.id_prefix,
    variants: { hint: p.variants.hint, gold: p.variants.gold ?? {}, split: p.variants.split },
    hint: { leadIns: p.hint.lead_ins, minTokens: p.hint.min_tokens },
    userTurns: p.user_turns,
    ceilings: {
      toolHops: p.ceilings.tool_hops,
      turns: p.ceilings.turns,
      lenTokens: p.ceilings.len_tokens,
      qwen3PerToken: p.ceilings.qwen3_per_token,
    },
  };
}
