// The RC1 pipeline: declarations only (rules live in rules/ and load lazily, when their target
// runs). A function of the profile and the resolved configs/*.yaml, because the scale stages come
// from the config: scale.stages are the earlier pool sizes (each fully gated before the next),
// scale.n the final one, whose outputs carry the canonical names of RC1.md.
//
//   data/raw/** ──► shadow_set ──────────────┐
//   templates/pack_v1,v2 ──► diversity_report ┤
//                                            ▼
//   per stage: seed_pool@n ──► pool_validation@n           (gate)
//                   └──► difficulty_metrics@n ──► balanced_pool@n ──► difficulty_report@n (gate)
//                                                      └──► rollouts_pool@n ──► scores@n ──► stability@n (gate)
//   stage n+1's seed_pool waits on stage n's three gates; the final stage has no suffix, and its
//   scores also cover the shadow set's rollouts (rollouts_shadow), which probe_scorer and
//   not_simulated (round 1 and 2) check.
import { definePipeline, defineGate, defineTarget, target, type UserTarget } from 'rc1-build';

const RAW = ['data/raw/gsm8k/*.jsonl', 'data/raw/hotpotqa/*.jsonl', 'data/raw/strategyqa/*.jsonl'];
const V1 = 'templates/pack_v1/*.json';
const V2 = 'templates/pack_v2/*.json';

interface Scale { stages: number[]; n: number }

/** The judge's API-key variable: a secret (given to the rule, never in a key or a log). */
function judgeKeyEnv(config: Record<string, unknown>): string[] {
  const live = config.scoring_live as { api_key_env?: string | null; preset?: string } | undefined;
  const presetKeys: Record<string, string> = { openai: 'OPENAI_API_KEY', deepseek: 'DEEPSEEK_API_KEY', gemini: 'GEMINI_API_KEY', vllm: 'VLLM_API_KEY', llamacpp: 'LLAMACPP_API_KEY' };
  const name = live?.api_key_env ?? presetKeys[live?.preset ?? 'openai'];
  return name ? [name] : [];
}

const SCORING_PARAMS = ['scoring.judge', 'scoring.aggregate', 'scoring.heuristic', 'scoring_live'];
const SCORING_ENV = ['REWARD_LIVE_MODE', 'RUN_MODE'];

/** The data half of one scale stage (suffix '' for the final stage, '@<n>' otherwise). */
function stage(n: number, sfx: string, gatedOn: string[], judgeSecrets: string[]): UserTarget[] {
  const data = sfx ? `data/rollouts/stages/${n}` : 'data/rollouts';
  const reports = sfx ? `reports/rc1/stages/${n}` : 'reports/rc1';
  const pool = `${data}/rc1_seed.jsonl`;
  const metrics = `${data}/rc1_seed.metrics.jsonl`;
  const balanced = `${data}/rc1_seed.balanced.jsonl`;
  return [
    defineTarget({
      name: `seed_pool${sfx}`,
      description: `${n} scenarios rendered from templates/pack_v2 over the raw datasets, never from shadow items`,
      rule: 'rules/seed_pool.ts',
      inputs: { raw: RAW, v2: V2, shadow: target('shadow_set'), gates: gatedOn.map((g) => target(g)) },
      args: { n },
      outputs: [pool],
      params: ['pool', 'templates', 'data'],
    }),
    defineGate({
      name: `pool_validation${sfx}`,
      rule: 'rules/pool_validation.ts',
      inputs: { pool: target(`seed_pool${sfx}`), shadow: target('shadow_set'), v1: V1, raw: RAW },
      outputs: [`${reports}/pool_validation.json`],
      report: `${reports}/pool_validation.json`,
      params: ['validation', 'pool'],
    }),
    defineTarget({
      name: `difficulty_metrics${sfx}`,
      rule: 'rules/difficulty_metrics.ts',
      inputs: { pool },
      outputs: [metrics],
      params: ['difficulty.metrics'],
    }),
    defineTarget({
      name: `balanced_pool${sfx}`,
      rule: 'rules/balanced_pool.ts',
      inputs: { pool, metrics },
      outputs: [balanced, `${reports}/balance_report.json`],
      params: ['difficulty.bands', 'difficulty.dimensions', 'difficulty.balance'],
    }),
    defineGate({
      name: `difficulty_report${sfx}`,
      rule: 'rules/difficulty_report.ts',
      inputs: { metrics, balanced },
      outputs: [`${reports}/difficulty_report.json`],
      report: `${reports}/difficulty_report.json`,
      params: ['difficulty.bands', 'difficulty.dimensions', 'difficulty.gate'],
    }),
    defineTarget({
      name: `rollouts_pool${sfx}`,
      description: 'candidate trajectories for the balanced pool (synthetic in dev: every record says so)',
      rule: 'rules/rollouts.ts',
      inputs: { scenarios: balanced },
      outputs: [`${data}/pool_rollouts.jsonl`],
      params: ['rollouts'],
      secrets: ['POLICY_API_KEY'],
    }),
    defineTarget({
      name: `scores${sfx}`,
      description: 'the 7-dimension judge, K = 3 samples per rollout, median and variance',
      rule: 'rules/scores.ts',
      inputs: { rollouts: sfx ? [target(`rollouts_pool${sfx}`)] : [target('rollouts_shadow'), target('rollouts_pool')] },
      outputs: sfx
        ? [`${data}/scores.jsonl`, `${reports}/unstable_samples.jsonl`, `${reports}/scorer_metrics.json`]
        : ['data/scores/scores.jsonl', 'reports/unstable_samples.jsonl', 'reports/scorer_metrics.json'],
      params: SCORING_PARAMS,
      env: SCORING_ENV,
      secrets: judgeSecrets,
    }),
    defineGate({
      name: `stability${sfx}`,
      rule: 'rules/stability.ts',
      inputs: { scores: target(`scores${sfx}`) },
      outputs: [`${reports}/stability_report.json`],
      report: `${reports}/stability_report.json`,
      params: ['scoring.stability'],
    }),
  ];
}

export default definePipeline(({ config }) => {
  const scale = config.scale as unknown as Scale;
  const targets: UserTarget[] = [
    defineTarget({
      name: 'shadow_set',
      description: '245 held-aside evaluation scenarios, stratified by task (hotpotqa .45 / strategyqa .30 / gsm8k .25), seed 20250820',
      rule: 'rules/shadow_set.ts',
      inputs: { raw: RAW },
      outputs: ['data/shadow_eval_245.jsonl', 'reports/rc1/sample_manifest.json'],
      params: ['shadow', 'data'],
    }),
    defineGate({
      name: 'diversity_report',
      description: 'template pack v2 vs v1: distinct-2, 3-gram KL, Zipf slope, role/style coverage',
      rule: 'rules/diversity_report.ts',
      inputs: { v1: V1, v2: V2 },
      outputs: ['reports/diversity_report.json'],
      report: 'reports/diversity_report.json',
      params: ['templates', 'diversity'],
    }),
  ];
  const judgeSecrets = judgeKeyEnv(config);
  let gatedOn = ['diversity_report'];
  for (const n of scale.stages) {
    targets.push(...stage(n, `@${n}`, gatedOn, judgeSecrets));
    gatedOn = [`pool_validation@${n}`, `difficulty_report@${n}`, `stability@${n}`];
  }
  targets.push(...stage(scale.n, '', gatedOn, judgeSecrets));
  targets.push(
    defineTarget({
      name: 'rollouts_shadow',
      description: 'candidate trajectories for the shadow set (synthetic in dev: every record says so)',
      rule: 'rules/rollouts.ts',
      inputs: { scenarios: target('shadow_set') },
      outputs: ['data/rollouts/shadow_rollouts.jsonl'],
      params: ['rollouts'],
      secrets: ['POLICY_API_KEY'],
    }),
    defineGate({
      name: 'probe_scorer',
      description: '8 live judge calls: billable >= 1, latency > 0 (waived, visibly, in dev)',
      rule: 'rules/probe_scorer.ts',
      inputs: { rollouts: target('rollouts_shadow') },
      outputs: ['reports/preflight/scorer_probe.json'],
      report: 'reports/preflight/scorer_probe.json',
      params: ['scoring.probe', 'scoring.judge', 'scoring.heuristic', 'scoring_live'],
      env: SCORING_ENV,
      secrets: judgeSecrets,
    }),
    ...[1, 2].map((round) => defineGate({
      name: `not_simulated_round${round}`,
      description: `over the last 100 scores: cache hit rate below the round-${round} bound, no heuristic score in prod`,
      rule: 'rules/not_simulated.ts',
      inputs: { scores: target('scores') },
      args: { round },
      outputs: [`reports/preflight/not_simulated_round${round}.json`],
      report: `reports/preflight/not_simulated_round${round}.json`,
      params: ['scoring.not_simulated'],
    })),
  );
  return {
    // `train` becomes the default once it exists; until then the furthest targets that do.
    defaultTargets: ['pool_validation', 'difficulty_report', 'stability', 'probe_scorer', 'not_simulated_round1'],
    targets,
  };
});
