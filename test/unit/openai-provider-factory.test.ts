// Choosing the judge: REWARD_LIVE_MODE against the profile; prod never falls back to the
// heuristic, and its failures name the env var and the config key.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createProvider, formatProviderFailure, type CreateProviderInput } from '../../lib/scoring/provider-factory.ts';
import { scoringLiveDefaults } from '../../lib/scoring/presets.ts';
import { startFakeOpenAIServer } from '../helpers/fake-openai-server.ts';

const KEY = 'sk-factory-test-000111222333';
const server = await startFakeOpenAIServer({ apiKey: KEY });
after(() => server.close());

const input = (
  profile: string,
  env: Record<string, string | undefined>,
  config: Record<string, unknown> = { scoring_live: { ...scoringLiveDefaults, base_url: server.url } },
): CreateProviderInput => ({
  profile,
  env,
  config,
  heuristic: { jitter: 0.02, ambiguityJitter: 0.1 },
});

test('dev uses the heuristic by default, and the live judge when REWARD_LIVE_MODE asks for it', () => {
  const dev = createProvider(input('dev', {}));
  assert.ok(dev.ok);
  assert.equal(dev.value.mode, 'heuristic');
  assert.deepEqual(
    [dev.value.provider.provider, dev.value.provider.live, dev.value.provider.billable],
    ['heuristic', false, false],
  );
  for (const v of ['1', 'true', 'live', 'ON']) {
    const live = createProvider(input('dev', { REWARD_LIVE_MODE: v, OPENAI_API_KEY: KEY }));
    assert.ok(live.ok && live.value.mode === 'live', v);
    assert.deepEqual(
      [live.value.provider.provider, live.value.provider.model, live.value.provider.live],
      ['openai', 'gpt-4o-mini', true],
    );
  }
});

test('prod uses the live judge by default and it answers through the configured endpoint', async () => {
  const r = createProvider(input('prod', { OPENAI_API_KEY: KEY }));
  assert.ok(r.ok && r.value.mode === 'live');
  assert.ok(
    !JSON.stringify(r.value.endpoint).includes(KEY),
    'the resolved endpoint holds the variable name, not the key',
  );
  const out = await r.value.provider.score(
    {
      itemHash: 'x',
      sampleIndex: 0,
      rubricVersion: 'r',
      promptVersion: 'p',
      temperature: 0.5,
      rollout: null,
      messages: [{ role: 'user', content: 'json please' }],
    },
    new AbortController().signal,
  );
  assert.ok(out.ok && out.sample.live);
});

test('prod refuses the heuristic when REWARD_LIVE_MODE asks for it', () => {
  const r = createProvider(input('prod', { REWARD_LIVE_MODE: '0', OPENAI_API_KEY: KEY }));
  assert.ok(!r.ok);
  assert.equal(r.failure.reason, 'live-required-in-prod');
  assert.match(
    formatProviderFailure(r.failure),
    /RUN_MODE=prod requires the live judge.*\(env: REWARD_LIVE_MODE\)\n  hint: /s,
  );
});

test('prod without the key fails naming the env var and the config key; dev falls back visibly', () => {
  const prod = createProvider(input('prod', {}));
  assert.ok(!prod.ok);
  assert.equal(prod.failure.reason, 'missing-api-key');
  assert.equal(prod.failure.envVar, 'OPENAI_API_KEY');
  assert.equal(prod.failure.configKey, 'scoring_live.api_key_env');
  assert.match(
    formatProviderFailure(prod.failure),
    /\$OPENAI_API_KEY, which is not set.*secrets: \['OPENAI_API_KEY'\]/s,
  );
  const renamed = createProvider(
    input('prod', {}, { scoring_live: { ...scoringLiveDefaults, api_key_env: 'JUDGE_KEY' } }),
  );
  assert.ok(!renamed.ok && renamed.failure.envVar === 'JUDGE_KEY');
  const dev = createProvider(input('dev', { REWARD_LIVE_MODE: '1' }));
  assert.ok(dev.ok);
  assert.equal(dev.value.mode, 'heuristic');
  assert.match(dev.value.note, /falling back to the heuristic provider \(dev\).*OPENAI_API_KEY/);
});

test('a local server preset needs no key', () => {
  const r = createProvider(
    input('prod', {}, { scoring_live: { ...scoringLiveDefaults, preset: 'vllm', base_url: server.url } }),
  );
  assert.ok(r.ok && r.value.mode === 'live');
  assert.equal(r.value.provider.billable, false);
});

test('a missing or invalid scoring_live config and an unreadable REWARD_LIVE_MODE are failures, not fallbacks', () => {
  const missing = createProvider(input('prod', { OPENAI_API_KEY: KEY }, {}));
  assert.ok(!missing.ok && missing.failure.reason === 'missing-config' && missing.failure.configKey === 'scoring_live');
  const invalid = createProvider(
    input(
      'prod',
      { OPENAI_API_KEY: KEY },
      { scoring_live: { ...scoringLiveDefaults, rate: { ...scoringLiveDefaults.rate, burst: 0 } } },
    ),
  );
  assert.ok(!invalid.ok && invalid.failure.reason === 'invalid-config');
  assert.equal(invalid.failure.configKey, 'scoring_live.rate.burst');
  const bad = createProvider(input('dev', { REWARD_LIVE_MODE: 'maybe' }));
  assert.ok(!bad.ok && bad.failure.reason === 'bad-live-mode');
});
