// scores (docs/rc1.md): the seven-dimension judge over the rollouts of the `rollouts` input group (one
// or more rollout JSONL files; rollout ids must be unique across them): K samples per rollout
// (scoring.judge.k, distinct sample index, scoring.judge.temperature), median per dimension,
// population variance recorded, item variance = the max over dimensions; above
// scoring.aggregate.unstable_variance the item is unstable and weighs unstable_weight.
// Provider: createProvider (REWARD_LIVE_MODE, profile; scoring_live for the live judge). The live
// judge goes through the rate limiter and the persistent score cache (each sample stored the
// moment it arrives); the heuristic provider uses neither (it is free and deterministic).
// In prod every sample must be live, else the target fails: no fallback.
// Outputs, in order:
//   [0] data/scores/scores.jsonl        one record per rollout (score-record.ts ScoreRecord)
//   [1] reports/unstable_samples.jsonl  one record per unstable item
//   [2] reports/scorer_metrics.json     calls, billable calls, cache hits and hit rate, tokens,
//                                       failures, unstable share; rps, 429_rate, avg/p95 latency
//                                       and the limiter's numbers for live runs (null for the
//                                       heuristic: its samples are computed, not timed)
// With the heuristic provider all three are byte-identical for the same inputs and params.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import { toJsonl } from '../lib/data/index.ts';
import { readValidated, rolloutSchema, type Rollout } from '../lib/rollouts/index.ts';
import {
  PROMPT_VERSION,
  RUBRIC_VERSION,
  aggregateConfigSchema,
  createProvider,
  createRateLimiter,
  formatProviderFailure,
  heuristicConfigSchema,
  judgeConfigSchema,
  judgeSpec,
  limiterOptionsFromConfig,
  liveViolation,
  openScoreCache,
  promptKey,
  resolveEndpoint,
  scoreItems,
  specHash,
  toScoreItem,
  toScoreRecord,
  type RateLimiter,
  type ScoreCache,
  type ScoreRecord,
  type UnstableItemRecord,
} from '../lib/scoring/index.ts';
import { z } from 'zod';

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

export default defineRule({
  name: 'scores',
  version: 1,
  params: z.object({
    scoring: z
      .object({ judge: judgeConfigSchema, aggregate: aggregateConfigSchema, heuristic: heuristicConfigSchema })
      .strict(),
    scoring_live: z.unknown().optional(),
  }),
  async run(ctx) {
    const { judge, aggregate, heuristic } = ctx.params.scoring;

    const rollouts: Rollout[] = [];
    const seen = new Map<string, string>();
    for (const f of ctx.inputs('rollouts')) {
      for (const { at, value } of await readValidated(f, rolloutSchema, ctx.root)) {
        const first = seen.get(value.rollout_id);
        if (first)
          throw new RuleError(
            `${at.file}:${at.line}: rollout_id ${value.rollout_id} was already read at ${first}: rollout ids must be unique across the rollouts inputs`,
          );
        seen.set(value.rollout_id, `${at.file}:${at.line}`);
        rollouts.push(value);
      }
    }

    const choice = createProvider({
      config: ctx.params,
      env: ctx.env,
      profile: ctx.profile,
      heuristic: { jitter: heuristic.jitter, ambiguityJitter: heuristic.ambiguity_jitter },
    });
    if (!choice.ok) throw new RuleError(formatProviderFailure(choice.failure));
    const { provider, mode, note, config: live } = choice.value;
    const endpoint = mode === 'live' && live ? resolveEndpoint(live) : null;
    const spec = judgeSpec({
      provider: provider.provider,
      model: provider.model,
      endpoint: endpoint?.baseUrl ?? null,
      temperature: judge.temperature,
      topP: null,
      maxTokens: endpoint?.maxTokens ?? null,
      responseFormat: endpoint?.responseFormat ?? null,
      k: judge.k,
    });
    const key = promptKey(spec);
    ctx.log(
      `${note}; rubric ${RUBRIC_VERSION}, prompt ${PROMPT_VERSION}, judge spec ${specHash(spec)}; ${rollouts.length} rollouts × K=${judge.k}`,
    );

    let cache: ScoreCache | undefined;
    let limiter: RateLimiter | undefined;
    if (mode === 'live' && live) {
      // The cache under .rc1/ is state rc1.build.ts declares for every scoring target (kept by
      // `clean`, removed by `clean --cache`): opened through ctx.state. A path elsewhere is the
      // user's own file, outside what the engine manages.
      const p = live.cache.path.replace(/^\.\//, '');
      const path = isAbsolute(p) ? p : p.startsWith('.rc1/') ? ctx.state(p) : join(ctx.root, p);
      const opened = await openScoreCache({ path, ttlDays: live.cache.ttl_days, synchronous: live.cache.synchronous });
      if (!opened.ok) throw new RuleError(`scoring: ${opened.error}`);
      cache = opened.cache;
      limiter = createRateLimiter(limiterOptionsFromConfig(live.rate));
    }
    const items = rollouts.map(toScoreItem);
    const every = Math.max(1, Math.floor(items.length / 100));
    const records: ScoreRecord[] = [];
    const unstable: UnstableItemRecord[] = [];
    let run: Awaited<ReturnType<typeof scoreItems>>;
    try {
      run = await scoreItems(items, {
        providerFor: () => provider,
        k: judge.k,
        temperature: judge.temperature,
        promptKey: key,
        signal: ctx.signal,
        ...(cache ? { cache } : {}),
        ...(limiter ? { limiter } : {}),
        onProgress: (p) => {
          if (p.done % every !== 0 && p.done !== p.total) return;
          if (!limiter) {
            ctx.progress(p.done, p.total, 'items');
            return;
          }
          const lm = limiter.metrics();
          ctx.progress(
            p.done,
            p.total,
            `items (rps ${lm.rps.toFixed(1)}, 429 ${(100 * lm['429_rate']).toFixed(1)}%, p95 ${Math.round(lm.p95_latency_ms)} ms, cache hits ${p.cacheHits}, failures ${p.failures})`,
          );
        },
      });
      for (const res of run.results) {
        const r = toScoreRecord(res, {
          unstableVariance: aggregate.unstable_variance,
          unstableWeight: aggregate.unstable_weight,
        });
        records.push(r.record);
        if (r.unstable) {
          unstable.push(r.unstable);
          // For `scorecache replay-bad`: the unstable item's samples are set aside and asked again.
          cache?.markUnstable(
            {
              provider: provider.provider,
              model: provider.model,
              rubricVersion: RUBRIC_VERSION,
              promptVersion: key,
              itemHash: r.unstable.item_hash,
            },
            r.unstable.item_variance,
          );
        }
      }
    } finally {
      cache?.close();
    }
    const m = run.metrics;

    if (ctx.profile === 'prod') {
      const bad = liveViolation(
        run.results.flatMap((res) => res.samples.flatMap((s) => (s ? [{ ...s, itemId: res.item.id }] : []))),
      );
      if (bad) throw new RuleError(`scoring: ${bad}`);
    }
    const failedShare = m.items === 0 ? 0 : m.failed_items / m.items;
    if (failedShare > judge.max_failed_share) {
      const first = run.results.find((r) => r.status === 'failed');
      const why =
        first && first.status === 'failed' ? `${first.item.id}: ${first.failures[0]?.error ?? 'incomplete'}` : '';
      const resume = cache
        ? '. Every successful sample is in the score cache: a rerun asks only for the missing ones'
        : '';
      throw new RuleError(
        `scoring: ${m.failed_items} of ${m.items} items ended failed (share ${failedShare.toFixed(4)} > scoring.judge.max_failed_share ${judge.max_failed_share}); first: ${why}${resume}`,
      );
    }

    const timed = m.live_calls > 0;
    const lm = limiter?.metrics() ?? null;
    const metrics = {
      profile: ctx.profile,
      mode,
      provider: {
        provider: provider.provider,
        model: provider.model,
        live: provider.live,
        billable: provider.billable,
      },
      rubric_version: RUBRIC_VERSION,
      prompt_version: PROMPT_VERSION,
      judge_spec: { hash: specHash(spec), cache_prompt_key: key, ...spec },
      k: judge.k,
      temperature: judge.temperature,
      rollouts: { total: rollouts.length, synthetic: rollouts.filter((r) => r.source === 'synthetic').length },
      items: m.items,
      scored_items: m.scored_items,
      failed_items: m.failed_items,
      unstable_items: unstable.length,
      unstable_share: m.items === 0 ? 0 : (unstable.length + m.failed_items) / m.items,
      unstable_variance: aggregate.unstable_variance,
      unstable_weight: aggregate.unstable_weight,
      samples: m.samples,
      calls: m.calls,
      live_calls: m.live_calls,
      billable_calls: m.billable_calls,
      cache_hits: m.cache_hits,
      cache_hit_rate: m.cache_hit_rate,
      failures: m.failures,
      tokens: {
        prompt: m.prompt_tokens,
        completion: m.completion_tokens,
        total: m.prompt_tokens + m.completion_tokens,
      },
      timing: timed
        ? 'measured over the live calls of this build'
        : mode === 'live'
          ? 'not measured: no live call was made (every sample came from the score cache)'
          : 'not measured: no live call (heuristic samples are computed, not timed)',
      rps: timed ? (lm ? lm.rps : m.live_calls / Math.max(1e-9, m.wall_ms / 1000)) : null,
      '429_rate': lm ? lm['429_rate'] : null,
      avg_latency_ms: m.latency_ms?.avg ?? null,
      p95_latency_ms: m.latency_ms?.p95 ?? null,
      wall_ms: timed ? m.wall_ms : null,
      limiter: lm,
    };

    await write(ctx.output('scores'), toJsonl(records));
    await write(ctx.output('unstable'), toJsonl(unstable));
    await write(ctx.output('metrics'), `${JSON.stringify(metrics, null, 2)}\n`);
    const hit = m.calls + m.cache_hits === 0 ? 0 : (100 * m.cache_hits) / (m.calls + m.cache_hits);
    return {
      summary: `${m.scored_items}/${m.items} rollouts scored by ${provider.provider} (${mode}), ${unstable.length} unstable, ${m.failed_items} failed; ${m.calls} calls (${m.billable_calls} billable), cache hits ${hit.toFixed(1)}%`,
    };
  },
});
