// The score-cache key covers the judge: the same judge spec scores from the cache; a change of any
// one part of it — prompt template text, rubric, model, endpoint, temperature, top-p, max tokens,
// K, provider, answer-parser version — asks the judge again. Against the fake OpenAI-compatible
// server with the SQLite score cache, through the scoring driver; `scorecache stat` lists the
// spec hashes present.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  MAX_TOOL_OUTPUT_CHARS,
  createOpenAICompatibleProvider,
  judgeSpec,
  judgeUserPrompt,
  openScoreCache,
  probeRollouts,
  promptKey,
  promptTemplateText,
  resolveEndpoint,
  scoreItems,
  scoringLiveDefaults,
  specHash,
  toScoreItem,
  type JudgeSpec,
  type JudgeSpecInput,
  type ScoreCache,
} from '../../lib/scoring/index.ts';
import { cacheStat } from '../../lib/scoring/cache-cli.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.ts';
import { fixtureRollouts } from '../helpers/scoring-fixtures.ts';

let server: FakeOpenAIServer;
let dir: string;
let cache: ScoreCache;
before(async () => {
  server = await startFakeOpenAIServer();
  dir = mkdtempSync(join(tmpdir(), 'rc1-spec-'));
  const opened = await openScoreCache({ path: join(dir, 'scores.sqlite'), ttlDays: 14, synchronous: 'normal' });
  assert.ok(opened.ok);
  cache = opened.cache;
});
after(async () => {
  cache.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const base = (): JudgeSpecInput => ({
  provider: 'vllm',
  model: 'judge-a',
  endpoint: server.url,
  temperature: 0.2,
  topP: null,
  maxTokens: 300,
  responseFormat: 'json_schema',
  k: 1,
});

/** Scores the fixture rollouts under a spec; returns how many requests reached the server. */
async function score(spec: JudgeSpec): Promise<number> {
  const before = server.stats.requests;
  const endpoint = {
    ...resolveEndpoint({ ...scoringLiveDefaults, preset: 'vllm', base_url: server.url }),
    provider: spec.provider,
    model: spec.model,
    maxTokens: spec.maxTokens ?? 300,
  };
  const provider = createOpenAICompatibleProvider({ ...endpoint, apiKey: undefined });
  const items = (await fixtureRollouts(1, 1)).map(toScoreItem);
  const run = await scoreItems(items, {
    providerFor: () => provider,
    k: spec.k,
    temperature: spec.temperature,
    promptKey: promptKey(spec),
    cache,
    signal: new AbortController().signal,
  });
  assert.equal(run.results.filter((r) => r.status !== 'scored').length, 0);
  return server.stats.requests - before;
}

test('the same judge spec is served from the cache; changing any one part of it asks the judge again', async () => {
  const spec = judgeSpec(base());
  const first = await score(spec);
  assert.ok(first > 0);
  assert.equal(await score(judgeSpec(base())), 0, 'same spec: every sample from the cache');
  const changes: [string, JudgeSpec][] = [
    ['prompt template text', { ...spec, promptTemplateSha256: 'f'.repeat(64) }],
    ['rubric', { ...spec, rubricSha256: 'e'.repeat(64) }],
    ['model', judgeSpec({ ...base(), model: 'judge-b' })],
    ['endpoint', judgeSpec({ ...base(), endpoint: 'http://127.0.0.1:1/v1' })],
    ['temperature', judgeSpec({ ...base(), temperature: 0.7 })],
    ['top-p', judgeSpec({ ...base(), topP: 0.9 })],
    ['max tokens', judgeSpec({ ...base(), maxTokens: 600 })],
    ['K', judgeSpec({ ...base(), k: 2 })],
    ['provider', judgeSpec({ ...base(), provider: 'vllm-b' })],
    ['parser version', { ...spec, parserVersion: 'rc1-parser-v2' }],
  ];
  const hashes = new Set([specHash(spec)]);
  for (const [what, changed] of changes) {
    hashes.add(specHash(changed));
    assert.ok((await score(changed)) > 0, `${what} changed: rescored`);
  }
  assert.equal(hashes.size, changes.length + 1, 'every change gives another spec hash');
  const stat = cacheStat(cache);
  const present = new Set(stat.groups.map((g) => g.prompt_version.replace(/^.*\+spec\./, '')));
  for (const h of hashes) assert.ok(present.has(h), `scorecache stat lists spec ${h}`);
});

test('the spec hashes the rendered template and rubric text, so an edit of either changes it', () => {
  const spec = judgeSpec(base());
  assert.match(spec.promptTemplateSha256, /^[0-9a-f]{64}$/);
  assert.match(promptKey(spec), /^rc1-judge-v1\+spec\.[0-9a-f]{12}$/);
  assert.equal(specHash(judgeSpec(base())), specHash(spec), 'deterministic');
});

test("the hashed template renders every branch of the user message, so editing any branch's text changes the key", () => {
  const text = promptTemplateText();
  const branches: [string, string][] = [
    [
      'needs clarification, with the reply',
      'This request is missing information; a good assistant asks for it. If asked, the user reveals: {reply}',
    ],
    ['needs clarification, no reply', 'If asked, the user reveals: (nothing)'],
    ['complete as written', 'This request is complete as written; no clarifying question is needed.'],
    ['tools listed', 'Tools available to the assistant: wiki, calc'],
    ['no tools', 'Tools available to the assistant: none'],
    [
      'steps of each kind',
      '1. [asks the user] {ask}\n   [user replies] {reply}\n2. [calls calc] {input}\n   [calc returns] {output}\n3. [thinks] {thought}',
    ],
    ['no steps', "The assistant's attempt:\n(no steps)"],
    [
      'a tool output longer than the cut',
      `[calc returns] ${'{output}'.padEnd(MAX_TOOL_OUTPUT_CHARS, 'x')}… [1 more characters]`,
    ],
    ['a final answer', 'Final answer: {answer}'],
    ['no final answer', 'Final answer: (none)'],
  ];
  for (const [what, rendered] of branches) assert.ok(text.includes(rendered), `the probes render: ${what}`);
  // Each probe adds lines no other probe of its task renders: dropping any one would leave a branch out of the hash.
  for (const task of ['gsm8k', 'hotpotqa', 'strategyqa'] as const) {
    const lines = probeRollouts(task).map((r) => new Set(judgeUserPrompt(r).split('\n')));
    lines.forEach((own, i) => {
      const others = new Set(lines.filter((_, j) => j !== i).flatMap((l) => [...l]));
      assert.ok(
        [...own].some((l) => !others.has(l)),
        `${task} probe ${i} renders a branch the others do not`,
      );
    });
  }
});
