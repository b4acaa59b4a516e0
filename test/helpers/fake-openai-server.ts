// A fake OpenAI-compatible judge for tests and the scoring benchmark: POST /v1/chat/completions on
// 127.0.0.1 and a random port. Scores are deterministic, derived from the hash of the prompt
// (the request's messages). Faults are injectable per request: 429 bursts with Retry-After, 5xx,
// hangs (never answers), malformed answers, slow answers; and a requests/s cap answers 429 above
// R accepted requests in any one-second window. It counts requests per prompt, so a test can
// assert that nothing was asked for an item already cached, and it checks the Authorization header.
// GET /v1/stats returns the counters. Run as a script it serves on its own (for the benchmark, so
// the server does not share the client's event loop) and prints {"url": …} on its first line:
//   node --import tsx test/helpers/fake-openai-server.ts [--rps-cap R] [--latency-ms L] [--api-key K]
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DIMENSIONS, type DimScores } from '../../lib/scoring/types.ts';

export type Fault =
  /** 429; retryAfter is sent as the Retry-After header value as given (seconds or an HTTP-date). */
  | { kind: '429'; retryAfter?: string; retryAfterMs?: number }
  | { kind: '5xx'; status?: number }
  /** Accept the request and never answer (the client's timeout must fire). */
  | { kind: 'hang' }
  /** 200 with message content that fails the seven-dimension schema (default: prose, not JSON). */
  | { kind: 'malformed'; content?: string }
  /** 200 whose body is not JSON at all. */
  | { kind: 'garbage-body' }
  /** Answer normally after this delay. */
  | { kind: 'slow'; ms: number };

export interface FakeRequest {
  promptHash: string;
  /** 1 for the first request with this prompt. */
  n: number;
  /** Requests received so far, this one included. */
  total: number;
  body: { model?: unknown; messages?: unknown; temperature?: unknown; response_format?: unknown; max_tokens?: unknown };
}

export interface FakeServerOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401, echoing the header like real APIs do). */
  apiKey?: string;
  /** Answer 429 above this many accepted requests in any one-second window. */
  rpsCap?: number;
  /** Latency of a normal answer. */
  latencyMs?: number;
  /** Decide a fault per request (after queued faults are used up). */
  fault?: (r: FakeRequest) => Fault | undefined;
}

export interface FakeOpenAIServer {
  /** Base URL, e.g. http://127.0.0.1:PORT/v1. */
  readonly url: string;
  readonly stats: {
    requests: number;
    answered: number;
    rateLimited: number;
    serverErrors: number;
    unauthorized: number;
    hung: number;
    malformed: number;
  };
  /** Bodies of the last 50 requests. */
  readonly lastBodies: FakeRequest['body'][];
  /** Arrival times (ms) of every request per prompt hash. */
  arrivals(promptHash: string): number[];
  countFor(promptHash: string): number;
  /** The next requests get these faults, in order. */
  queue(...faults: Fault[]): void;
  setFault(f: FakeServerOptions['fault']): void;
  setRpsCap(r: number | undefined): void;
  setLatency(ms: number): void;
  /** Forget counts and arrivals. */
  reset(): void;
  close(): Promise<void>;
}

export function promptHash(messages: unknown): string {
  return createHash('sha256').update(JSON.stringify(messages)).digest('hex');
}

/** The scores the server gives a prompt: one byte of its hash per dimension, scaled to [0, 1]. */
export function expectedScores(hash: string): DimScores {
  return Object.fromEntries(
    DIMENSIONS.map((d, i) => [d, Math.round((parseInt(hash.slice(i * 2, i * 2 + 2), 16) / 255) * 1000) / 1000]),
  ) as DimScores;
}

export async function startFakeOpenAIServer(o: FakeServerOptions = {}): Promise<FakeOpenAIServer> {
  let fault = o.fault;
  let rpsCap = o.rpsCap;
  let latency = o.latencyMs ?? 0;
  const queued: Fault[] = [];
  const perPrompt = new Map<string, number[]>();
  const accepted: number[] = [];
  const stats = { requests: 0, answered: 0, rateLimited: 0, serverErrors: 0, unauthorized: 0, hung: 0, malformed: 0 };
  const lastBodies: FakeRequest['body'][] = [];
  const t0 = performance.now();

  const send = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
  const error = (message: string, type: string): string => JSON.stringify({ error: { message, type } });

  const answer = (res: http.ServerResponse, r: FakeRequest, content: string): void => {
    const messages = Array.isArray(r.body.messages) ? (r.body.messages as { content?: unknown }[]) : [];
    const chars = messages.reduce((n, m) => n + String(m.content ?? '').length, 0);
    stats.answered++;
    send(
      res,
      200,
      JSON.stringify({
        id: `chatcmpl-${r.promptHash.slice(0, 12)}-${r.n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: r.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: Math.ceil(chars / 4), completion_tokens: 60, total_tokens: Math.ceil(chars / 4) + 60 },
      }),
    );
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, raw: string): void => {
    if (req.method === 'GET' && req.url === '/v1/stats') return send(res, 200, JSON.stringify(stats));
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return send(res, 404, error(`no route ${req.method} ${req.url}`, 'invalid_request_error'));
    let body: FakeRequest['body'];
    try {
      body = JSON.parse(raw) as FakeRequest['body'];
    } catch {
      return send(res, 400, error('body is not JSON', 'invalid_request_error'));
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages))
      return send(res, 400, error('model and messages are required', 'invalid_request_error'));
    const hash = promptHash(body.messages);
    const now = performance.now() - t0;
    const times = perPrompt.get(hash) ?? [];
    times.push(now);
    perPrompt.set(hash, times);
    stats.requests++;
    lastBodies.push(body);
    if (lastBodies.length > 50) lastBodies.shift();
    if (o.apiKey !== undefined && req.headers.authorization !== `Bearer ${o.apiKey}`) {
      stats.unauthorized++;
      return send(
        res,
        401,
        error(`Incorrect API key provided: ${req.headers.authorization ?? '(none)'}`, 'invalid_request_error'),
      );
    }
    const r: FakeRequest = { promptHash: hash, n: times.length, total: stats.requests, body };
    const f = queued.shift() ?? fault?.(r);
    const good = JSON.stringify(expectedScores(hash));
    if (f) {
      switch (f.kind) {
        case '429': {
          stats.rateLimited++;
          const h: Record<string, string> = {};
          if (f.retryAfter !== undefined) h['retry-after'] = f.retryAfter;
          if (f.retryAfterMs !== undefined) h['retry-after-ms'] = String(f.retryAfterMs);
          return send(res, 429, error('Rate limit reached (injected)', 'rate_limit_exceeded'), h);
        }
        case '5xx':
          stats.serverErrors++;
          return send(res, f.status ?? 500, error('The server had an error (injected)', 'server_error'));
        case 'hang':
          stats.hung++;
          return;
        case 'malformed':
          stats.malformed++;
          return answer(res, r, f.content ?? 'I would rate this answer quite highly overall.');
        case 'garbage-body':
          stats.malformed++;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"choices": [ {"mess');
          return;
        case 'slow':
          setTimeout(() => answer(res, r, good), f.ms);
          return;
      }
    }
    if (rpsCap !== undefined) {
      while (accepted.length > 0 && accepted[0]! <= now - 1000) accepted.shift();
      if (accepted.length >= rpsCap) {
        stats.rateLimited++;
        const waitMs = Math.max(1, Math.ceil(accepted[0]! + 1000 - now));
        return send(res, 429, error(`Rate limit reached: ${rpsCap} requests per second`, 'rate_limit_exceeded'), {
          'retry-after': String(Math.ceil(waitMs / 1000)),
          'retry-after-ms': String(waitMs),
        });
      }
      accepted.push(now);
    }
    if (latency > 0) setTimeout(() => answer(res, r, good), latency);
    else answer(res, r, good);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats,
    lastBodies,
    arrivals: (h) => [...(perPrompt.get(h) ?? [])],
    countFor: (h) => perPrompt.get(h)?.length ?? 0,
    queue: (...f) => void queued.push(...f),
    setFault: (f) => {
      fault = f;
    },
    setRpsCap: (r) => {
      rpsCap = r;
    },
    setLatency: (ms) => {
      latency = ms;
    },
    reset: () => {
      perPrompt.clear();
      accepted.length = 0;
      for (const k of Object.keys(stats) as (keyof typeof stats)[]) stats[k] = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { 'rps-cap': { type: 'string' }, 'latency-ms': { type: 'string' }, 'api-key': { type: 'string' } },
  });
  const server = await startFakeOpenAIServer({
    ...(values['rps-cap'] ? { rpsCap: Number(values['rps-cap']) } : {}),
    ...(values['latency-ms'] ? { latencyMs: Number(values['latency-ms']) } : {}),
    ...(values['api-key'] ? { apiKey: values['api-key'] } : {}),
  });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
}
