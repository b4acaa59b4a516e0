// The scores target with the live judge, end to end through the CLI, against an OpenAI-compatible
// judge server the test starts on a loopback port (it counts requests and checks the key):
//   fixtures/rollouts.jsonl --> scores_prod (RUN_MODE=prod, live judge, SQLite score cache)
//   fixtures/scores.jsonl   --> not_simulated_prod
// A build killed mid-scoring and rebuilt asks the server only for the samples not yet stored,
// a rebuild with everything cached asks nothing (and not_simulated then flags the hit rate),
// and the API key appears in no file the build writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import type { TestRig } from '../helpers/rig.ts';
import { LIVE_YAML, scoringRig } from '../helpers/scoring-fixtures.ts';

const KEY = 'sk-judge-test-5f3e9a1c7b2d4e6f';
const DIMS = ['correctness', 'reasoning', 'clarity', 'conciseness', 'clarification', 'tool_use', 'format_safety'];

interface Judge {
  url: string;
  requests: () => number;
  badKeys: () => number;
  close: () => Promise<void>;
}

async function judgeServer(delayMs: number): Promise<Judge> {
  let n = 0;
  let bad = 0;
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      n++;
      if (req.headers.authorization !== `Bearer ${KEY}`) bad++;
      const user = String((JSON.parse(body) as { messages: { content: string }[] }).messages[1]?.content ?? '');
      const v = (user.length % 10) / 10;
      const content = JSON.stringify(Object.fromEntries(DIMS.map((d, i) => [d, Math.min(1, v + i / 100)])));
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ choices: [{ message: { content } }], usage: { prompt_tokens: 400, completion_tokens: 40 } }),
        );
      }, delayMs);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => n,
    badKeys: () => bad,
    close: () =>
      new Promise((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

function fastLive(url: string): string {
  return LIVE_YAML(url)
    .replace(/requests_per_s: \d+/, 'requests_per_s: 2000')
    .replace(/burst: \d+/, 'burst: 50')
    .replace(/tokens_per_min: \d+/, 'tokens_per_min: 100000000');
}

function runAsync(
  rig: TestRig,
  args: string[],
  env: Record<string, string>,
  killWhen?: () => boolean,
): Promise<{ code: number | null; out: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = rig.spawn(args, env);
    let out = '';
    let killed = false;
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const timer = killWhen
      ? setInterval(() => {
          if (!killed && killWhen()) {
            killed = true;
            child.kill('SIGKILL');
          }
        }, 2)
      : undefined;
    child.on('exit', (code) => {
      if (timer) clearInterval(timer);
      resolve({ code, out, killed });
    });
  });
}

function allFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

test('a killed live scoring build resumes without re-asking stored samples, a cached rebuild asks nothing, and the key is in no file', async () => {
  const judge = await judgeServer(3);
  const rig = await scoringRig();
  try {
    const dev = { JUDGE_KEY: '', REWARD_LIVE_MODE: '', RUN_MODE: 'dev' };
    assert.equal(rig.run(['rollouts_shadow'], dev).code, 0);
    rig.write('fixtures/rollouts.jsonl', rig.read('data/rollouts/shadow_rollouts.jsonl'));
    rig.write('configs/scoring_live.yaml', fastLive(judge.url));
    const prod = { JUDGE_KEY: KEY, REWARD_LIVE_MODE: '1', RUN_MODE: 'prod' };
    const total = 96 * 3;

    const killed = await runAsync(rig, ['scores_prod'], prod, () => judge.requests() >= 100);
    assert.ok(killed.killed, killed.out);
    const db = new Database(path.join(rig.dir, '.rc1/scorecache.sqlite'), { readonly: true });
    const stored = (db.prepare('SELECT COUNT(*) AS n FROM scores').get() as { n: number }).n;
    db.close();
    const before = judge.requests();
    assert.ok(stored >= 90 && stored <= before, `stored ${stored} of ${before} answered`);

    const resumed = await runAsync(rig, ['scores_prod'], prod);
    assert.equal(resumed.code, 0, resumed.out);
    assert.equal(judge.requests() - before, total - stored, 'the rebuild asks exactly for the samples not stored');
    const m = JSON.parse(rig.read('prod/scorer_metrics.json'));
    assert.deepEqual(
      [m.mode, m.calls, m.cache_hits, m.billable_calls, m.failed_items],
      ['live', total - stored, stored, total - stored, 0],
    );
    assert.ok(m.p95_latency_ms > 0 && m.avg_latency_ms > 0 && m.rps > 0);
    assert.equal(typeof m['429_rate'], 'number');
    assert.equal(m.limiter.rate_limited, 0);
    const scores = rig
      .read('prod/scores.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(scores.length, 96);
    assert.ok(
      scores.every(
        (s) =>
          s.status === 'scored' &&
          s.samples.every((x: { live: boolean; provider: string }) => x.live && x.provider === 'openai'),
      ),
    );

    const cachedRun = await runAsync(rig, ['--force', 'scores_prod'], prod);
    assert.equal(cachedRun.code, 0, cachedRun.out);
    assert.equal(judge.requests() - before, total - stored, 'a fully cached rebuild sends no request');
    assert.equal(JSON.parse(rig.read('prod/scorer_metrics.json')).cache_hit_rate, 1);

    rig.write('fixtures/scores.jsonl', rig.read('prod/scores.jsonl'));
    const ns = rig.run(['not_simulated_prod'], prod);
    assert.equal(ns.code, 2, ns.stdout);
    assert.match(ns.stdout, /cache_hit_rate_last_100\s+1\s+<\s+0\.9\s+FAIL/);
    assert.match(ns.stdout, /heuristic_samples\s+0\s+==\s+0\s+pass/);

    assert.equal(judge.badKeys(), 0);
    for (const out of [killed.out, resumed.out, cachedRun.out, ns.stdout]) assert.ok(!out.includes(KEY));
    for (const f of allFiles(rig.dir)) assert.ok(!fs.readFileSync(f).includes(KEY), `${f} holds the key`);
  } finally {
    rig.cleanup();
    await judge.close();
  }
});
