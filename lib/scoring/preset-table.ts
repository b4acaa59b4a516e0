// The judge presets: where each OpenAI-compatible endpoint lives, its default model, the env var
// its API key is usually kept in, its structured-output mode and whether its calls are billed.
// Apart from presets.ts (which adds the zod schema of `scoring_live:`) so that rc1.build.ts can
// import the one table — for the judge's key variable and endpoint — without loading zod.

/**
 * How the provider asks for JSON: `json_schema` (the seven dimensions as a strict schema),
 * `json_object` (any JSON object; the prompt describes the shape) or `none` (plain text, parsed).
 */
export type ResponseFormat = 'json_schema' | 'json_object' | 'none';

export interface ProviderPreset {
  /** Chat Completions base URL; `/chat/completions` is appended. */
  baseUrl: string;
  defaultModel: string;
  /** The env var the key is usually kept in (config's api_key_env defaults to it). */
  keyEnv: string;
  /** A hosted API refuses calls without a key; a local server usually takes none. */
  requiresKey: boolean;
  /** The strongest structured-output mode the endpoint accepts. */
  responseFormat: ResponseFormat;
  /** Whether calls cost money (false for servers on your own hardware). */
  billable: boolean;
  /**
   * A reasoning model spends max_tokens on its chain of thought before the answer: the config's
   * max_tokens must be at least this (absent: no floor).
   */
  minMaxTokens?: number;
}

export const PRESETS = Object.freeze({
  // Structured Outputs: response_format json_schema with strict: true.
  openai: {
    baseUrl: 'https://api.openai.com/v1',
    defaultModel: 'gpt-4o-mini',
    keyEnv: 'OPENAI_API_KEY',
    requiresKey: true,
    responseFormat: 'json_schema',
    billable: true,
  },
  // JSON Output: json_object only, and the prompt must contain the word "json".
  deepseek: {
    baseUrl: 'https://api.deepseek.com/v1',
    defaultModel: 'deepseek-chat',
    keyEnv: 'DEEPSEEK_API_KEY',
    requiresKey: true,
    responseFormat: 'json_object',
    billable: true,
  },
  // DeepSeek-R1 (`deepseek-reasoner`), the judge the RC1 planning notes name. Its reasoning comes
  // back in `reasoning_content` and the answer in `content`, which is what the parser reads; the
  // reasoning tokens count against max_tokens, so the config must leave room for them. Plain-text
  // answers (parsed), because the JSON modes are not accepted by every deepseek-reasoner revision.
  deepseek_r1: {
    baseUrl: 'https://api.deepseek.com/v1',
    defaultModel: 'deepseek-reasoner',
    keyEnv: 'DEEPSEEK_API_KEY',
    requiresKey: true,
    responseFormat: 'none',
    billable: true,
    minMaxTokens: 4096,
  },
  // Gemini's OpenAI-compatible endpoint accepts response_format json_schema.
  gemini: {
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    defaultModel: 'gemini-2.5-flash',
    keyEnv: 'GEMINI_API_KEY',
    requiresKey: true,
    responseFormat: 'json_schema',
    billable: true,
  },
  // `vllm serve MODEL` (guided decoding backs json_schema); a key only if started with --api-key.
  vllm: {
    baseUrl: 'http://127.0.0.1:8000/v1',
    defaultModel: 'Qwen/Qwen2.5-7B-Instruct',
    keyEnv: 'VLLM_API_KEY',
    requiresKey: false,
    responseFormat: 'json_schema',
    billable: false,
  },
  // llama.cpp `llama-server` (grammar-constrained json_schema); a key only if started with --api-key.
  llamacpp: {
    baseUrl: 'http://127.0.0.1:8080/v1',
    defaultModel: 'local-gguf',
    keyEnv: 'LLAMACPP_API_KEY',
    requiresKey: false,
    responseFormat: 'json_schema',
    billable: false,
  },
} satisfies Record<string, ProviderPreset>);

/**
 * Where the judge's score cache lives unless scoring_live.cache.path says otherwise: a state file
 * that rc1.build.ts declares (`state`, cache: true) for every target that scores, so `clean` keeps
 * it and `clean --cache` removes it; rules open it through ctx.state().
 */
export const SCORE_CACHE_PATH = '.rc1/scorecache.sqlite';
