// ppo_eval (docs/rc1.md, target ppo_eval), a gate: every seed's trained built-in policy (`latest` of
// checkpoints/rc1/seed_<seed>/), their mean, and the four scripted baselines against the SFT
// policy (the sft target: PPO's starting point and KL reference), all played the same way
// (ppo_eval.actions: sampled, ppo_eval.samples episodes per scenario, the same per-scenario seeds
// for every policy) in the simulated dialogue environment on held-out scenarios: the shadow set,
// plus (ppo_eval.twins) under-specified renderings of the same held-out source items, which are
// the needs-clarification items. The pool never renders a shadow source item, so no eval
// scenario shares a source question with training. The hard band of an item is its shadow
// original's (the pool's band rules, lib/train/eval-sets.ts), not its twin-ness. The checks,
// intervals and negative control are in lib/train/eval-report.ts; thresholds in
// configs/ppo_eval.yaml; reward, noise and max_turns from the effective train config.
// Inputs: `checkpoints` (target train), `sft` (target sft), `shadow` (target shadow_set),
// `weights`, `raw` (datasets, for the twins' source items), `v2` (template pack v2).
// Outputs: [0] reports/ppo_eval.json (the report, with the table), [1] reports/learning_curve.png
// (reward, the gated rollout KL against its bound, success vs step of the first seed).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { z } from 'zod';
import { defineRule, RuleError } from 'rc1-build';
import { dataFileFormat, deriveSeed, loadSources, type SourceItem } from '../lib/data/index.ts';
import { ppoSchema } from '../lib/evaluation/index.ts';
import { bandsSchema, dimensionsSchema, loadQwen3, metricsSchema, MetricsComputer } from '../lib/difficulty/index.ts';
import { PoolParamsSchema } from '../lib/pool/index.ts';
import { readScenarios } from '../lib/rollouts/index.ts';
import { loadPack, TemplatesParamsSchema } from '../lib/templates/index.ts';
import {
  assertStartedFromSft,
  BASELINE_NAMES,
  baselineActor,
  builtInCheckpoint,
  checkpointDirOf,
  comparePolicies,
  comparisonSummary,
  drawLearningCurve,
  evaluatePolicy,
  heldOutSet,
  loadPolicy,
  policyRows,
  PPO_EVAL_DEFINITIONS,
  ppoEvalSchema,
  readCurve,
  readWeights,
  resolveTrainConfig,
  scenarioSpecs,
  trainSectionSchema,
  underspecifiedTwins,
  type Actor,
  type PolicyRows,
  type ScenarioInfo,
  type SeedRun,
} from '../lib/train/index.ts';

/** KL(p ‖ q) of two categorical distributions given as log-probabilities. */
function klOf(p: Float64Array, q: Float64Array): number {
  let kl = 0;
  for (let i = 0; i < p.length; i++) kl += Math.exp(p[i]!) * (p[i]! - q[i]!);
  return kl;
}

export default defineRule({
  name: 'ppo_eval',
  version: 1,
  params: z.object({
    ppo_eval: ppoEvalSchema,
    train: trainSectionSchema,
    ppo: ppoSchema,
    overclar: z.object({ alpha: z.number().min(0), cap: z.number().int().positive() }).strict(),
    pool: PoolParamsSchema,
    templates: TemplatesParamsSchema,
    data: z.object({ on_error: z.enum(['fail', 'skip']) }).strict(),
    difficulty: z.object({ metrics: metricsSchema, bands: bandsSchema, dimensions: dimensionsSchema }).strict(),
  }),
  async run(ctx) {
    const { ppo_eval: cfg, pool, difficulty } = ctx.params;
    const train = resolveTrainConfig({ train: ctx.params.train, ppo: ctx.params.ppo, overclar: ctx.params.overclar });
    const ckDir = checkpointDirOf(ctx.inputs('checkpoints'), ctx.target);
    const seeds = ctx.params.ppo.seeds;
    const runs = seeds.map((seed) => {
      const dir = join(ckDir, `seed_${seed}`);
      if (!existsSync(dir))
        throw new RuleError(
          `${ctx.target}: ${basename(ckDir)}/seed_${seed}/ is missing: the train target makes one run per seed of ppo.seeds (rebuild train)`,
        );
      return { seed, dir, ck: builtInCheckpoint(dir, 'latest', ctx.target), metrics: join(dir, 'metrics.jsonl') };
    });
    const sftIndex = ctx
      .inputs('sft')
      .map((p) => (basename(p) === 'model.json' ? p : join(p, 'model.json')))
      .find((p) => existsSync(p));
    if (!sftIndex)
      throw new RuleError(
        `${ctx.target}: the \`sft\` input holds no model.json (declare target('sft'), whose output is checkpoints/sft/)`,
      );
    assertStartedFromSft(dirname(sftIndex), runs, ctx.target, ctx.root);
    const sft = await loadPolicy(dirname(sftIndex));
    const trained = await Promise.all(runs.map((r) => loadPolicy(r.ck.dir)));
    const [shadowFile, ...more] = ctx.inputs('shadow');
    if (!shadowFile || more.length)
      throw new RuleError(
        `${ctx.target}: the \`shadow\` input must be the shadow set's scenarios JSONL alone (declare target('shadow_set', 'scenarios'))`,
      );
    const shadow = await readScenarios([shadowFile], ctx.root);
    const [weightsFile, ...moreWeights] = ctx.inputs('weights');
    if (!weightsFile || moreWeights.length)
      throw new RuleError(
        `${ctx.target}: the \`weights\` input must be the weights file alone (declare target('weights', 'weights'))`,
      );
    const weights = await readWeights(weightsFile, 'configs/weights.json');
    ctx.progress(1, 5, 'steps');

    let twins: ReturnType<typeof underspecifiedTwins> = { scenarios: [], skipped: [] };
    if (cfg.twins) {
      const held = new Set(shadow.map((s) => s.source_id));
      const files = ctx
        .inputs('raw')
        .filter((f) => dataFileFormat(f) !== null)
        .sort();
      const loaded = await loadSources(files, { onError: ctx.params.data.on_error, root: ctx.root });
      const items: SourceItem[] = loaded.items.filter((i) => held.has(i.source_id));
      if (items.length !== held.size)
        throw new RuleError(
          `${ctx.target}: the raw datasets hold ${items.length} of the shadow set's ${held.size} source items: the twins need them all (same data/raw as shadow_set?)`,
        );
      const pack = await loadPack(ctx.inputs('v2'), ctx.root);
      if (pack.name !== ctx.params.templates.pack)
        throw new RuleError(
          `${ctx.target}: the v2 inputs are pack ${JSON.stringify(pack.name)}, but templates.pack is ${JSON.stringify(ctx.params.templates.pack)}`,
        );
      twins = underspecifiedTwins(items, pack, pool, cfg.seed, shadow.length, (seed) => ctx.rng(seed));
    }
    ctx.signal.throwIfAborted();
    const metrics = new MetricsComputer(await loadQwen3(), { multiEntityMin: difficulty.metrics.multi_entity_min });
    const set = heldOutSet(shadow, twins, metrics, difficulty.bands, difficulty.dimensions);
    ctx.progress(2, 5, 'steps');

    const shadowBucket = new Map(shadow.map((sc) => [sc.source_id, set.bucket.get(sc.id)]));
    const specs = scenarioSpecs(set.scenarios);
    const info: ScenarioInfo[] = set.scenarios.map((sc) => ({
      id: sc.id,
      cluster: sc.source_id,
      needsClarification: sc.needs_clarification,
      hardQa: (sc.task === 'hotpotqa' || sc.task === 'strategyqa') && shadowBucket.get(sc.source_id) === 'hard',
    }));
    const samples = cfg.actions === 'greedy' ? 1 : cfg.samples;
    const env = {
      weights,
      reward: { ...train.reward },
      noise: { ...train.env.noise },
      maxTurns: train.env.max_turns,
      greedy: cfg.actions === 'greedy',
    };
    const play = (actor: Actor): PolicyRows =>
      policyRows(
        info,
        Array.from(
          { length: samples },
          (_, i) => evaluatePolicy(actor, specs, { ...env, seed: deriveSeed(cfg.seed, `episode-set:${i}`) }).episodes,
        ).flat(),
      );
    const sftRows = play(sft);
    ctx.progress(3, 5, 'steps');
    const seedRuns: SeedRun[] = runs.map((r, k) => {
      const policy = trained[k]!;
      let kl = 0;
      let n = 0;
      const measured: Actor = {
        maxTurns: policy.maxTurns,
        logProbs: (obs, off) => {
          const lp = policy.logProbs(obs, off);
          kl += klOf(lp, sft.logProbs(obs, off));
          n += 1;
          return lp;
        },
      };
      const rows = play(measured);
      const curve = readCurve(r.metrics);
      const noRollout = curve.find((p) => p.kl_rollout === null);
      if (curve.length === 0 || noRollout)
        throw new RuleError(
          `${ctx.target}: ${relative(ctx.root, r.metrics)} ${noRollout ? `has no kl_rollout at step ${noRollout.step}` : 'has no step'}: the KL check needs the rollout KL of every step (a run by an older trainer: rebuild with --force train)`,
        );
      return {
        seed: r.seed,
        rows,
        klRolloutMax: Math.max(...curve.map((p) => p.kl_rollout!)),
        klPostUpdateMax: Math.max(...curve.map((p) => p.kl ?? 0)),
        klEval: n === 0 ? 0 : kl / n,
      };
    });
    const baselines = BASELINE_NAMES.map((name) => ({ name, rows: play(baselineActor(name, train.env.max_turns)) }));
    ctx.signal.throwIfAborted();
    const cmp = comparePolicies({
      scenarios: info,
      sft: sftRows,
      seeds: seedRuns,
      baselines,
      cfg,
      targetKl: train.ppo.target_kl,
    });
    ctx.log(`ppo_eval table:\n${cmp.table_markdown}`);
    ctx.progress(4, 5, 'steps');

    const points = readCurve(runs[0]!.metrics);
    const png = ctx.output('curve');
    mkdirSync(dirname(png), { recursive: true });
    const last = points.at(-1);
    writeFileSync(
      png,
      await drawLearningCurve(
        points,
        `RC1 LEARNING CURVE: ${train.engine} ${train.strategy} SEED ${runs[0]!.seed}${last ? `, steps ${points[0]!.step}-${last.step}` : ''}`,
        {
          value: cfg.thresholds.max_kl_over_target * train.ppo.target_kl,
          label: `BOUND ${Number((cfg.thresholds.max_kl_over_target * train.ppo.target_kl).toPrecision(6))} = ${cfg.thresholds.max_kl_over_target} X TARGET`,
        },
      ),
    );
    const klCurves = runs.map((r) => ({
      seed: r.seed,
      points: readCurve(r.metrics).map((p) => ({ step: p.step, kl_rollout: p.kl_rollout, kl_post_update: p.kl })),
    }));
    ctx.progress(5, 5, 'steps');

    const counts: Record<string, Record<string, number>> = {};
    for (const s of set.scenarios) {
      const key = `${set.kind.get(s.id)}/${s.task}`;
      counts[key] ??= {};
      const b = set.bucket.get(s.id) ?? 'none';
      counts[key]![b] = (counts[key]![b] ?? 0) + 1;
    }
    const describe = (c: {
      name: string;
      meta: { step: number; config_hash: string; files: Record<string, string> };
    }) => ({
      checkpoint: c.name,
      step: c.meta.step,
      config_hash: c.meta.config_hash,
      model_bin_sha256: c.meta.files['model.bin'] ?? null,
    });
    return {
      checks: cmp.checks,
      summary: comparisonSummary(cmp),
      report: {
        environment:
          'simulated-dialogue-v3: a simulation built from the data (lib/train/README.md); every policy here is the built-in dialogue-control MLP or a scripted rule, not a language model',
        definitions: PPO_EVAL_DEFINITIONS,
        thresholds: cfg.thresholds,
        policies: {
          sft: { model: relative(ctx.root, dirname(sftIndex)), hidden: sft.shape.hidden },
          seeds: runs.map((r) => ({ seed: r.seed, ...describe(r.ck) })),
          baselines: BASELINE_NAMES,
        },
        eval_set: {
          scenarios: set.scenarios.length,
          items: cmp.items,
          episodes_per_policy: set.scenarios.length * samples,
          actions: cfg.actions,
          seed: cfg.seed,
          notes: set.notes,
          counts_by_set_task_bucket: counts,
        },
        table: cmp.table,
        table_markdown: cmp.table_markdown,
        gains: cmp.gains,
        negative_control: cmp.negative_control,
        best_baseline: cmp.best_baseline,
        kl: { ...cmp.kl, bound: cfg.thresholds.max_kl_over_target * train.ppo.target_kl, curves: klCurves },
        learning_curve: {
          path: ctx.outputPath('curve'),
          seed: runs[0]!.seed,
          points: points.length,
          metrics: join('checkpoints', 'rc1', `seed_${runs[0]!.seed}`, 'metrics.jsonl'),
        },
      },
    };
  },
});
