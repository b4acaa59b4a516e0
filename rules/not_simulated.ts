// not_simulated (docs/rc1.md): a gate against scores that only look real (a known pitfall of such runs: 2 ms per
// conversation and 100 % cache hits are the marks of a stub). Over the scores target's records
// (the `scores` input group: the file ending in scores.jsonl is read):
//   cache_hit_rate_last_<window>   cached samples / samples of the last scoring.not_simulated.window
//                                  scored records (file order = scoring order) must be below
//                                  max_cache_hit_rate.round<N>; N is the target arg `round` (1 or 2)
//   heuristic_samples              samples from the heuristic provider or from any non-live provider,
//                                  over all records, must be 0 (prod never uses a stub)
//   live_samples                   samples from a live provider must be >= 1
// Dev profile: each check reports its measured value as `waived (profile dev)` — never a pass.
// Output [0] (the report), e.g. reports/preflight/not_simulated_round1.json.
import { check, defineRule, waive, type Check, RuleError } from 'rc1-build';
import { notSimulatedConfigSchema, readScores } from '../lib/scoring/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'not_simulated',
  version: 1,
  params: z.object({ scoring: z.object({ not_simulated: notSimulatedConfigSchema }).strict() }),
  async run(ctx) {
    const cfg = ctx.params.scoring.not_simulated;
    const round = ctx.args.round ?? 1;
    if (round !== 1 && round !== 2)
      throw new RuleError(`${ctx.target}: args.round must be 1 or 2, got ${JSON.stringify(round)}`);
    const threshold = round === 1 ? cfg.max_cache_hit_rate.round1 : cfg.max_cache_hit_rate.round2;
    const file = ctx.input('scores');
    const records = await readScores(file);

    const scored = records.filter((r) => r.status === 'scored');
    const window = scored.slice(-cfg.window);
    let samples = 0;
    let cached = 0;
    for (const r of window)
      for (const s of r.samples)
        if (s.ok) {
          samples++;
          if (s.cached) cached++;
        }
    const hitRate = samples === 0 ? null : cached / samples;

    let heuristic = 0;
    let live = 0;
    const providers = new Map<string, number>();
    for (const r of records) {
      for (const s of r.samples) {
        if (!s.ok) continue;
        const name = `${s.provider}/${s.model}${s.live ? '' : ' (not live)'}`;
        providers.set(name, (providers.get(name) ?? 0) + 1);
        if (s.live && s.provider !== 'heuristic') live++;
        else heuristic++;
      }
    }

    let checks: Check[] = [
      check(
        `cache_hit_rate_last_${cfg.window}`,
        hitRate,
        '<',
        threshold,
        `round ${round}: nearly every recent score came from the cache; a stub or a stale cache is the likely cause: rescore (rc1-build scorecache invalidate --spec …) or check REWARD_LIVE_MODE`,
      ),
      check(
        'heuristic_samples',
        heuristic,
        '==',
        0,
        'scores from the heuristic (or another non-live) provider: run with RUN_MODE=prod and the live judge configured (REWARD_LIVE_MODE=1, API key set)',
      ),
      check('live_samples', live, '>=', 1, 'no score came from a live judge: configure scoring_live and the API key'),
    ];
    if (ctx.profile !== 'prod') checks = checks.map((c) => waive(c, 'profile dev'));
    return {
      checks,
      report: {
        round,
        window: cfg.window,
        max_cache_hit_rate: threshold,
        records: records.length,
        window_records: window.length,
        window_samples: samples,
        window_cached: cached,
        cache_hit_rate: hitRate,
        heuristic_samples: heuristic,
        live_samples: live,
        providers: Object.fromEntries([...providers.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      },
      summary: `round ${round}: cache hit rate ${hitRate === null ? 'n/a' : hitRate.toFixed(3)} over the last ${window.length} scores, ${heuristic} heuristic samples${ctx.profile !== 'prod' ? ' (waived: profile dev)' : ''}`,
    };
  },
});
