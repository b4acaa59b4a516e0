// Picks the judge: the embedded heuristic provider or the live OpenAI-compatible one.
//
//   REWARD_LIVE_MODE   1 | true | live | on | yes      → live
//                      0 | false | heuristic | stub | off | no → heuristic
//                      unset or empty                   → the profile's default: prod live, dev heuristic
//
// In the prod profile the live provider is required: asking for the heuristic, a missing key or a
// bad `scoring_live:` config is a failure naming the env var and the config key, never a silent
// fallback. In dev, a live request that cannot be met (no key) falls back to the heuristic with a
// note for the rule to log; every heuristic record says provider heuristic, live false.
// Expected failures are values (STYLE 20): the rule turns one into its error.
import type { Provider } from './types.ts';
import { createHeuristicProvider, type HeuristicOptions } from './heuristic-provider.ts';
import { createOpenAICompatibleProvider } from './openai-provider.ts';
import { type ResolvedEndpoint, type ScoringLiveConfig, ScoringLiveSchema, resolveEndpoint } from './presets.ts';

export interface CreateProviderInput {
  /** The rule's params (or the whole resolved config): `scoring_live` is read from it when live is chosen. */
  config: { readonly scoring_live?: unknown };
  /** ctx.env: REWARD_LIVE_MODE, and the key's env var (declared as a secret of the target). */
  env: Readonly<Record<string, string | undefined>>;
  /** ctx.profile: 'dev' or 'prod'. */
  profile: string;
  /** The heuristic provider's settings (from the scoring config), used when it is chosen. */
  heuristic: HeuristicOptions;
  /** Injectable for tests. */
  fetch?: typeof fetch;
}

export type ProviderMode = 'live' | 'heuristic';

export interface ProviderChoice {
  provider: Provider;
  mode: ProviderMode;
  /** Set for live: the endpoint after the preset is applied (no key in it). */
  endpoint?: ResolvedEndpoint;
  config?: ScoringLiveConfig;
  /** Why this mode was chosen, for the rule's log (e.g. a dev fallback). */
  note: string;
}

export type ProviderFailureReason =
  | 'bad-live-mode'
  | 'live-required-in-prod'
  | 'missing-config'
  | 'invalid-config'
  | 'missing-api-key';

export interface ProviderFailure {
  reason: ProviderFailureReason;
  message: string;
  hint: string;
  configKey?: string;
  envVar?: string;
}

export type CreateProviderResult = { ok: true; value: ProviderChoice } | { ok: false; failure: ProviderFailure };

const LIVE = new Set(['1', 'true', 'live', 'on', 'yes']);
const HEURISTIC = new Set(['0', 'false', 'heuristic', 'stub', 'off', 'no']);

function requestedMode(raw: string | undefined): ProviderMode | 'default' | 'bad' {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '') return 'default';
  if (LIVE.has(v)) return 'live';
  if (HEURISTIC.has(v)) return 'heuristic';
  return 'bad';
}

const fail = (f: ProviderFailure): CreateProviderResult => ({ ok: false, failure: f });

export function createProvider(input: CreateProviderInput): CreateProviderResult {
  const prod = input.profile === 'prod';
  const asked = requestedMode(input.env.REWARD_LIVE_MODE);
  if (asked === 'bad') {
    return fail({
      reason: 'bad-live-mode',
      envVar: 'REWARD_LIVE_MODE',
      message: `REWARD_LIVE_MODE=${JSON.stringify(input.env.REWARD_LIVE_MODE)} is neither live (1, true, live) nor heuristic (0, false, heuristic)`,
      hint: 'set REWARD_LIVE_MODE=1 for the live judge, 0 for the heuristic, or unset it for the profile default',
    });
  }
  const mode: ProviderMode = asked === 'default' ? (prod ? 'live' : 'heuristic') : asked;
  if (mode === 'heuristic') {
    if (prod) {
      return fail({
        reason: 'live-required-in-prod',
        envVar: 'REWARD_LIVE_MODE',
        message: `RUN_MODE=prod requires the live judge, but REWARD_LIVE_MODE=${input.env.REWARD_LIVE_MODE ?? ''} selects the heuristic provider`,
        hint: 'unset REWARD_LIVE_MODE (or set it to 1) in prod; the heuristic provider is for the dev profile only',
      });
    }
    const why = asked === 'default' ? 'dev profile default' : `REWARD_LIVE_MODE=${input.env.REWARD_LIVE_MODE ?? ''}`;
    return {
      ok: true,
      value: {
        provider: createHeuristicProvider(input.heuristic),
        mode: 'heuristic',
        note: `heuristic provider (${why}); records say live: false`,
      },
    };
  }

  const raw = input.config.scoring_live;
  if (raw === undefined) {
    return fail({
      reason: 'missing-config',
      configKey: 'scoring_live',
      message: 'the live judge needs the scoring_live config, which this target does not receive',
      hint: "declare params: ['scoring_live'] on the scoring target (configs/scoring_live.yaml holds it)",
    });
  }
  const parsed = ScoringLiveSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = ['scoring_live', ...issue.path.map(String)].join('.');
    return fail({
      reason: 'invalid-config',
      configKey: key,
      message: `invalid config ${key}: ${issue.message}`,
      hint: 'fix configs/scoring_live.yaml',
    });
  }
  const config = parsed.data;
  const endpoint = resolveEndpoint(config);
  const key = input.env[endpoint.keyEnv];
  if ((key === undefined || key === '') && endpoint.requiresKey) {
    const failure: ProviderFailure = {
      reason: 'missing-api-key',
      envVar: endpoint.keyEnv,
      configKey: 'scoring_live.api_key_env',
      message: `the live judge (${endpoint.provider}, ${endpoint.model}) needs an API key in $${endpoint.keyEnv}, which is not set`,
      hint: `export ${endpoint.keyEnv}=…, and declare secrets: ['${endpoint.keyEnv}'] on the scoring target; scoring_live.api_key_env names the variable`,
    };
    if (prod) return fail(failure);
    return {
      ok: true,
      value: {
        provider: createHeuristicProvider(input.heuristic),
        mode: 'heuristic',
        note: `falling back to the heuristic provider (dev): ${failure.message}`,
      },
    };
  }
  const provider = createOpenAICompatibleProvider({
    ...endpoint,
    apiKey: key,
    ...(input.fetch ? { fetch: input.fetch } : {}),
  });
  return {
    ok: true,
    value: {
      provider,
      mode: 'live',
      endpoint,
      config,
      note: `live judge ${endpoint.provider} ${endpoint.model} at ${endpoint.baseUrl}`,
    },
  };
}

/** The failure as the one-paragraph message a rule throws (no secret can be in it: it holds names only). */
export function formatProviderFailure(f: ProviderFailure): string {
  const ctx = [f.envVar ? `env: ${f.envVar}` : '', f.configKey ? `config: ${f.configKey}` : '']
    .filter(Boolean)
    .join(', ');
  return `scoring: ${f.message}${ctx ? ` (${ctx})` : ''}\n  hint: ${f.hint}`;
}
