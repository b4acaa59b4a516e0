// Presets for OpenAI-compatible judge endpoints, and the `scoring_live:` config (configs/
// scoring_live.yaml) that picks one and sets the rate limiter and the score cache. A preset says
// where the endpoint lives, its default model, which structured-output mode it accepts and whether
// its calls are billed; every preset value can be overridden in config. The API key never appears
// here: config names the env var that holds it (declared as a secret of the scoring target).
import { z } from 'zod';

export { PRESETS, type ProviderPreset, type ResponseFormat } from './preset-table.ts';
import { PRESETS, SCORE_CACHE_PATH, type ProviderPreset, type ResponseFormat } from './preset-table.ts';

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

const RateSchema = z
  .object({
    /** Token bucket on requests: refill rate and capacity. */
    requests_per_s: z.number().positive(),
    burst: z.number().int().min(1),
    /** Token bucket on (estimated prompt + max completion) tokens per minute. */
    tokens_per_min: z.number().positive(),
    /** Adaptive concurrency (AIMD on the 429 ratio), between min and max. */
    concurrency_min: z.number().int().min(1),
    concurrency_max: z.number().int().min(1),
    concurrency_initial: z.number().int().min(1),
    /** The 429 ratio is taken over the last `window` attempts. */
    window: z.number().int().min(1),
    /** Above this 429 ratio a 429 halves concurrency (at most once per round of in-flight requests). */
    target_429_ratio: z.number().min(0).max(1),
    decrease_factor: z.number().gt(0).lt(1),
    /** Per-attempt timeout. */
    timeout_s: z.number().positive(),
    /** Attempts per request (first try included) for 429s, 5xx, timeouts and network errors. */
    max_attempts: z.number().int().min(1),
    backoff_base_ms: z.number().positive(),
    backoff_max_ms: z.number().positive(),
    /** A longer Retry-After is clamped to this. */
    max_retry_after_s: z.number().positive(),
  })
  .strict();

export const CacheSchema = z
  .object({
    /** SQLite file, relative to the workspace root. */
    path: z.string().min(1),
    ttl_days: z.number().positive(),
    /** normal: survives a killed process (WAL); full: also a power loss, at an fsync per put. */
    synchronous: z.enum(['normal', 'full']),
  })
  .strict();

export const ScoringLiveSchema = z
  .object({
    preset: z.enum(PRESET_NAMES as [PresetName, ...PresetName[]]),
    /** Label in records and cache keys; null: the preset's name. */
    provider: z.string().min(1).nullable(),
    base_url: z.url().nullable(),
    model: z.string().min(1).nullable(),
    /** NAME of the env var holding the key; null: the preset's keyEnv. */
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .nullable(),
    response_format: z.enum(['json_schema', 'json_object', 'none']).nullable(),
    billable: z.boolean().nullable(),
    max_tokens: z.number().int().positive(),
    /** Re-asks after a malformed answer before the sample is recorded as failed. */
    malformed_retries: z.number().int().min(0).max(5),
    rate: RateSchema,
    cache: CacheSchema,
  })
  .strict()
  .superRefine((c, ctx) => {
    const r = c.rate;
    if (!(r.concurrency_min <= r.concurrency_initial && r.concurrency_initial <= r.concurrency_max)) {
      ctx.addIssue({
        code: 'custom',
        path: ['rate', 'concurrency_initial'],
        message: 'need concurrency_min <= concurrency_initial <= concurrency_max',
      });
    }
    const floor = (PRESETS[c.preset] as ProviderPreset).minMaxTokens;
    if (floor !== undefined && c.max_tokens < floor) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_tokens'],
        message: `preset ${c.preset} is a reasoning model whose chain of thought counts against max_tokens: expected at least ${floor}, got ${c.max_tokens}`,
      });
    }
    if (r.backoff_base_ms > r.backoff_max_ms)
      ctx.addIssue({ code: 'custom', path: ['rate', 'backoff_base_ms'], message: 'must not exceed backoff_max_ms' });
  });

export type ScoringLiveConfig = z.infer<typeof ScoringLiveSchema>;

/** The defaults (configs/scoring_live.yaml states the same values, so the file is the documentation). */
export const scoringLiveDefaults: ScoringLiveConfig = Object.freeze({
  preset: 'openai',
  provider: null,
  base_url: null,
  model: null,
  api_key_env: null,
  response_format: null,
  billable: null,
  max_tokens: 300,
  malformed_retries: 2,
  rate: Object.freeze({
    requests_per_s: 5,
    burst: 2,
    tokens_per_min: 200_000,
    concurrency_min: 2,
    concurrency_max: 8,
    concurrency_initial: 5,
    window: 20,
    target_429_ratio: 0.05,
    decrease_factor: 0.5,
    timeout_s: 60,
    max_attempts: 6,
    backoff_base_ms: 500,
    backoff_max_ms: 20_000,
    max_retry_after_s: 120,
  }),
  cache: Object.freeze({ path: SCORE_CACHE_PATH, ttl_days: 14, synchronous: 'normal' as const }),
});

/** The endpoint settings once the preset is applied: what the provider is built from. */
export interface ResolvedEndpoint {
  preset: PresetName;
  provider: string;
  baseUrl: string;
  model: string;
  keyEnv: string;
  requiresKey: boolean;
  responseFormat: ResponseFormat;
  billable: boolean;
  maxTokens: number;
  malformedRetries: number;
}

export function resolveEndpoint(c: ScoringLiveConfig): ResolvedEndpoint {
  const p: ProviderPreset = PRESETS[c.preset];
  return {
    preset: c.preset,
    provider: c.provider ?? c.preset,
    baseUrl: (c.base_url ?? p.baseUrl).replace(/\/+$/, ''),
    model: c.model ?? p.defaultModel,
    keyEnv: c.api_key_env ?? p.keyEnv,
    requiresKey: p.requiresKey,
    responseFormat: c.response_format ?? p.responseFormat,
    billable: c.billable ?? p.billable,
    maxTokens: c.max_tokens,
    malformedRetries: c.malformed_retries,
  };
}
