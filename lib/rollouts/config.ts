// The `rollouts:` section of configs/scoring.yaml, as the rollouts rule validates it (strict: an
// unknown key is an error). `source` picks the rollout source; each source reads its own block.
//   candidates  N candidates per scenario (a later step does best-of-N selection)
//   seed        the synthetic source's seed, and the base of the openai source's per-call seeds
//   synthetic   policy label and the error-mode rates (each the share of ELIGIBLE candidates)
//   openai      endpoint of the policy server; api_key_env names the env var holding the key
//               (declare it as the target's secret); no key is sent when it is unset or empty
import { z } from 'zod';

const rate = z.number().min(0).max(1);

export const rolloutsConfigSchema = z
  .object({
    source: z.enum(['synthetic', 'file', 'openai']),
    candidates: z.number().int().positive(),
    seed: z.number().int(),
    synthetic: z
      .object({
        policy: z.string().min(1),
        error_rates: z
          .object({
            wrong_answer: rate,
            missing_tool_call: rate,
            unnecessary_clarification: rate,
            skipped_clarification: rate,
            verbosity: rate,
          })
          .strict(),
      })
      .strict(),
    openai: z
      .object({
        base_url: z.string().url(),
        model: z.string().min(1),
        api_key_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name'),
        temperature: z.number().min(0).max(2),
        max_tokens: z.number().int().positive(),
        max_steps: z.number().int().positive(),
        timeout_ms: z.number().int().positive(),
        max_retries: z.number().int().nonnegative(),
        concurrency: z.number().int().positive(),
      })
      .strict(),
  })
  .strict();

export type RolloutsConfig = z.infer<typeof rolloutsConfigSchema>;
