// diversity_report (docs/rc1.md gate): templates/pack_v2 against the baseline templates/pack_v1 over a
// fixed-seed rendering of each pack (renderPackSample: templates, roles and styles dealt evenly;
// the question slot left empty so only the pack's own prose is measured). Reports distinct-1/2
// (per batch of a fixed size), TTR, Zipf slope, 3-gram KL(v2‖v1), role and style coverage and
// templates per category, with their definitions. One output, the report, which the engine writes
// from the returned checks and report. Inputs: `v1`, `v2` (the packs' JSON files). Params:
// `templates` (pack names, categories), `diversity` (rendering, statistic parameters, thresholds).
import { z } from 'zod';
import { check, defineRule, RuleError } from 'rc1-build';
import { deriveSeed } from '../lib/data/index.ts';
import {
  DiversityParamsSchema,
  loadPack,
  renderPackSample,
  TemplatesParamsSchema,
  type Pack,
} from '../lib/templates/index.ts';
import { corpusStats, coverage, ngramKl, TEXT_STAT_DEFINITIONS } from '../lib/text/index.ts';

const HINTS = {
  distinct_2:
    'add templates, persona lines or style directives in new wording; repeated phrasing across templates lowers distinct-2',
  kl: 'pack_v2 reads too much like pack_v1: write new phrasing rather than editing the v1 templates',
  roles: 'add roles to templates/pack_v2/roles.json, each with its own persona lines (seeds 000: ≥ 4 roles)',
  styles: 'add styles to templates/pack_v2/styles.json, each with its own directive lines (seeds 000: ≥ 3 styles)',
  templates:
    'write more templates of this category in templates/pack_v2 (seeds 000: ≥ 6 per category math / multihop / clarify)',
};

export default defineRule({
  name: 'diversity_report',
  version: 1,
  params: z.object({ templates: TemplatesParamsSchema, diversity: DiversityParamsSchema }),
  async run(ctx) {
    const { templates: t, diversity: d } = ctx.params;
    const v1 = await loadPack(ctx.inputs('v1'), ctx.root);
    const v2 = await loadPack(ctx.inputs('v2'), ctx.root);
    if (v1.name !== t.baseline)
      throw new RuleError(
        `diversity_report: the v1 inputs are pack ${JSON.stringify(v1.name)}, but templates.baseline is ${JSON.stringify(t.baseline)}`,
      );
    if (v2.name !== t.pack)
      throw new RuleError(
        `diversity_report: the v2 inputs are pack ${JSON.stringify(v2.name)}, but templates.pack is ${JSON.stringify(t.pack)}`,
      );

    const render = (pack: Pack, salt: string) =>
      renderPackSample(pack, d.renderings, ctx.rng(deriveSeed(d.seed, salt)));
    const statOpts = {
      batchSize: d.batch_size,
      maxBatches: Math.ceil(d.renderings / d.batch_size),
      zipfMaxRank: d.zipf_max_rank,
    };
    const r1 = render(v1, 'v1');
    const r2 = render(v2, 'v2');
    const s1 = corpusStats(r1.docs, { ...statOpts, rng: ctx.rng(deriveSeed(d.seed, 'batches')) });
    const s2 = corpusStats(r2.docs, { ...statOpts, rng: ctx.rng(deriveSeed(d.seed, 'batches')) });
    const kl = ngramKl(r2.docs.flat(), r1.docs.flat(), d.kl.n, d.kl.alpha);
    const noise = ngramKl(render(v2, 'v2-control').docs.flat(), r2.docs.flat(), d.kl.n, d.kl.alpha);
    ctx.progress(1, 2, 'packs');

    const describe = (pack: Pack, r: typeof r1, s: typeof s1) => ({
      name: pack.name,
      files: pack.files,
      templates: Object.fromEntries(Object.entries(pack.templatesByCategory).map(([c, ts]) => [c, ts.length])),
      roles: coverage(
        pack.roles.map((x) => x.id),
        r.roles,
      ),
      styles: coverage(
        pack.styles.map((x) => x.id),
        r.styles,
      ),
      stats: s,
    });
    const perCategory = t.categories.map((c) => [c, v2.templatesByCategory[c]?.length ?? 0] as const);
    const roles = coverage(
      v2.roles.map((x) => x.id),
      r2.roles,
    );
    const styles = coverage(
      v2.styles.map((x) => x.id),
      r2.styles,
    );
    const round = (x: number) => Number(x.toFixed(4));
    const checks = [
      check('distinct_2', round(s2.distinct_2.mean), '>=', d.min_distinct_2, HINTS.distinct_2),
      check(`kl${d.kl.n}_v2_vs_v1`, round(kl), '>=', d.min_kl, HINTS.kl),
      check('roles', roles.count, '>=', d.min_roles, HINTS.roles),
      check('styles', styles.count, '>=', d.min_styles, HINTS.styles),
      ...perCategory.map(([c, count]) =>
        check(`templates_${c}`, count, '>=', d.min_templates_per_category, HINTS.templates),
      ),
    ];
    ctx.progress(2, 2, 'packs');
    const counts = perCategory.map(([c, count]) => `${c} ${count}`).join(', ');
    return {
      checks,
      summary: `distinct-2 ${s2.distinct_2.mean.toFixed(3)} (v1 ${s1.distinct_2.mean.toFixed(3)}), KL ${kl.toFixed(3)}, ${roles.count} roles, ${styles.count} styles; templates ${counts}`,
      report: {
        v2: describe(v2, r2, s2),
        v1: describe(v1, r1, s1),
        kl: { n: d.kl.n, alpha: d.kl.alpha, v2_vs_v1: kl, noise_floor: noise },
        rendering: { seed: d.seed, renderings: d.renderings, batch_size: d.batch_size },
        definitions: {
          ...TEXT_STAT_DEFINITIONS,
          rendering: `each pack rendered ${d.renderings} times (seed ${d.seed}): templates, roles and styles dealt from seeded shuffles, re-shuffled when exhausted; persona, directive and tool-hint lines drawn by the seeded rng; the {question} slot is left empty and the text cut there into separate segments, so only the pack's prose is measured`,
          distinct: `distinct-n per batch of ${d.batch_size} renderings (the PPO batch size), mean over the batches of a seeded shuffle`,
          kl_setup: `KL(v2‖v1) over ${d.kl.n}-grams with α = ${d.kl.alpha}; noise_floor = KL of a second, differently seeded v2 rendering against the first (what sampling alone gives)`,
          zipf_range: `ranks 1..min(V, ${d.zipf_max_rank})`,
          roles_styles: 'count = declared roles (styles) of the pack that occur in its rendering',
        },
      },
    };
  },
});
