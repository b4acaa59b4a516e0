// `rc1-build scorecache stat | invalidate --spec | replay-bad` through runScorecache, given the
// resolved config as the engine hands it to a command (scoring_live.cache points the cache at a
// file of its own). test/integration/scorecache-command.test.ts runs it through the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runScorecache } from '../../lib/scoring/cache-cli.ts';
import { openScoreCache, type ScoreCacheKey } from '../../lib/scoring/score-cache.ts';
import type { ScoreSample } from '../../lib/scoring/types.ts';

const DAY = 86_400_000;

function workspace(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-cachecli-'));
  return root;
}

const sample: ScoreSample = {
  provider: 'openai',
  model: 'gpt-4o-mini',
  live: true,
  billable: true,
  latencyMs: 500,
  promptTokens: 800,
  completionTokens: 60,
  cached: false,
  scores: { correctness: 1, reasoning: 1, clarity: 1, conciseness: 1, clarification: 1, tool_use: 1, format_safety: 1 },
};

/** 3 items × 3 samples under openai r1, 2 under deepseek r2 (10 days old), one unstable item, one failure, some lookups. */
async function seed(root: string): Promise<void> {
  const now = Date.now();
  let clock = now - 10 * DAY;
  const r = await openScoreCache({
    path: path.join(root, 'state', 'judge.sqlite'),
    ttlDays: 7,
    synchronous: 'normal',
    now: () => clock,
  });
  assert.ok(r.ok);
  const c = r.cache;
  const k = (p: string, m: string, rv: string, item: string, s: number): ScoreCacheKey => ({
    provider: p,
    model: m,
    rubricVersion: rv,
    promptVersion: 'p1',
    itemHash: item,
    sampleIndex: s,
  });
  for (let s = 0; s < 2; s++)
    c.put(k('deepseek', 'deepseek-chat', 'r2', 'f'.repeat(64), s), {
      ...sample,
      provider: 'deepseek',
      model: 'deepseek-chat',
    });
  clock = now;
  for (const item of ['a', 'b', 'c'])
    for (let s = 0; s < 3; s++) c.put(k('openai', 'gpt-4o-mini', 'r1', item.repeat(64), s), sample);
  c.get(k('openai', 'gpt-4o-mini', 'r1', 'a'.repeat(64), 0));
  c.get(k('openai', 'gpt-4o-mini', 'r1', 'a'.repeat(64), 1));
  c.get(k('openai', 'gpt-4o-mini', 'r1', 'a'.repeat(64), 2));
  c.get(k('openai', 'gpt-4o-mini', 'r1', 'd'.repeat(64), 0));
  c.markUnstable(
    { provider: 'openai', model: 'gpt-4o-mini', rubricVersion: 'r1', promptVersion: 'p1', itemHash: 'b'.repeat(64) },
    0.12,
  );
  c.recordFailure(k('openai', 'gpt-4o-mini', 'r1', 'e'.repeat(64), 0), {
    error: 'malformed answer',
    attempts: 3,
    retryable: false,
  });
  c.close();
}

async function cli(root: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const config = { scoring_live: { cache: { path: 'state/judge.sqlite', ttl_days: 7, synchronous: 'normal' } } };
  const code = await runScorecache(argv, {
    root,
    config,
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
  });
  return { code, out, err };
}

test('stat reports entries, expired, failures, unstable items and hit rate per provider, model and version', async () => {
  const root = workspace();
  await seed(root);
  const text = await cli(root, 'stat');
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /^score cache state\/judge\.sqlite \(format v1, TTL 7 d\)\n/);
  assert.match(text.out, /entries 11 \(expired 2\) · failed samples 1 · unstable items 1 · set aside 0\n/);
  assert.match(text.out, /lookups 4: hits 3, misses 1, expired 0 · hit rate 75\.0 %\n/);
  assert.match(text.out, /\ndeepseek +deepseek-chat +r2 +p1 +2 +2 +2 +0 +0 +0\.0 %/);
  assert.match(text.out, /\nopenai +gpt-4o-mini +r1 +p1 +9 +0 +9 +3 +1 +75\.0 %/);
  const json = await cli(root, 'stat', '--json');
  const s = JSON.parse(json.out) as {
    entries: number;
    expired: number;
    lookups: { hit_rate: number };
    groups: { provider: string }[];
  };
  assert.deepEqual(
    [s.entries, s.expired, s.lookups.hit_rate, s.groups.map((g) => g.provider)],
    [11, 2, 0.75, ['deepseek', 'openai']],
  );
});

test('invalidate --spec removes what the spec selects and says how many', async () => {
  const root = workspace();
  await seed(root);
  const dry = await cli(root, 'invalidate', '--spec', 'provider=deepseek,rubric<r3', '--dry-run');
  assert.equal(
    dry.out,
    'invalidate provider=deepseek,rubric<r3: would remove 2 cached samples, 0 failure records, 0 unstable marks\n',
  );
  const r = await cli(root, 'invalidate', '--spec', 'provider=openai,model=gpt-4o-mini,item=b');
  assert.equal(
    r.out,
    'invalidate provider=openai,model=gpt-4o-mini,item=b: removed 3 cached samples, 0 failure records, 1 unstable marks\n',
  );
  const expired = await cli(root, 'invalidate', '--spec', 'expired', '--json');
  assert.deepEqual(JSON.parse(expired.out), { dry_run: false, spec: 'expired', scores: 2, failures: 0, unstable: 0 });
  assert.match((await cli(root, 'stat')).out, /entries 6 \(expired 0\)/);
});

test('a bad --spec is a usage error with a hint, and nothing is removed', async () => {
  const root = workspace();
  await seed(root);
  for (const [spec, re] of [
    ['provdier=openai', /unknown field "provdier".*did you mean "provider"\?/s],
    ['model<gpt-5', /"<" does not apply to model/],
    ['older-than=7 days', /bad age.*older-than=7d/s],
    ['', /empty --spec.*--spec all/s],
  ] as const) {
    const r = await cli(root, 'invalidate', '--spec', spec);
    assert.equal(r.code, 64, spec);
    assert.match(r.err, re);
  }
  assert.equal((await cli(root, 'invalidate')).code, 64);
  assert.equal((await cli(root, 'prune')).code, 64);
  assert.match((await cli(root, 'stat')).out, /entries 11 /);
});

test('replay-bad sets aside unstable items and clears failures, and says what to run next', async () => {
  const root = workspace();
  await seed(root);
  const dry = await cli(root, 'replay-bad', '--dry-run');
  assert.equal(dry.out, 'replay-bad (dry run): 1 unstable items and 1 failed samples would be re-scored\n');
  const r = await cli(root, 'replay-bad');
  assert.equal(r.code, 0);
  assert.equal(
    r.out,
    'replay-bad: 1 unstable items (3 samples set aside, kept in the file) and 1 failed samples will be re-scored\n' +
      'next: rc1-build --force scores  (asks the provider again for exactly these samples; all others come from the cache)\n',
  );
  assert.match(
    (await cli(root, 'stat')).out,
    /entries 8 \(expired 2\) · failed samples 0 · unstable items 0 · set aside 3/,
  );
});

test('without a cache file, stat says nothing has been scored and creates nothing; --db picks another file', async () => {
  const root = workspace();
  const r = await cli(root, 'stat');
  assert.deepEqual(r, { code: 0, out: 'no score cache at state/judge.sqlite: nothing has been scored yet\n', err: '' });
  assert.ok(!fs.existsSync(path.join(root, 'state')));
  await seed(root);
  fs.renameSync(path.join(root, 'state'), path.join(root, 'elsewhere'));
  assert.match((await cli(root, 'stat', '--db', 'elsewhere/judge.sqlite')).out, /entries 11/);
});
