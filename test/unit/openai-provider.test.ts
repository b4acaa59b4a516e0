// The openai-compatible provider against the fake server: request bodies per structured-output
// mode, answer validation (never guessed), HTTP errors as outcomes or TransportErrors, and the
// API key kept out of every message and object.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import {
  createOpenAICompatibleProvider,
  estimateTokens,
  parseJudgeAnswer,
  scoreLimited,
} from '../../lib/scoring/openai-provider.ts';
import { PRESETS, resolveEndpoint, ScoringLiveSchema, scoringLiveDefaults } from '../../lib/scoring/presets.ts';
import { createRateLimiter, TransportError } from '../../lib/scoring/rate-limiter.ts';
import type { ScoreRequest } from '../../lib/scoring/types.ts';
import { expectedScores, promptHash, startFakeOpenAIServer } from '../helpers/fake-openai-server.ts';
import { FAST_LIMITS, testProvider } from '../helpers/score-loop.ts';

const KEY = 'sk-test-SECRET-0123456789abcdefXYZ';
const server = await startFakeOpenAIServer({ apiKey: KEY });
after(() => server.close());

const req = (i = 0): ScoreRequest => ({
  itemHash: `item${i}`,
  sampleIndex: 0,
  rubricVersion: 'r1',
  promptVersion: 'p1',
  temperature: 0.7,
  rollout: null,
  messages: [
    { role: 'system', content: 'Grade as JSON.' },
    { role: 'user', content: `attempt number ${i}` },
  ],
});
const signal = (): AbortSignal => new AbortController().signal;

test('a well-formed answer becomes a live, billable sample with its tokens and latency', async () => {
  const out = await testProvider(server.url, KEY).score(req(1), signal());
  assert.ok(out.ok);
  assert.deepEqual(out.sample.scores, expectedScores(promptHash(req(1).messages)));
  assert.equal(out.sample.live, true);
  assert.equal(out.sample.billable, true);
  assert.equal(out.sample.cached, false);
  assert.equal(out.sample.completionTokens, 60);
  assert.ok(out.sample.promptTokens > 0 && out.sample.latencyMs > 0);
});

test('the request carries model, messages, temperature, max_tokens and the preset response_format', async () => {
  for (const [mode, expected] of [
    ['json_schema', 'json_schema'],
    ['json_object', 'json_object'],
    ['none', undefined],
  ] as const) {
    const p = createOpenAICompatibleProvider({
      ...resolveEndpoint({ ...scoringLiveDefaults, base_url: server.url, response_format: mode }),
      apiKey: KEY,
    });
    assert.ok((await p.score(req(2), signal())).ok);
    const body = server.lastBodies.at(-1)!;
    assert.equal(body.model, 'gpt-4o-mini');
    assert.equal(body.temperature, 0.7);
    assert.equal(body.max_tokens, 300);
    assert.equal((body.response_format as { type?: string } | undefined)?.type, expected, mode);
    if (mode === 'json_schema') {
      const schema = (
        body.response_format as {
          json_schema: { strict: boolean; schema: { required: string[]; additionalProperties: boolean } };
        }
      ).json_schema;
      assert.equal(schema.strict, true);
      assert.equal(schema.schema.required.length, 7);
      assert.equal(schema.schema.additionalProperties, false);
    }
  }
});

test('answers that miss a dimension, add a key, leave [0, 1] or are not JSON are rejected, never clamped or defaulted', () => {
  const good = JSON.stringify(expectedScores('00'.repeat(32)));
  assert.ok(parseJudgeAnswer(good).ok);
  assert.ok(parseJudgeAnswer('```json\n' + good + '\n```').ok, 'one fenced JSON object is still exactly that object');
  const bad = [
    JSON.stringify({ ...JSON.parse(good), correctness: undefined }),
    JSON.stringify({ ...JSON.parse(good), helpfulness: 1 }),
    JSON.stringify({ ...JSON.parse(good), clarity: 1.2 }),
    JSON.stringify({ ...JSON.parse(good), clarity: -0.1 }),
    JSON.stringify({ ...JSON.parse(good), clarity: '0.5' }),
    'The answer deserves a 0.8 overall.',
    '',
    `Here you go: ${good}`,
    null,
  ];
  for (const b of bad) assert.equal(parseJudgeAnswer(b).ok, false, String(b));
});

test('a malformed answer is asked again, and recorded as a failure once the retries are spent', async () => {
  const p = testProvider(server.url, KEY, { malformedRetries: 2 });
  server.queue({ kind: 'malformed' }, { kind: 'garbage-body' });
  const recovered = await p.score(req(3), signal());
  assert.ok(recovered.ok, 'third answer is good');
  assert.equal(server.countFor(promptHash(req(3).messages)), 3);
  server.queue({ kind: 'malformed', content: '{"correctness": 2}' }, { kind: 'malformed' }, { kind: 'malformed' });
  const failed = await p.score(req(4), signal());
  assert.ok(!failed.ok);
  assert.equal(failed.attempts, 3);
  assert.equal(failed.retryable, false);
  assert.match(failed.error, /malformed answer .* after 3 attempts/);
});

test("429 and 5xx are thrown as TransportErrors for the limiter, with the server's Retry-After", async () => {
  const p = testProvider(server.url, KEY);
  server.queue({ kind: '429', retryAfter: '7' });
  await assert.rejects(
    p.score(req(5), signal()),
    (e: unknown) => e instanceof TransportError && e.kind === 'rate-limited' && e.retryAfterMs === 7000,
  );
  server.queue({ kind: '5xx', status: 503 });
  await assert.rejects(
    p.score(req(5), signal()),
    (e: unknown) => e instanceof TransportError && e.kind === 'server' && e.status === 503,
  );
});

test('through the limiter, 429s and 5xx are retried; spent retries become a retryable failure', async () => {
  const p = testProvider(server.url, KEY);
  const lim = createRateLimiter({ ...FAST_LIMITS, maxAttempts: 3 });
  server.queue({ kind: '429', retryAfterMs: 30 }, { kind: '5xx' });
  const ok = await scoreLimited(p, lim, req(6), 100);
  assert.ok(ok.ok);
  server.queue({ kind: '5xx' }, { kind: '5xx' }, { kind: '5xx' });
  const spent = await scoreLimited(p, lim, req(7), 100);
  assert.ok(!spent.ok);
  assert.equal(spent.retryable, true);
  assert.equal(spent.attempts, 3);
});

test('a refused key comes back as a retryable failure that names the status but not the key, even when the server echoes it', async () => {
  const wrong = 'sk-wrong-key-ABCDEFGHIJKLMNOP';
  const p = testProvider(server.url, wrong);
  const out = await p.score(req(8), signal());
  assert.ok(!out.ok);
  assert.match(out.error, /HTTP 401/);
  assert.ok(!out.error.includes(wrong) && out.error.includes('***'), out.error);
  assert.equal(out.retryable, true, 'a refused key is not recorded as "do not ask again": a fixed key asks again');
});

test('the API key is in no thrown error, returned object or printed form of the provider', async () => {
  const p = testProvider(server.url, KEY);
  const texts: string[] = [JSON.stringify(p), inspect(p, { depth: 10, showHidden: true })];
  server.queue({ kind: '5xx' }, { kind: '429' }, { kind: 'malformed' }, { kind: 'malformed' }, { kind: 'malformed' });
  for (let i = 0; i < 3; i++) {
    try {
      texts.push(JSON.stringify(await p.score(req(9), signal())));
    } catch (e) {
      texts.push(inspect(e), String((e as Error).stack));
    }
  }
  const dead = testProvider('http://127.0.0.1:9/v1', KEY);
  try {
    await dead.score(req(10), signal());
  } catch (e) {
    texts.push(inspect(e), String((e as Error).stack));
  }
  assert.ok(texts.some((t) => /network error/.test(t)));
  for (const t of texts) assert.ok(!t.includes(KEY), t);
});

test('presets resolve to a base URL, model, key variable and JSON mode; config overrides them', () => {
  assert.deepEqual(Object.keys(PRESETS).sort(), ['deepseek', 'deepseek_r1', 'gemini', 'llamacpp', 'openai', 'vllm']);
  const ds = resolveEndpoint({ ...scoringLiveDefaults, preset: 'deepseek' });
  assert.deepEqual(
    [ds.baseUrl, ds.model, ds.keyEnv, ds.responseFormat, ds.billable],
    ['https://api.deepseek.com/v1', 'deepseek-chat', 'DEEPSEEK_API_KEY', 'json_object', true],
  );
  const local = resolveEndpoint({
    ...scoringLiveDefaults,
    preset: 'llamacpp',
    base_url: 'http://10.0.0.2:8080/v1/',
    model: 'qwen3-judge',
  });
  assert.deepEqual(
    [local.baseUrl, local.model, local.requiresKey, local.billable],
    ['http://10.0.0.2:8080/v1', 'qwen3-judge', false, false],
  );
  assert.ok(ScoringLiveSchema.safeParse(scoringLiveDefaults).success);
  assert.ok(
    !ScoringLiveSchema.safeParse({ ...scoringLiveDefaults, api_key: 'sk-inline' }).success,
    'a key written into config is an unknown key',
  );
  assert.ok(
    !ScoringLiveSchema.safeParse({
      ...scoringLiveDefaults,
      rate: { ...scoringLiveDefaults.rate, concurrency_initial: 9 },
    }).success,
  );
});

test('configs/scoring_live.yaml is valid and states exactly the defaults', async () => {
  const YAML = await import('yaml');
  const text = readFileSync(new URL('../../configs/scoring_live.yaml', import.meta.url), 'utf8');
  const parsed = ScoringLiveSchema.safeParse((YAML.parse(text) as { scoring_live: unknown }).scoring_live);
  assert.ok(parsed.success, JSON.stringify(!parsed.success && parsed.error.issues));
  assert.deepEqual(parsed.data, scoringLiveDefaults);
});

test('the token estimate covers the prompt (4 characters a token) and the completion budget', () => {
  assert.equal(estimateTokens({ messages: [{ role: 'user', content: 'x'.repeat(400) }] }, 300), 400);
});
