// Scoring benchmark: the live provider + rate limiter + score cache against the fake
// OpenAI-compatible server (test/helpers/fake-openai-server.ts) on loopback.
//  1. Throughput under a provider limit of R requests/s (R = 20 and 100): the server answers 429
//     (with Retry-After) above R accepted requests in any one-second window; the client's token
//     bucket is configured at 0.95·R (a margin under the published limit) with burst 2, concurrency
//     2..8 from 4; rows at exactly R show what happens without the margin (every request then sits
//     on the edge of the server's window, and jitter turns ~1 in 20 into a 429). Every answer takes
//     LATENCY ms; the server runs in its own process. The first WARMUP_S seconds are warm-up: the table reports the
//     attempts that started after it (achieved rps = successful answers per second; target
//     ≥ 0.9·R with a 429 rate ≤ 5 %).
//  2. Warm-cache rescoring of 30 000 rollouts × K = 3 samples (90 000 cache lookups, all hits)
//     through the scoring driver (score-items.ts, with the limiter and the live provider wired as
//     the scores rule wires them): from opening the cache file, through hashing every rollout's
//     canonical JSON, to every item's medians and variances. Target ≤ 3 s; the server must
//     receive no request. Rollouts: the test fixtures (data/raw, several candidates per scenario).
// Usage: node --import tsx bench/scoring.ts [--quick]   (--quick: shorter runs, 10 000 items)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRateLimiter } from '../lib/scoring/rate-limiter.ts';
import { openScoreCache } from '../lib/scoring/score-cache.ts';
import { aggregateSamples } from '../lib/scoring/aggregate.ts';
import { PROMPT_VERSION } from '../lib/scoring/judge-prompt.ts';
import { RUBRIC_VERSION } from '../lib/scoring/rubric.ts';
import { scoreItems, toScoreItem } from '../lib/scoring/score-items.ts';
import { DIMENSIONS, type DimScores } from '../lib/scoring/types.ts';
import { startFakeOpenAIServer } from '../test/helpers/fake-openai-server.ts';
import { FAST_LIMITS, scoreLoop, syntheticItems, testProvider } from '../test/helpers/score-loop.ts';
import { fixtureRollouts } from '../test/helpers/scoring-fixtures.ts';
import { fmtInt, hasFlag, machineReport, table } from './util.ts';

const quick = hasFlag('--quick');
const KEY = 'sk-bench-key-not-real';
const LATENCY = 40;
const WARMUP_S = 3;
const MEASURE_S = quick ? 6 : 15;
const ITEMS = quick ? 10_000 : 30_000;
const K = 3;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-bench-scoring-'));

/** The fake server in a process of its own, so that it does not share the client's event loop. */
async function spawnServer(R: number): Promise<{ url: string; stop(): void }> {
  const script = fileURLToPath(new URL('../test/helpers/fake-openai-server.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, '--rps-cap', String(R), '--latency-ms', String(LATENCY), '--api-key', KEY],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      const line = buf.split('\n')[0];
      if (buf.includes('\n') && line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`fake server exited ${code}`)));
  });
  return { url, stop: () => void child.kill('SIGTERM') };
}

async function throughput(R: number, margin: number): Promise<string[]> {
  const server = await spawnServer(R);
  const opened = await openScoreCache({
    path: path.join(tmp, `tp-${R}-${margin}.sqlite`),
    ttlDays: 14,
    synchronous: 'normal',
  });
  if (!opened.ok) throw new Error(opened.error);
  const limiter = createRateLimiter({
    ...FAST_LIMITS,
    requestsPerSecond: R * margin,
    burst: 2,
    timeoutMs: 10_000,
    maxAttempts: 10,
    backoffBaseMs: 100,
    backoffMaxMs: 2000,
  });
  const n = Math.ceil(R * (WARMUP_S + MEASURE_S));
  const items = syntheticItems(n).map((it) => ({
    ...it,
    messages: it.messages.map((m) => ({ ...m, content: `${m.content} [R=${R} ${margin}]` })),
  }));
  const t0 = performance.timeOrigin + performance.now();
  const r = await scoreLoop({
    provider: testProvider(server.url, KEY),
    limiter,
    cache: opened.cache,
    items,
    k: 1,
    maxTokens: 64,
  });
  const all = limiter.metrics();
  const m = limiter.metrics(t0 + WARMUP_S * 1000);
  opened.cache.close();
  server.stop();
  const verdict = m.rps >= 0.9 * R && m['429_rate'] <= 0.05 ? 'pass' : 'FAIL';
  return [
    String(R),
    `${(R * margin).toFixed((R * margin) % 1 === 0 ? 0 : 1)} (${margin.toFixed(2)}·R)`,
    fmtInt(n),
    `${r.scored}/${r.failed}`,
    m.rps.toFixed(1),
    `${((m.rps / R) * 100).toFixed(1)} %`,
    `${(m['429_rate'] * 100).toFixed(2)} %`,
    `${(all['429_rate'] * 100).toFixed(2)} %`,
    m.avg_latency_ms.toFixed(1),
    m.p95_latency_ms.toFixed(1),
    `${all.concurrency_low}..${all.concurrency_high} (${all.concurrency})`,
    String(all.retries),
    verdict,
  ];
}

async function warmCache(): Promise<string[][]> {
  const server = await startFakeOpenAIServer({ apiKey: KEY });
  const file = path.join(tmp, 'warm.sqlite');
  const rollouts = (await fixtureRollouts(2000, Math.ceil(ITEMS / 4603) + 1)).slice(0, ITEMS);
  if (rollouts.length < ITEMS) throw new Error(`only ${rollouts.length} fixture rollouts`);
  const provider = testProvider(server.url, KEY);
  {
    const o = await openScoreCache({ path: file, ttlDays: 14, synchronous: 'normal' });
    if (!o.ok) throw new Error(o.error);
    o.cache.handle.transaction(() => {
      for (const [i, r] of rollouts.entries()) {
        const item = toScoreItem(r);
        for (let s = 0; s < K; s++) {
          const scores = Object.fromEntries(DIMENSIONS.map((d, j) => [d, ((i + j + s) % 11) / 10])) as DimScores;
          o.cache.put(
            {
              provider: provider.provider,
              model: provider.model,
              rubricVersion: RUBRIC_VERSION,
              promptVersion: PROMPT_VERSION,
              itemHash: item.itemHash,
              sampleIndex: s,
            },
            {
              provider: provider.provider,
              model: provider.model,
              live: true,
              billable: true,
              scores,
              latencyMs: 900,
              promptTokens: 700,
              completionTokens: 60,
              cached: false,
            },
          );
        }
      }
    })();
    o.cache.close();
  }
  const rows: string[][] = [];
  for (let run = 1; run <= 3; run++) {
    const t = performance.now();
    const o = await openScoreCache({ path: file, ttlDays: 14, synchronous: 'normal' });
    if (!o.ok) throw new Error(o.error);
    const items = rollouts.map(toScoreItem);
    const tHashed = performance.now();
    const limiter = createRateLimiter(FAST_LIMITS);
    const r = await scoreItems(items, {
      providerFor: () => provider,
      k: K,
      temperature: 0.7,
      signal: new AbortController().signal,
      cache: o.cache,
      limiter,
    });
    const tLooked = performance.now();
    let aggregated = 0;
    for (const res of r.results) {
      if (res.status !== 'scored') throw new Error(`${res.item.id} not scored from the cache`);
      if (
        aggregateSamples(
          res.samples.map((x) => x.scores),
          { unstableVariance: 0.08, unstableWeight: 0.5 },
        ).weight > 0
      )
        aggregated++;
    }
    const tDone = performance.now();
    o.cache.close();
    const total = (tDone - t) / 1000;
    const m = r.metrics;
    rows.push([
      String(run),
      fmtInt(ITEMS),
      fmtInt(ITEMS * K),
      `${m.cache_hits}/${m.calls}`,
      String(server.stats.requests),
      ((tHashed - t) / 1000).toFixed(2),
      ((tLooked - tHashed) / 1000).toFixed(2),
      ((tDone - tLooked) / 1000).toFixed(2),
      total.toFixed(2),
      fmtInt((ITEMS * K) / total),
      total <= 3 && m.calls === 0 && server.stats.requests === 0 && aggregated === ITEMS ? 'pass' : 'FAIL',
    ]);
  }
  await server.close();
  return rows;
}

console.log(`# bench/scoring.ts${quick ? ' --quick' : ''}`);
console.log(machineReport());
console.log(
  `\nthroughput against a server capped at R requests/s (429 + Retry-After above R in any 1 s window), ${LATENCY} ms per answer;`,
);
console.log(
  `client: token bucket at 0.95·R (a margin under the published limit; rows at exactly R below) with burst 2, concurrency 2..8 from 4, AIMD window 20, target 429 ratio 0.05; warm-up ${WARMUP_S} s, then ${MEASURE_S} s measured`,
);
console.log(
  table(
    [
      'R',
      'client req/s',
      'requests',
      'scored/failed',
      'rps after warm-up',
      'of R',
      '429 after warm-up',
      '429 overall',
      'avg ms',
      'p95 ms',
      'concurrency low..high (end)',
      'retries',
      '≥0.9R, ≤5 %',
    ],
    [await throughput(20, 0.95), await throughput(100, 0.95), await throughput(20, 1), await throughput(100, 1)],
  ),
);
console.log(
  `\nwarm-cache rescoring with the scoring driver (score-items.ts): ${fmtInt(ITEMS)} fixture rollouts × K=${K} samples, every sample cached`,
);
console.log(
  "times in s: open the cache file + sha256 of every rollout's canonical JSON | scoreItems (3 lookups per item, limiter and provider wired) | medians and variances (aggregateSamples)",
);
console.log(
  table(
    [
      'run',
      'items',
      'lookups',
      'hits/calls',
      'server requests',
      'open+hash',
      'lookups',
      'medians',
      'total',
      'lookups/s',
      '≤3 s',
    ],
    await warmCache(),
  ),
);
fs.rmSync(tmp, { recursive: true, force: true });
