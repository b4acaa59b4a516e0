// The config sections about template packs, as zod schemas shared by the rules that read them:
//   templates  which packs are which (checked against each pack file's `name`) and the
//              categories whose template counts the diversity gate checks
//   diversity  diversity_report: the fixed-seed pack rendering, statistic parameters, thresholds
import { z } from 'zod';

export const TemplatesParamsSchema = z
  .object({
    /** The name in pack_v2's pack.json: the pack seed_pool renders with. */
    pack: z.string().min(1),
    /** The name in pack_v1's pack.json: the baseline the KL is measured against. */
    baseline: z.string().min(1),
    /** Categories that must each hold diversity.min_templates_per_category templates. */
    categories: z.array(z.string().min(1)).min(1),
  })
  .strict();

export const DiversityParamsSchema = z
  .object({
    seed: z.number().int(),
    /** Renderings of each pack (templates, roles and styles dealt evenly). */
    renderings: z.number().int().positive(),
    /** distinct-n is measured per batch of this many renderings and averaged. */
    batch_size: z.number().int().positive(),
    kl: z.object({ n: z.number().int().positive(), alpha: z.number().positive() }).strict(),
    zipf_max_rank: z.number().int().min(2),
    min_distinct_2: z.number().min(0).max(1),
    min_kl: z.number().min(0),
    min_roles: z.number().int().min(0),
    min_styles: z.number().int().min(0),
    min_templates_per_category: z.number().int().min(0),
  })
  .strict();

export type TemplatesParams = z.infer<typeof TemplatesParamsSchema>;
export type DiversityParams = z.infer<typeof DiversityParamsSchema>;
