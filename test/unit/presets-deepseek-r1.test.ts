// The DeepSeek-R1 judge preset and the limiter's starting concurrency (the planning notes' values).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveEndpoint, ScoringLiveSchema, scoringLiveDefaults } from '../../lib/scoring/presets.ts';

test('the deepseek_r1 preset asks deepseek-reasoner on the DeepSeek API with the DeepSeek key, answers parsed from plain text', () => {
  const r1 = resolveEndpoint({ ...scoringLiveDefaults, preset: 'deepseek_r1', max_tokens: 4096 });
  assert.deepEqual(
    [r1.baseUrl, r1.model, r1.keyEnv, r1.responseFormat, r1.billable, r1.requiresKey],
    ['https://api.deepseek.com/v1', 'deepseek-reasoner', 'DEEPSEEK_API_KEY', 'none', true, true],
  );
});

test('the deepseek_r1 preset refuses a max_tokens too small for its reasoning, naming the field', () => {
  const bad = ScoringLiveSchema.safeParse({ ...scoringLiveDefaults, preset: 'deepseek_r1' });
  assert.ok(!bad.success);
  assert.deepEqual(bad.error.issues[0]!.path, ['max_tokens']);
  assert.match(bad.error.issues[0]!.message, /at least 4096, got 300/);
  assert.ok(ScoringLiveSchema.safeParse({ ...scoringLiveDefaults, preset: 'deepseek_r1', max_tokens: 4096 }).success);
});

test('the limiter starts at concurrency 5 and adapts within 2..8', () => {
  const { concurrency_min, concurrency_initial, concurrency_max } = scoringLiveDefaults.rate;
  assert.deepEqual([concurrency_min, concurrency_initial, concurrency_max], [2, 5, 8]);
});
