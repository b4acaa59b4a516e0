// The openai rollout source (lib/rollouts/openai-source.ts, policy-client.ts, calc.ts): the agent
// loop against a scripted PolicyClient, and the fetch client against a loopback HTTP server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRng } from '../../packages/engine/src/api/index.ts';
import type { Scenario } from '../../lib/data/index.ts';
import {
  createFetchPolicyClient,
  evaluate,
  lookupDoc,
  openAiRollouts,
  parseAction,
  playEpisode,
  type ChatMessage,
  type PolicyClient,
} from '../../lib/rollouts/index.ts';
import { fixtureScenarios } from '../helpers/scoring-fixtures.ts';

function scripted(replies: string[], seen: ChatMessage[][] = []): PolicyClient {
  let i = 0;
  return {
    model: 'scripted-policy',
    complete(messages) {
      seen.push(messages.map((m) => ({ ...m })));
      const content = replies[Math.min(i++, replies.length - 1)]!;
      return Promise.resolve({ content, promptTokens: 10, completionTokens: 5, latencyMs: 1 });
    },
  };
}

const base = {
  candidates: 1,
  seed: 5,
  temperature: 0.7,
  maxTokens: 256,
  maxSteps: 6,
  concurrency: 2,
  signal: new AbortController().signal,
};

async function hotpot(): Promise<Scenario> {
  return (await fixtureScenarios(3)).find((s) => s.task === 'hotpotqa' && s.needs_clarification)!;
}

test('an episode records tool calls, the clarifying exchange and the answer, and computes success', async () => {
  const s = await hotpot();
  const title = s.context.find((d) => d.supporting)!.title;
  const seen: ChatMessage[][] = [];
  const client = scripted(
    [
      JSON.stringify({ thought: 'I should look this up.', action: 'tool', tool: 'wiki', input: title }),
      `<think>long hidden reasoning</think>\n\`\`\`json\n${JSON.stringify({ thought: '', action: 'ask', question: 'Which one do you mean?' })}\n\`\`\``,
      JSON.stringify({ thought: 'Now I know.', action: 'answer', answer: s.gold_answer }),
    ],
    seen,
  );
  const r = await playEpisode(s, 0, { ...base, client });
  assert.deepEqual(
    r.trajectory.steps.map((x) => x.type),
    ['thought', 'tool_call', 'clarify', 'thought'],
  );
  const call = r.trajectory.steps[1]!;
  assert.ok(call.type === 'tool_call' && call.tool === 'wiki' && call.output.startsWith(`${title}: `));
  const ask = r.trajectory.steps[2]!;
  assert.ok(ask.type === 'clarify' && ask.reply === s.clarification);
  assert.equal(r.trajectory.final_answer, s.gold_answer);
  assert.equal(r.success, true);
  assert.equal(r.source, 'openai');
  assert.equal(r.policy, 'scripted-policy');
  assert.deepEqual(
    r.error_modes.filter((m) => m !== 'missing_tool_call'),
    [],
  );
  assert.equal(seen[1]!.at(-1)!.content.startsWith('Observation from wiki: '), true);
  assert.equal(seen[2]!.at(-1)!.content, s.clarification);
});

test('a reply that is not an action is the final answer in prose, and the step limit ends an episode without one', async () => {
  const s = await hotpot();
  const prose = await playEpisode(s, 0, {
    ...base,
    client: scripted(['<think>hmm</think> It is definitely not known.']),
  });
  assert.equal(prose.trajectory.final_answer, 'It is definitely not known.');
  assert.equal(prose.success, false);
  const looping = await playEpisode(s, 0, {
    ...base,
    maxSteps: 3,
    client: scripted([JSON.stringify({ thought: 't', action: 'tool', tool: 'wiki', input: 'x' })]),
  });
  assert.equal(looping.trajectory.final_answer, '');
  assert.equal(looping.tool_calls, 3);
});

test('N candidates per scenario come back in scenario then candidate order whatever order the calls finish in', async () => {
  const scenarios = (await fixtureScenarios(2)).slice(0, 3);
  let n = 0;
  const client: PolicyClient = {
    model: 'm',
    async complete() {
      const k = n++;
      await new Promise((r) => setTimeout(r, (7 * k) % 5));
      return {
        content: JSON.stringify({ thought: '', action: 'answer', answer: String(k) }),
        promptTokens: 0,
        completionTokens: 0,
        latencyMs: 1,
      };
    },
  };
  const rs = await openAiRollouts(scenarios, { ...base, candidates: 3, concurrency: 4, client });
  assert.deepEqual(
    rs.map((r) => r.rollout_id),
    scenarios.flatMap((s) => [0, 1, 2].map((c) => `${s.id}#${c}`)),
  );
});

test('parseAction accepts the three actions and rejects anything else', () => {
  assert.deepEqual(parseAction('{"action":"answer","answer":42}'), { action: 'answer', thought: '', answer: '42' });
  assert.deepEqual(parseAction('{"thought":"t","action":"ask","question":"q?"}'), {
    action: 'ask',
    thought: 't',
    question: 'q?',
  });
  assert.equal(parseAction('{"action":"fly"}'), null);
  assert.equal(parseAction('The answer is 4.'), null);
});

test('the wiki tool finds a document by exact title, case-insensitively, then by shared words', async () => {
  const s = await hotpot();
  const d = s.context[0]!;
  assert.equal(lookupDoc(s.context, d.title), d);
  assert.equal(lookupDoc(s.context, d.title.toUpperCase()), d);
  assert.equal(lookupDoc(s.context, 'zzzz qqqq'), null);
});

test('the calc tool evaluates arithmetic without eval', () => {
  assert.deepEqual(evaluate('92/4'), { ok: true, value: 23, text: '23' });
  const text = (e: string): string | null => {
    const r = evaluate(e);
    return r.ok ? r.text : null;
  };
  assert.equal(text('(5 + 3) * 2 - 1,000 / 10'), '-84');
  assert.equal(text('2^3^2'), '512');
  assert.equal(text('0.1 + 0.2'), '0.3');
  assert.equal(text('-(4) * 2.5'), '-10');
  assert.equal(evaluate('1/0').ok, false);
  assert.equal(evaluate('process.exit()').ok, false);
});

interface Seen {
  auth: string | undefined;
  body: Record<string, unknown>;
}

async function server(
  handler: (n: number, req: IncomingMessage) => { status: number; headers?: Record<string, string>; body: string },
): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const srv = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => {
      data += c.toString();
    });
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization, body: JSON.parse(data) as Record<string, unknown> });
      const out = handler(seen.length, req);
      res.writeHead(out.status, { 'content-type': 'application/json', ...(out.headers ?? {}) });
      res.end(out.body);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise((r) => srv.close(() => r())) };
}

const ok = (content: string) => ({
  status: 200,
  body: JSON.stringify({ choices: [{ message: { content } }], usage: { prompt_tokens: 12, completion_tokens: 3 } }),
});
const opts = { temperature: 0.5, maxTokens: 64, seed: 9 };

test('the fetch policy client sends model, messages and seed with the key, and retries a 429 after Retry-After', async () => {
  const KEY = 'sk-policy-test-0123456789';
  const s = await server((n) =>
    n === 1 ? { status: 429, headers: { 'retry-after': '0' }, body: '{"error":"slow down"}' } : ok('hello'),
  );
  const slept: number[] = [];
  try {
    const client = createFetchPolicyClient({
      baseUrl: `${s.url}/`,
      model: 'policy-m',
      apiKey: KEY,
      timeoutMs: 5000,
      maxRetries: 2,
      rng: createRng(1),
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    const r = await client.complete([{ role: 'user', content: 'hi' }], opts, new AbortController().signal);
    assert.equal(r.content, 'hello');
    assert.equal(r.promptTokens, 12);
    assert.deepEqual(slept, [0], 'Retry-After: 0 is honoured instead of the backoff');
    assert.equal(s.seen.length, 2);
    assert.equal(s.seen[0]!.auth, `Bearer ${KEY}`);
    assert.deepEqual(s.seen[1]!.body, {
      model: 'policy-m',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.5,
      max_tokens: 64,
      seed: 9,
    });
  } finally {
    await s.close();
  }
});

test('the fetch policy client fails at once on a 400, gives up after its retries on 500s, and never names the key', async () => {
  const KEY = 'sk-policy-secret-abcdef';
  const s = await server((_, req) =>
    req.url?.includes('bad') ? { status: 400, body: 'bad request' } : { status: 500, body: 'oops' },
  );
  try {
    const mk = (path: string) =>
      createFetchPolicyClient({
        baseUrl: `${s.url}${path}`,
        model: 'm',
        apiKey: KEY,
        timeoutMs: 5000,
        maxRetries: 2,
        rng: createRng(1),
        sleep: async () => {},
      });
    await assert.rejects(
      mk('/bad').complete([{ role: 'user', content: 'x' }], opts, new AbortController().signal),
      (e: Error) => {
        assert.match(e.message, /HTTP 400: bad request/);
        assert.ok(!e.message.includes(KEY));
        return true;
      },
    );
    assert.equal(s.seen.length, 1);
    await assert.rejects(
      mk('').complete([{ role: 'user', content: 'x' }], opts, new AbortController().signal),
      /HTTP 500/,
    );
    assert.equal(s.seen.length, 4, 'one try and two retries');
    const noKey = createFetchPolicyClient({ baseUrl: s.url, model: 'm', timeoutMs: 5000, maxRetries: 0 });
    await assert.rejects(noKey.complete([{ role: 'user', content: 'x' }], opts, new AbortController().signal));
    assert.equal(s.seen.at(-1)!.auth, undefined, 'no key, no Authorization header');
  } finally {
    await s.close();
  }
});
