// PolicyClient: what the `openai` rollout source needs from the model serving the policy — one
// Chat Completions call — and its implementation over plain fetch against any OpenAI-compatible
// endpoint (OpenAI, DeepSeek, vLLM, llama.cpp server…): POST <base_url>/chat/completions with
// `Authorization: Bearer <key>` when a key is given. Transient failures (429, 5xx, timeouts,
// network errors) are retried with exponential backoff and jitter, honouring Retry-After; other
// HTTP errors fail at once. This client does not use the scoring rate limiter or score cache:
// policy rollouts are sampled once per build of their target and their output file is the
// cache; the openai source accepts an optional limiter (same shape as the scoring one) to share
// a rate budget. 401/403 (the key refused) are not retried: the client stops (that call and every
// later one throw an AuthError naming the key's variable), and the openai source starts no
// further episode. The key is never part of an error message: bodies are
// redacted in every encoding of the key (a server may echo the Authorization header).
import type { Rng } from 'rc1-build';
import { AuthError, isAuthStatus } from 'rc1-build';
import { redactor } from 'rc1-build';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionOptions {
  temperature: number;
  maxTokens: number;
  /** Sent as `seed` (servers that support it sample reproducibly). */
  seed?: number;
}

export interface PolicyReply {
  content: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

export interface PolicyClient {
  /** The model name sent to the endpoint (recorded as the rollouts' policy). */
  readonly model: string;
  complete(messages: readonly ChatMessage[], options: CompletionOptions, signal: AbortSignal): Promise<PolicyReply>;
}

export interface PolicyEndpoint {
  baseUrl: string;
  model: string;
  /** The key's value (read from the env var the config names); omitted for local servers. */
  apiKey?: string;
  /** The name of that env var, for the message when the key is refused. */
  keyEnv?: string;
  timeoutMs: number;
  maxRetries: number;
  /** Injected for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Jitter source for backoff (deterministic in tests). */
  rng?: Rng;
  now?: () => number;
}

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Retry-After as milliseconds (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

interface ChatResponse {
  choices?: { message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

export function createFetchPolicyClient(e: PolicyEndpoint): PolicyClient {
  const doFetch = e.fetch ?? fetch;
  const sleep = e.sleep ?? defaultSleep;
  const now = e.now ?? (() => performance.now());
  const url = `${e.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const redact = redactor([e.apiKey]);
  let stopped: AuthError | undefined;

  async function once(
    messages: readonly ChatMessage[],
    o: CompletionOptions,
    signal: AbortSignal,
  ): Promise<PolicyReply> {
    if (stopped) throw stopped;
    const timeout = AbortSignal.timeout(e.timeoutMs);
    const both = AbortSignal.any([signal, timeout]);
    const body = {
      model: e.model,
      messages,
      temperature: o.temperature,
      max_tokens: o.maxTokens,
      ...(o.seed === undefined ? {} : { seed: o.seed }),
    };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (e.apiKey) headers.authorization = `Bearer ${e.apiKey}`;
    const start = now();
    let res: Response;
    try {
      res = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: both });
    } catch (err) {
      if (signal.aborted) throw err;
      const why = timeout.aborted ? `timed out after ${e.timeoutMs} ms` : `network error: ${(err as Error).message}`;
      throw new PolicyError(`policy endpoint ${url}: ${why}`, true);
    }
    if (!res.ok) {
      const text = redact((await res.text().catch(() => '')).slice(0, 400)).slice(0, 200);
      if (isAuthStatus(res.status)) {
        stopped ??= new AuthError(
          `the policy endpoint ${url}`,
          e.keyEnv ?? 'the configured key variable',
          e.apiKey !== undefined,
          res.status,
          1,
          text.replace(/\s+/g, ' ') || 'no body',
        );
        throw stopped;
      }
      const retryable = res.status === 429 || res.status >= 500;
      throw new PolicyError(
        `policy endpoint ${url}: HTTP ${res.status}${text ? `: ${text}` : ''}`,
        retryable,
        retryAfterMs(res.headers.get('retry-after'), Date.now()),
      );
    }
    let json: ChatResponse;
    try {
      json = (await res.json()) as ChatResponse;
    } catch (err) {
      throw new PolicyError(`policy endpoint ${url}: the response is not JSON (${(err as Error).message})`, true);
    }
    const content = json.choices?.[0]?.message?.content;
    if (typeof content !== 'string')
      throw new PolicyError(`policy endpoint ${url}: the response has no choices[0].message.content string`, true);
    const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    return {
      content,
      promptTokens: n(json.usage?.prompt_tokens),
      completionTokens: n(json.usage?.completion_tokens),
      latencyMs: now() - start,
    };
  }

  return {
    model: e.model,
    async complete(messages, options, signal) {
      for (let attempt = 0; ; attempt++) {
        try {
          return await once(messages, options, signal);
        } catch (err) {
          if (!(err instanceof PolicyError) || !err.retryable || attempt >= e.maxRetries) throw err;
          const backoff = 500 * 2 ** attempt * (0.5 + (e.rng ? e.rng.next() : Math.random()));
          await sleep(err.retryAfterMs ?? backoff, signal);
        }
      }
    },
  };
}
