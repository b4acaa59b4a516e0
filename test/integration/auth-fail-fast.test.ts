// A refused API key stops a build fast, through the CLI, against the fake OpenAI-compatible server
// (it answers 401 to a wrong key and echoes the Authorization header it got, JSON-escaped, as real
// APIs do). The judge stops after a few refusals; the policy endpoint after the first. The failure
// names the key's variable, and no encoding of the key reaches the console or any file.
//   fixtures/rollouts.jsonl --> scores_prod (RUN_MODE=prod, live judge)
//   fixtures/scenarios.jsonl --> rollouts_shadow (rollouts.source: openai)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestRig } from '../helpers/rig.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.ts';
import { LIVE_YAML, fixtureRollouts, scoringRig, toJsonlText } from '../helpers/scoring-fixtures.ts';
import { secretForms } from '../../packages/engine/src/util/redact-secrets.ts';

/** A wrong key with the characters that escape differently in JSON, URLs and base64. */
const WRONG = 'sk-wr"ong\\key+with/slash=and-more-0123456789';
let server: FakeOpenAIServer;
let rig: TestRig;

/** Runs the CLI without blocking this process's event loop (the fake server lives in it). */
function runAsync(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = rig.spawn(args, env);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('exit', (code) => resolve({ code, out }));
  });
}

function allFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

function assertNoKey(where: string, text: string | Buffer): void {
  for (const form of secretForms(WRONG))
    assert.ok(!text.includes(form), `${where} holds the key as ${JSON.stringify(form)}`);
}

before(async () => {
  server = await startFakeOpenAIServer({ apiKey: 'sk-the-right-key-000000000000' });
  rig = await scoringRig();
  rig.write('fixtures/rollouts.jsonl', toJsonlText(await fixtureRollouts(8)));
  rig.write(
    'configs/scoring_live.yaml',
    LIVE_YAML(server.url)
      .replace(/requests_per_s: \d+/, 'requests_per_s: 2000')
      .replace(/burst: \d+/, 'burst: 50'),
  );
});

after(async () => {
  rig.cleanup();
  await server.close();
});

test('a live judge that refuses the key stops after a few calls with one message naming the variable', async () => {
  server.reset();
  const t0 = performance.now();
  const r = await runAsync(['scores_prod'], { JUDGE_KEY: WRONG, REWARD_LIVE_MODE: '1', RUN_MODE: 'prod' });
  const ms = performance.now() - t0;
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /refused the API key in \$JUDGE_KEY: HTTP 401 on 3 calls in a row/);
  assert.match(r.out, /check the value of JUDGE_KEY/);
  assert.ok(!/ at .*\.js:\d+/.test(r.out), 'no stack trace');
  // 96 rollouts × K = 3 samples: before, every one of the 288 was asked (and its retries).
  assert.ok(server.stats.requests >= 3 && server.stats.requests <= 20, `${server.stats.requests} requests`);
  assert.ok(ms < 30_000, `took ${ms.toFixed(0)} ms`);
  assertNoKey('the console', r.out);
  for (const f of allFiles(rig.dir)) assertNoKey(f, fs.readFileSync(f));
});

test('a policy endpoint that refuses the key fails the rollouts at the first refusal, naming the variable', async () => {
  server.reset();
  const yaml = fs
    .readFileSync(path.join(rig.dir, 'configs/scoring.yaml'), 'utf8')
    .replace(/source: synthetic/, 'source: openai')
    .replace(/base_url: http:\/\/127\.0\.0\.1:8000\/v1/, `base_url: ${server.url}`);
  rig.write('configs/scoring.yaml', yaml);
  const r = await runAsync(['rollouts_shadow'], { POLICY_API_KEY: WRONG });
  assert.equal(r.code, 1, r.out);
  assert.match(
    r.out,
    /the policy endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions refused the API key in \$POLICY_API_KEY: HTTP 401/,
  );
  assert.ok(
    server.stats.requests >= 1 && server.stats.requests <= 4,
    `${server.stats.requests} requests (concurrency 4)`,
  );
  assertNoKey('the console', r.out);
  for (const f of allFiles(rig.dir)) assertNoKey(f, fs.readFileSync(f));
});
