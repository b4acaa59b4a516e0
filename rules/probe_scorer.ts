// probe_scorer (docs/rc1.md): a gate that proves the scorer is a live judge. It makes
// scoring.probe.calls (8) calls straight to the provider createProvider picks (REWARD_LIVE_MODE,
// profile, scoring_live) — never through the score cache: a cached answer proves nothing — on the
// first rollouts of the `rollouts` input group (cycled if there are fewer), sample index i for
// call i. Checks: live_provider == true, billable_calls >= 1, min_latency_ms > 0 (over the
// successful calls; null when none succeeded).
// Dev profile: every check is reported `waived (profile dev)` with its measured value (with the
// heuristic provider: not live, 0 billable, latency 0) — visibly, never as a pass. Prod: a
// provider that cannot be created (no key, bad config) fails the checks with its message.
// Output [0] (the report): reports/preflight/scorer_probe.json.
import { check, defineRule, waive, type Check, RuleError } from 'rc1-build';
import { readValidated, rolloutSchema, type Rollout } from '../lib/rollouts/index.ts';
import {
  PROMPT_VERSION,
  RUBRIC_VERSION,
  createProvider,
  createRateLimiter,
  formatProviderFailure,
  heuristicConfigSchema,
  judgeConfigSchema,
  limiterOptionsFromConfig,
  probeConfigSchema,
  renderJudgeMessages,
  toScoreItem,
  type ScoreOutcome,
  type ScoreRequest,
} from '../lib/scoring/index.ts';
import { z } from 'zod';

interface ProbeCall {
  rollout_id: string;
  sample_index: number;
  ok: boolean;
  live: boolean | null;
  billable: boolean | null;
  latency_ms: number | null;
  tokens: number | null;
  error: string | null;
}

export default defineRule({
  name: 'probe_scorer',
  version: 1,
  params: z.object({
    scoring: z
      .object({ probe: probeConfigSchema, judge: judgeConfigSchema, heuristic: heuristicConfigSchema })
      .strict(),
    scoring_live: z.unknown().optional(),
  }),
  async run(ctx) {
    const { probe, judge, heuristic } = ctx.params.scoring;
    const dev = ctx.profile !== 'prod';
    const rollouts: Rollout[] = [];
    for (const f of ctx.inputs('rollouts')) {
      for (const r of await readValidated(f, rolloutSchema, ctx.root)) {
        rollouts.push(r.value);
        if (rollouts.length >= probe.calls) break;
      }
      if (rollouts.length >= probe.calls) break;
    }
    if (rollouts.length === 0)
      throw new RuleError(`${ctx.target}: the \`rollouts\` inputs hold no rollout to probe the scorer with`);

    const choice = createProvider({
      config: ctx.params,
      env: ctx.env,
      profile: ctx.profile,
      heuristic: { jitter: heuristic.jitter, ambiguityJitter: heuristic.ambiguity_jitter },
    });
    const calls: ProbeCall[] = [];
    let error: string | null = null;
    let provenance: Record<string, unknown> | null = null;
    if (!choice.ok) {
      error = formatProviderFailure(choice.failure);
      ctx.log(error);
    } else {
      const { provider, config, note } = choice.value;
      provenance = {
        provider: provider.provider,
        model: provider.model,
        live: provider.live,
        billable: provider.billable,
        note,
      };
      ctx.log(note);
      const limiter = config ? createRateLimiter(limiterOptionsFromConfig(config.rate)) : undefined;
      for (let i = 0; i < probe.calls; i++) {
        ctx.signal.throwIfAborted();
        const item = toScoreItem(rollouts[i % rollouts.length]!);
        const req: ScoreRequest = {
          itemHash: item.itemHash,
          sampleIndex: i,
          rubricVersion: RUBRIC_VERSION,
          promptVersion: PROMPT_VERSION,
          temperature: judge.temperature,
          messages: renderJudgeMessages(item.rollout),
          rollout: item.rollout,
        };
        let out: ScoreOutcome;
        try {
          out = limiter
            ? await limiter.run((s) => provider.score(req, s), 2000, ctx.signal)
            : await provider.score(req, ctx.signal);
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          out = { ok: false, error: (e as Error).message, attempts: 1, retryable: true };
        }
        calls.push(
          out.ok
            ? {
                rollout_id: item.id,
                sample_index: i,
                ok: true,
                live: out.sample.live,
                billable: out.sample.billable,
                latency_ms: out.sample.latencyMs,
                tokens: out.sample.promptTokens + out.sample.completionTokens,
                error: null,
              }
            : {
                rollout_id: item.id,
                sample_index: i,
                ok: false,
                live: null,
                billable: null,
                latency_ms: null,
                tokens: null,
                error: out.error,
              },
        );
        ctx.progress(i + 1, probe.calls, 'calls');
      }
    }

    const ok = calls.filter((c) => c.ok);
    const billable = ok.filter((c) => c.billable).length;
    const minLatency = ok.length === 0 ? null : Math.min(...ok.map((c) => c.latency_ms ?? 0));
    const live = choice.ok ? choice.value.provider.live : false;
    const fix =
      'set the judge API key (scoring_live.api_key_env names the variable) and REWARD_LIVE_MODE=1 (configs/scoring_live.yaml)';
    const why = choice.ok
      ? `the scorer is ${choice.value.provider.provider}, not a live judge: ${fix}`
      : `${choice.failure.message}; ${choice.failure.hint}`;
    let checks: Check[] = [
      check('live_provider', live, '==', true, why),
      check(
        'billable_calls',
        billable,
        '>=',
        1,
        `no billable call among ${probe.calls} probes: a stub or an unbilled server answered (${fix})`,
      ),
      check('min_latency_ms', minLatency, '>', 0, 'no timed call: nothing reached a live judge (see live_provider)'),
    ];
    if (dev) checks = checks.map((c) => waive(c, 'profile dev'));
    return {
      checks,
      report: {
        n: probe.calls,
        provider: provenance,
        error,
        calls,
        ok_calls: ok.length,
        billable_calls: billable,
        min_latency_ms: minLatency,
        avg_latency_ms: ok.length === 0 ? null : ok.reduce((a, c) => a + (c.latency_ms ?? 0), 0) / ok.length,
        rubric_version: RUBRIC_VERSION,
        prompt_version: PROMPT_VERSION,
      },
      summary: `${ok.length}/${probe.calls} probe calls ok, ${billable} billable${dev ? ' (waived: profile dev)' : ''}`,
    };
  },
});
