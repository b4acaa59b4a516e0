// pool_validation (RC1.md gate): the seed pool's diversity, duplicates, lengths, leaks into the
// shadow set and task mix. One output, the report (the engine writes it from the returned checks
// and report). Inputs: `pool` (the seed_pool output), `shadow` (shadow_set outputs: the scenarios
// .jsonl is compared against), `v1` (pack_v1 JSON: the KL baseline), `raw` (the data files: the
// baseline renders the pool's own sampled items with pack_v1, so the KL compares packs, not
// samples). Params: `validation` (thresholds, sampling, RC1's target mix), `pool` (clarify rate, max turns).
// Whole pool: duplicates, lengths, leaks, mix, role/style coverage. Seeded sample (batches of a
// fixed size): distinct-n, TTR, Zipf, KL, so the values mean the same at 1 000 and 30 000.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { check, defineRule, RuleError } from 'rc1-build';
import { dataFileFormat, deriveSeed, displayPath, loadSources, sourceKey, TASKS, type Scenario, type SourceItem } from 'rc1-build/data';
import { loadPack } from 'rc1-build/templates';
import {
  contextTokens, LEAK_DEFINITION, LeakIndex, LENGTH_DEFINITION, PoolParamsSchema, readShadowScenarios, renderTwin,
  scenarioTurns, TURNS_DEFINITION, userSegments, ValidationParamsSchema, type LeakMatch,
} from 'rc1-build/pool';
import { corpusOf, corpusStats, distinctNBatched, ngramKl, normalizeText, TEXT_STAT_DEFINITIONS } from 'rc1-build/text';

const LISTED = 20;
const HINTS = {
  distinct_2: 'add templates or persona/style lines, or vary the wording of the existing ones (seeds 001: "template expansion")',
  kl: 'pack_v2 reads too much like pack_v1: rewrite templates in new wording rather than copying v1 phrasing',
  roles: 'declare more roles in templates/pack_v2/roles.json (≥ 4), each with persona lines',
  styles: 'declare more styles in templates/pack_v2/styles.json (≥ 3), each with directive lines',
  duplicates: 'raise template × role × style combinations (more templates or persona lines) or use more source items',
  len_min: 'lengthen short templates or raise pool.length.min so short items get longer templates',
  len_max: 'trim long contexts, or check the base model max_seq_len before raising the limit (seeds 002 §五)',
  leak: 'a pool item repeats a shadow question: check that seed_pool excludes sample_manifest.json source_ids and dedupe near-identical questions',
  mix: 'the realised task mix is off RC1\'s target (validation.mix_target): set pool.mix to the target and check that each task has enough eligible items',
};

interface Row { id: string; task: string; source: string; role: string; style: string; clarify: boolean; text: string }

export default defineRule({
  name: 'pool_validation',
  version: 1,
  params: z.object({ validation: ValidationParamsSchema, pool: PoolParamsSchema }),
  async run(ctx) {
    const { validation: v, pool: poolCfg } = ctx.params;
    const [poolPath, ...extra] = ctx.inputs('pool').filter((p) => p.endsWith('.jsonl'));
    if (!poolPath || extra.length > 0) throw new RuleError('pool_validation: the `pool` inputs must hold exactly one .jsonl (the seed pool)');
    const shadow = await readShadowScenarios(ctx.inputs('shadow'));
    const leakIndex = new LeakIndex(shadow.scenarios.map((s) => ({ id: s.id, segments: userSegments(s) })), v.leak.ngram);
    const v1 = await loadPack(ctx.inputs('v1'), ctx.root);
    const raw = await loadSources(ctx.inputs('raw').filter((f) => dataFileFormat(f) !== null).sort(), { onError: 'skip', root: ctx.root });
    const items = new Map<string, SourceItem>(raw.items.map((i) => [sourceKey(i), i]));

    const rows: Row[] = [];
    const seen = new Set<string>();
    const ctxLen = new Map<string, number>();
    const leaks: (LeakMatch & { id: string })[] = [];
    const outOfRange: { id: string; length: number }[] = [];
    let duplicates = 0, lenMin = Infinity, lenMax = 0, turnsMax = 0;
    const lines = createInterface({ input: createReadStream(poolPath, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      const s = JSON.parse(line) as Scenario;
      const segments = userSegments(s);
      const text = s.messages.map((m) => m.content).join('\n');
      const norm = normalizeText(text);
      if (seen.has(norm)) duplicates += 1;
      else seen.add(norm);
      const key = `${s.task}/${s.source_id}`;
      let c = ctxLen.get(key);
      if (c === undefined) ctxLen.set(key, (c = contextTokens(s.context)));
      const length = c + segments.reduce((a, seg) => a + seg.length, 0);
      lenMin = Math.min(lenMin, length);
      lenMax = Math.max(lenMax, length);
      if (length < v.length.min || length > v.length.max) outOfRange.push({ id: s.id, length });
      turnsMax = Math.max(turnsMax, scenarioTurns(s));
      const leak = leakIndex.best(segments);
      if (leak && leak.similarity > v.leak.max_similarity) leaks.push({ id: s.id, ...leak });
      rows.push({ id: s.id, task: s.task, source: key, role: s.role, style: s.style, clarify: s.needs_clarification, text });
      if (rows.length % 5000 === 0) { ctx.progress(rows.length, rows.length + 1, 'scenarios'); ctx.signal.throwIfAborted(); }
    }
    const n = rows.length;
    if (n === 0) throw new RuleError(`pool_validation: ${poolPath} holds no scenario`);

    const sample = ctx.rng(deriveSeed(v.seed, 'sample')).shuffle(rows).slice(0, v.sample.batch_size * v.sample.batches);
    const docs = sample.map((r) => corpusOf(r.text.split('\n')));
    const twins = (salt: string) => sample.map((r) => {
      const item = items.get(r.source);
      if (!item) throw new RuleError(`pool_validation: scenario ${r.id} names source ${r.source}, which the raw inputs do not hold`);
      return corpusOf(renderTwin(v1, item, r.clarify, ctx.rng(deriveSeed(v.seed, `${salt}:${r.id}`))) ?? []);
    });
    const base = twins('twin');
    const statOpts = (salt: string) => ({ batchSize: v.sample.batch_size, maxBatches: v.sample.batches, zipfMaxRank: v.zipf_max_rank, rng: ctx.rng(deriveSeed(v.seed, salt)) });
    const stats = corpusStats(docs, statOpts('batches'));
    const baseStats = corpusStats(base, statOpts('batches'));
    const kl = ngramKl(docs.flat(), base.flat(), v.kl.n, v.kl.alpha);
    const klNoise = ngramKl(twins('control').flat(), base.flat(), v.kl.n, v.kl.alpha);

    const tally = (key: 'role' | 'style') => {
      const counts: Record<string, number> = {};
      for (const r of rows) counts[r[key]] = (counts[r[key]] ?? 0) + 1;
      return { count: Object.keys(counts).length, scenarios: Object.fromEntries(Object.keys(counts).sort().map((k) => [k, counts[k]])) };
    };
    const roles = tally('role');
    const styles = tally('style');
    const weights = Object.fromEntries(TASKS.map((t) => [t, v.mix_target[t] ?? 0]));
    const wsum = Object.values(weights).reduce((a, b) => a + b, 0);
    const mix = Object.fromEntries(TASKS.map((t) => {
      const count = rows.filter((r) => r.task === t).length;
      const target = wsum > 0 ? weights[t]! / wsum : 0;
      return [t, { count, share: count / n, target, deviation_pp: Math.abs(count / n - target) * 100 }];
    }));
    const maxDev = Math.max(...TASKS.map((t) => mix[t]!.deviation_pp));
    const round = (x: number, d = 4) => Number(x.toFixed(d));
    const tol = v.mix_tolerance_pp;

    const checks = [
      check('distinct_2', round(stats.distinct_2.mean), '>=', v.min_distinct_2, HINTS.distinct_2),
      check(`kl${v.kl.n}_vs_v1`, round(kl), '>=', v.min_kl, HINTS.kl),
      check('roles', roles.count, '>=', v.min_roles, HINTS.roles),
      check('styles', styles.count, '>=', v.min_styles, HINTS.styles),
      check('duplicate_rate', round(duplicates / n, 6), '<=', v.max_duplicate_rate, HINTS.duplicates),
      check('length_min', lenMin, '>=', v.length.min, HINTS.len_min),
      check('length_max', lenMax, '<=', v.length.max, HINTS.len_max),
      check('shadow_leaks', leaks.length, '<=', v.leak.max_leaks, HINTS.leak),
      check('mix_max_deviation_pp', round(maxDev, 3), '<=', tol, HINTS.mix),
      ...TASKS.map((t) => check(`mix_${t}_deviation_pp`, round(mix[t]!.deviation_pp, 3), '<=', tol, HINTS.mix)),
    ];
    const clarified = rows.filter((r) => r.clarify).length;
    ctx.progress(n, n, 'scenarios');
    return {
      checks,
      report: {
        pool: { path: displayPath(poolPath, ctx.root), scenarios: n },
        sample: { scenarios: sample.length, batch_size: v.sample.batch_size, batches: stats.distinct_2.batches, seed: v.seed },
        stats: { ...stats, kl: { n: v.kl.n, alpha: v.kl.alpha, value: kl, noise_floor: klNoise } },
        baseline_v1_twins: baseStats,
        distinct_2_by_batch_size: Object.fromEntries([v.sample.batch_size, 100, sample.length].filter((x, i, a) => a.indexOf(x) === i && x <= sample.length)
          .map((size) => [size, distinctNBatched(docs, 2, size, Math.floor(sample.length / size), ctx.rng(deriveSeed(v.seed, 'by-size'))).mean])),
        roles, styles,
        duplicates: { count: duplicates, rate: duplicates / n },
        length: { min: lenMin, max: lenMax, out_of_range: outOfRange.length, examples: outOfRange.slice(0, LISTED) },
        turns: { max: turnsMax, configured_max: poolCfg.max_turns },
        clarify: { count: clarified, rate: clarified / n, configured: poolCfg.clarify_rate },
        leaks: { shadow_items: leakIndex.shadowItems, ngram: v.leak.ngram, threshold: v.leak.max_similarity, count: leaks.length, examples: leaks.slice(0, LISTED) },
        mix,
        definitions: {
          ...TEXT_STAT_DEFINITIONS,
          text: 'the user turns of each scenario, one segment per turn',
          distinct_2_by_batch_size: 'the same distinct-2 at other batch sizes over the same sample, for reference (not gated): corpus-level distinct-n falls as the batch grows',
          sample: `distinct-n per batch of ${v.sample.batch_size} scenarios (the PPO batch size), mean over ${stats.distinct_2.batches} batches of a seeded shuffle; TTR, Zipf (ranks 1..${v.zipf_max_rank}) and KL over the same ${sample.length} scenarios`,
          kl_baseline: `Q = the same sampled scenarios re-rendered with pack_v1 (same item, same kind); noise_floor = KL of a second, differently seeded pack_v1 rendering against Q (α = ${v.kl.alpha}, ${v.kl.n}-grams)`,
          duplicates: 'duplicate rate = scenarios whose normalised user turns equal an earlier scenario\'s / scenarios',
          length: LENGTH_DEFINITION,
          turns: TURNS_DEFINITION,
          leak: LEAK_DEFINITION,
          roles_styles: 'count = distinct role (style) labels among all scenarios',
          mix: 'share = scenarios of the task / scenarios; deviation = |share − normalised validation.mix_target weight| (RC1\'s target, not the generator\'s pool.mix) in percentage points',
        },
      },
    };
  },
});
