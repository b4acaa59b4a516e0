// ppo_eval (RC1.md row ppo_eval; seeds/000 Phase 3), a gate: the trained built-in policy (`latest`
// of the train target's checkpoints/rc1/) against the policy before training (`initial/`, step 0,
// the reference of the KL penalty), both played the same way (ppo_eval.actions: greedy, or sampled
// with ppo_eval.samples episodes per scenario) in simulated-dialogue-v1 on held-out
// scenarios: the shadow set, plus (ppo_eval.twins) under-specified renderings of the same held-out
// source items, which are the only needs-clarification items (the shadow set has none). Buckets
// are computed with the balanced pool's band rules (src/train/eval-sets.ts). The checks and their
// definitions are in src/train/eval-report.ts; the thresholds in configs/ppo_eval.yaml. Reward
// options and max_turns come from the effective train config (params train, ppo, overclar.alpha,
// overclar.cap resolved as the train rule resolves them).
// Inputs: `checkpoints` (target train: checkpoints/rc1/ and reports/metrics.jsonl), `shadow`
// (target shadow_set), `weights` (configs/weights.json), `raw` (datasets, for the twins' source
// items), `v2` (template pack v2). Outputs: [0] reports/ppo_eval.json (the report),
// [1] reports/learning_curve.png (reward, KL, success vs step from reports/metrics.jsonl).
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { defineRule, RuleError } from 'rc1-build';
import { dataFileFormat, deriveSeed, loadSources, type SourceItem } from 'rc1-build/data';
import { ppoSchema } from 'rc1-build/evaluation';
import { bandsSchema, dimensionsSchema, loadQwen3, metricsSchema, MetricsComputer } from 'rc1-build/difficulty';
import { PoolParamsSchema } from 'rc1-build/pool';
import { readScenarios } from 'rc1-build/rollouts';
import { loadPack, TemplatesParamsSchema } from 'rc1-build/templates';
import {
  builtInCheckpoint, checkpointDirOf, comparePolicies, comparisonSummary, drawLearningCurve, evaluatePolicy, heldOutSet, loadPolicy,
  PPO_EVAL_DEFINITIONS, ppoEvalSchema, readCurve, readWeights, resolveTrainConfig, summarizeEval, trainSectionSchema, underspecifiedTwins,
  type EvalEpisode,
} from 'rc1-build/train';

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
    const [reportOut, pngOut] = ctx.outputs;
    if (!reportOut?.endsWith('.json') || !pngOut?.endsWith('.png')) throw new RuleError(`${ctx.target}: declare outputs [reports/ppo_eval.json, reports/learning_curve.png] in this order`);
    const group = ctx.inputs('checkpoints');
    const ckDir = checkpointDirOf(group, ctx.target);
    const metricsFile = group.find((p) => basename(p) === 'metrics.jsonl');
    if (!metricsFile) throw new RuleError(`${ctx.target}: the \`checkpoints\` input holds no metrics.jsonl (the train target's reports/metrics.jsonl): the learning curve needs it`);
    const trainedCk = builtInCheckpoint(ckDir, 'latest', ctx.target);
    const referenceCk = builtInCheckpoint(ckDir, 'initial', ctx.target);
    const [trained, reference] = [await loadPolicy(trainedCk.dir), await loadPolicy(referenceCk.dir)];

    const shadowFile = ctx.inputs('shadow').find((p) => p.endsWith('.jsonl'));
    if (!shadowFile) throw new RuleError(`${ctx.target}: the \`shadow\` input holds no .jsonl (declare target('shadow_set'))`);
    const shadow = await readScenarios([shadowFile], ctx.root);
    const weightsFile = ctx.inputs('weights').find((p) => basename(p) === 'weights.json');
    if (!weightsFile) throw new RuleError(`${ctx.target}: the \`weights\` input holds no weights.json (declare configs/weights.json, the weights target's output)`);
    const weights = await readWeights(weightsFile, 'configs/weights.json');
    ctx.progress(1, 5, 'steps');

    let twins: ReturnType<typeof underspecifiedTwins> = { scenarios: [], skipped: [] };
    if (cfg.twins) {
      const held = new Set(shadow.map((s) => s.source_id));
      const files = ctx.inputs('raw').filter((f) => dataFileFormat(f) !== null).sort();
      const loaded = await loadSources(files, { onError: ctx.params.data.on_error, root: ctx.root });
      const items: SourceItem[] = loaded.items.filter((i) => held.has(i.source_id));
      if (items.length !== held.size) throw new RuleError(`${ctx.target}: the raw datasets hold ${items.length} of the shadow set's ${held.size} source items: the twins need them all (same data/raw as shadow_set?)`);
      const pack = await loadPack(ctx.inputs('v2'), ctx.root);
      if (pack.name !== ctx.params.templates.pack) throw new RuleError(`${ctx.target}: the v2 inputs are pack ${JSON.stringify(pack.name)}, but templates.pack is ${JSON.stringify(ctx.params.templates.pack)}`);
      twins = underspecifiedTwins(items, pack, pool, cfg.seed, shadow.length, (seed) => ctx.rng(seed));
    }
    ctx.signal.throwIfAborted();
    const metrics = new MetricsComputer(await loadQwen3(), { multiEntityMin: difficulty.metrics.multi_entity_min });
    const set = heldOutSet(shadow, twins, metrics, difficulty.bands, difficulty.dimensions);
    ctx.progress(2, 5, 'steps');

    const runs = cfg.actions === 'greedy' ? 1 : cfg.samples;
    const play = (policy: typeof trained): EvalEpisode[] => Array.from({ length: runs }, (_, i) => evaluatePolicy(policy, set.scenarios, {
      weights, reward: { ...train.reward }, maxTurns: train.env.max_turns, seed: deriveSeed(cfg.seed, `episode-set:${i}`), greedy: cfg.actions === 'greedy',
    }).episodes).flat().map((e) => ({ ...e, difficulty: set.bucket.get(e.scenario_id) ?? null }));
    const epT = play(trained);
    ctx.progress(3, 5, 'steps');
    const epR = play(reference);
    ctx.signal.throwIfAborted();
    const items = {
      needs_clarification: set.scenarios.filter((s) => s.needs_clarification).length,
      hard_qa: set.scenarios.filter((s) => set.bucket.get(s.id) === 'hard' && (s.task === 'hotpotqa' || s.task === 'strategyqa')).length,
    };
    const cmp = comparePolicies(summarizeEval(epT), summarizeEval(epR), cfg, items);
    const bySet = Object.fromEntries((['shadow', 'twin'] as const).map((k) => {
      const pick = (eps: EvalEpisode[]): EvalEpisode[] => eps.filter((e) => set.kind.get(e.scenario_id) === k);
      const c = comparePolicies(summarizeEval(pick(epT)), summarizeEval(pick(epR)), cfg, items);
      return [k === 'twin' ? 'twins' : k, { overall: c.overall, by_task: c.by_task, by_difficulty: c.by_difficulty }];
    }));
    ctx.progress(4, 5, 'steps');

    const points = readCurve(metricsFile);
    const png = ctx.output(pngOut);
    mkdirSync(dirname(png), { recursive: true });
    const last = points.at(-1);
    writeFileSync(png, drawLearningCurve(points, `RC1 LEARNING CURVE: ${train.engine} ${train.strategy}${last ? `, steps ${points[0]!.step}-${last.step}` : ''}`));
    ctx.progress(5, 5, 'steps');

    const counts: Record<string, Record<string, number>> = {};
    for (const s of set.scenarios) {
      const key = `${set.kind.get(s.id)}/${s.task}`;
      counts[key] ??= {};
      const b = set.bucket.get(s.id) ?? 'none';
      counts[key]![b] = (counts[key]![b] ?? 0) + 1;
    }
    const describe = (c: typeof trainedCk, p: typeof trained) => ({ checkpoint: c.name, step: c.meta.step, config_hash: c.meta.config_hash, model_bin_sha256: c.meta.files['model.bin'] ?? null, hidden: p.shape.hidden });
    return {
      checks: cmp.checks,
      summary: comparisonSummary(cmp),
      report: {
        definitions: PPO_EVAL_DEFINITIONS,
        thresholds: cfg.thresholds,
        policies: { trained: describe(trainedCk, trained), reference: describe(referenceCk, reference) },
        eval_set: { scenarios: set.scenarios.length, gated_group_scenarios: items, episodes_per_policy: set.scenarios.length * runs, actions: cfg.actions, seed: cfg.seed, notes: set.notes, counts_by_set_task_bucket: counts },
        overall: cmp.overall,
        needs_clarification: cmp.needs_clarification,
        no_clarification_needed: cmp.no_clarification_needed,
        hard_qa: cmp.hard_qa,
        by_task: cmp.by_task,
        by_difficulty: cmp.by_difficulty,
        by_set: bySet,
        learning_curve: { path: pngOut, points: points.length, metrics: join('reports', 'metrics.jsonl') },
      },
    };
  },
});
