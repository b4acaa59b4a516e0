// The `openai-compatible` provider: one judge call against any Chat Completions endpoint (OpenAI,
// DeepSeek, Gemini's OpenAI-compatible endpoint, vLLM, llama.cpp; see presets.ts). The answer must
// be a JSON object with the seven dimensions, each a number in [0, 1], and nothing else (zod,
// strict). A malformed answer is asked again up to `malformedRetries` times, then reported as a
// failed outcome: never guessed, clamped or defaulted.
//
// Errors worth retrying later (429, 5xx, 408, network) are thrown as TransportError so that the
// rate limiter sees them (and Retry-After); run it through `limiter.run`, or through scoreLimited()
// which also turns spent retries into a failed ScoreOutcome. Other HTTP errors (400, 401, 404…)
// come back as a failed outcome. 401/403 (the key refused) come back as retryable failed outcomes
// (never recorded as "do not ask again"), and after AUTH_FAILURES_TO_STOP of them in a row the
// provider stops: that call and every later one throw an AuthError naming the key's variable, and
// the scoring driver ends the run. The API key lives only in this module's closure and in the
// Authorization header: every message that leaves this module passes through redact() (every
// encoding of the key: util/redact-secrets.ts).
import { z } from 'zod';
import { DIMENSIONS, type DimScores, type Provider, type ScoreOutcome, type ScoreRequest } from './types.ts';
import type { ResolvedEndpoint, ResponseFormat } from './presets.ts';
import { parseRetryAfter } from './parse-retry-after.ts';
import { type Limiter, RetriesExhaustedError, TransportError } from './rate-limiter.ts';
import { AUTH_FAILURES_TO_STOP, AuthError, isAuthStatus } from 'rc1-build';
import { redactor } from 'rc1-build';

const Dim = z.number().min(0).max(1);
/** The judge's answer: exactly the seven dimensions, each in [0, 1]. */
export const JudgeAnswerSchema = z
  .object(Object.fromEntries(DIMENSIONS.map((d) => [d, Dim])) as Record<(typeof DIMENSIONS)[number], typeof Dim>)
  .strict();

/** The JSON schema sent with response_format json_schema (zod still checks the range on our side). */
export function judgeJsonSchema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(DIMENSIONS.map((d) => [d, { type: 'number' }])),
    required: [...DIMENSIONS],
    additionalProperties: false,
  };
}

function responseFormatBody(f: ResponseFormat): Record<string, unknown> {
  switch (f) {
    case 'json_schema':
      return {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'rc1_judge_scores', strict: true, schema: judgeJsonSchema() },
        },
      };
    case 'json_object':
      return { response_format: { type: 'json_object' } };
    case 'none':
      return {};
  }
}

export type ParsedAnswer = { ok: true; scores: DimScores } | { ok: false; problem: string };

/** Parse the model's message content: one JSON object, optionally inside a single ```json fence. */
export function parseJudgeAnswer(content: unknown): ParsedAnswer {
  if (typeof content !== 'string' || content.trim() === '') return { ok: false, problem: 'empty message content' };
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(content);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : content);
  } catch {
    return { ok: false, problem: `content is not JSON: ${JSON.stringify(content.slice(0, 80))}` };
  }
  const r = JudgeAnswerSchema.safeParse(value);
  if (!r.success) {
    const issues = r.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    return { ok: false, problem: `answer does not match the seven-dimension schema: ${issues}` };
  }
  return { ok: true, scores: r.data as DimScores };
}

/** Tokens to reserve in the tokens/min bucket: ~4 characters a token for the prompt, plus max_tokens. */
export function estimateTokens(req: Pick<ScoreRequest, 'messages'>, maxTokens: number): number {
  const chars = req.messages.reduce((n, m) => n + m.content.length, 0);
  return Math.ceil(chars / 4) + maxTokens;
}

export interface OpenAICompatibleOptions extends ResolvedEndpoint {
  /** The key's value (from ctx.env[keyEnv]); undefined for a server that takes none. */
  apiKey: string | undefined;
  /** Injectable for tests; default: global fetch. */
  fetch?: typeof fetch;
  now?: () => number;
}

interface CompletionBody {
  choices?: { message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export function createOpenAICompatibleProvider(o: OpenAICompatibleOptions): Provider {
  const doFetch = o.fetch ?? fetch;
  const now = o.now ?? (() => performance.now());
  const url = `${o.baseUrl}/chat/completions`;
  const secret = o.apiKey && o.apiKey.length > 0 ? o.apiKey : undefined;
  const redact = redactor([secret]);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (secret) headers.authorization = `Bearer ${secret}`;
  const where = `${o.provider} (${url})`;
  /** Refusals (401/403) in a row; the AuthError once they reach AUTH_FAILURES_TO_STOP. */
  let refusals = 0;
  let stopped: AuthError | undefined;

  async function call(
    req: ScoreRequest,
    signal: AbortSignal,
  ): Promise<{ body: CompletionBody; latencyMs: number } | { failure: string; retryable?: boolean }> {
    if (stopped) throw stopped;
    const body = JSON.stringify({
      model: o.model,
      messages: req.messages,
      temperature: req.temperature,
      max_tokens: o.maxTokens,
      ...responseFormatBody(o.responseFormat),
    });
    const t0 = now();
    let res: Response;
    try {
      res = await doFetch(url, { method: 'POST', headers, body, signal });
    } catch (e) {
      if (signal.aborted) throw e;
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      throw new TransportError(
        'network',
        redact(`network error calling ${where}: ${e instanceof Error ? e.message : String(e)}${cause}`),
      );
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      if (signal.aborted) throw e;
      throw new TransportError(
        'network',
        redact(`connection lost reading the answer from ${where}: ${e instanceof Error ? e.message : String(e)}`),
      );
    }
    const latencyMs = now() - t0;
    if (!res.ok) {
      const snippet = redact(text.slice(0, 200).replace(/\s+/g, ' '));
      const msg = `HTTP ${res.status} from ${where}: ${snippet}`;
      if (res.status === 429)
        throw new TransportError('rate-limited', msg, 429, parseRetryAfter(res.headers, Date.now()));
      if (res.status >= 500 || res.status === 408)
        throw new TransportError('server', msg, res.status, parseRetryAfter(res.headers, Date.now()));
      if (isAuthStatus(res.status)) {
        if (++refusals >= AUTH_FAILURES_TO_STOP)
          stopped ??= new AuthError(
            `the live judge ${where}`,
            o.keyEnv,
            secret !== undefined,
            res.status,
            refusals,
            snippet || 'no body',
          );
        if (stopped) throw stopped;
        return { failure: msg, retryable: true };
      }
      return { failure: msg };
    }
    refusals = 0;
    try {
      return { body: JSON.parse(text) as CompletionBody, latencyMs };
    } catch {
      return { body: {}, latencyMs };
    }
  }

  return {
    provider: o.provider,
    model: o.model,
    live: true,
    billable: o.billable,
    async score(req: ScoreRequest, signal: AbortSignal): Promise<ScoreOutcome> {
      let promptTokens = 0;
      let completionTokens = 0;
      let problem = '';
      const attempts = o.malformedRetries + 1;
      for (let attempt = 1; attempt <= attempts; attempt++) {
        const r = await call(req, signal);
        if ('failure' in r) return { ok: false, error: r.failure, attempts: attempt, retryable: r.retryable ?? false };
        promptTokens += r.body.usage?.prompt_tokens ?? 0;
        completionTokens += r.body.usage?.completion_tokens ?? 0;
        const parsed = parseJudgeAnswer(r.body.choices?.[0]?.message?.content);
        if (parsed.ok) {
          return {
            ok: true,
            sample: {
              provider: o.provider,
              model: o.model,
              live: true,
              billable: o.billable,
              scores: parsed.scores,
              latencyMs: r.latencyMs,
              promptTokens,
              completionTokens,
              cached: false,
            },
          };
        }
        problem = parsed.problem;
      }
      return {
        ok: false,
        error: redact(`malformed answer from ${where} after ${attempts} attempts: ${problem}`),
        attempts,
        retryable: false,
      };
    },
  };
}

/**
 * One score through the limiter, always as an outcome: spent retries become a failed outcome with
 * retryable: true (try again in a later build); an aborted build still rejects.
 */
export async function scoreLimited(
  provider: Provider,
  limiter: Limiter,
  req: ScoreRequest,
  estTokens: number,
  signal?: AbortSignal,
): Promise<ScoreOutcome> {
  try {
    return await limiter.run((s) => provider.score(req, s), estTokens, signal);
  } catch (e) {
    if (e instanceof RetriesExhaustedError)
      return { ok: false, error: e.message, attempts: e.attempts, retryable: true };
    throw e;
  }
}
