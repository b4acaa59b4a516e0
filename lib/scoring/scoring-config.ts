// The `scoring:` config sections (configs/scoring.yaml) as the scoring rules validate them, and
// the prod no-fallback check. Which provider a build uses is provider-factory.ts createProvider
// (REWARD_LIVE_MODE, profile); with RUN_MODE=prod the live provider is required, and on top of
// that every sample a prod build uses must be live (liveViolation): there is no fallback.
import { z } from 'zod';
import type { Provenance } from './types.ts';

/** In prod, every sample must be live: the first that is not is an error message. */
export function liveViolation(samples: Iterable<Provenance & { itemId?: string }>): string | null {
  for (const s of samples) {
    if (!s.live || s.provider === 'heuristic') {
      return `a score from provider ${s.provider} (model ${s.model}, live: ${s.live})${s.itemId ? ` for ${s.itemId}` : ''} in prod: prod requires every score to come from the live judge`;
    }
  }
  return null;
}

const unit = z.number().min(0).max(1);

/** scoring.judge: how each item is judged. */
export const judgeConfigSchema = z
  .object({
    k: z.number().int().positive(),
    temperature: z.number().min(0).max(2),
    /** Share of items allowed to end failed before the scores target fails (0: none). */
    max_failed_share: unit,
  })
  .strict();

/** scoring.aggregate: K-sample aggregation (aggregate.ts). */
export const aggregateConfigSchema = z
  .object({ unstable_variance: z.number().nonnegative(), unstable_weight: unit })
  .strict();

/** scoring.heuristic: the heuristic provider's jitter (heuristic-provider.ts). */
export const heuristicConfigSchema = z.object({ jitter: unit, ambiguity_jitter: unit }).strict();

/** scoring.stability: the per-stage stability gate check (score-record.ts stabilityCheck). */
export const stabilityConfigSchema = z.object({ max_unstable_share: unit }).strict();

/** scoring.probe: the probe_scorer gate. */
export const probeConfigSchema = z.object({ calls: z.number().int().positive() }).strict();

/** scoring.not_simulated: the not_simulated gate. */
export const notSimulatedConfigSchema = z
  .object({
    window: z.number().int().positive(),
    max_cache_hit_rate: z.object({ round1: unit, round2: unit }).strict(),
  })
  .strict();
