// The files of a template pack (templates/pack_*/*.json), as zod .strict() schemas: a pack is a
// folder of JSON files, each with a `kind`:
//   pack       name, version, which template category renders each task, the clarify category,
//              the tool hint lines, and the gap definitions (how a detail is left out of a question
//              and how the clarification exchange reads)
//   roles      user roles, each with one or more persona lines
//   styles     request styles, each with one or more directive lines
//   templates  the templates of one category: id, declared slots, user turns
// Unknown keys are errors; loadPack reports them with the file and the field.
import { z } from 'zod';

/** Slots a template may use; the renderer supplies all of them. */
export const TEMPLATE_SLOTS = ['persona', 'question', 'style', 'tool_hint'] as const;
export type TemplateSlot = (typeof TEMPLATE_SLOTS)[number];
/** Slots every template must use: without them role, style or item would not show in the text. */
export const REQUIRED_SLOTS: readonly TemplateSlot[] = ['persona', 'question', 'style'];

/**
 * How a detail is left out of a question. number: a bare count ("48 clips"); amount: a sum of
 * money ("$12"); percent ("20%"); entity: a HotpotQA supporting title named in the question;
 * term: the StrategyQA term.
 */
export const GAP_KINDS = ['number', 'amount', 'percent', 'entity', 'term'] as const;
export type GapKind = (typeof GAP_KINDS)[number];

const id = z.string().regex(/^[a-z][a-z0-9_.-]*$/, 'a lower-case id: letters, digits, _ . -');
const line = z.string().trim().min(1);
const lines = z.array(line).min(1);

const GapSchema = z
  .object({
    /** Words that stand in the question where the detail was. */
    fillers: lines,
    /** The assistant's clarifying question; may use {phrase} (the filler and the words after it). */
    asks: lines,
    /** The user's reply; must use {detail}. */
    replies: lines,
  })
  .strict();

export const PackMetaSchema = z
  .object({
    kind: z.literal('pack'),
    name: id,
    version: z.number().int().positive(),
    description: line,
    categories: z.object({ gsm8k: id, hotpotqa: id, strategyqa: id }).strict(),
    clarify_category: id,
    tool_hints: z.object({ wiki: lines, calc: lines }).strict(),
    gaps: z
      .object({
        number: GapSchema,
        amount: GapSchema,
        percent: GapSchema,
        entity: GapSchema,
        term: GapSchema,
      })
      .strict(),
  })
  .strict();

export const RolesFileSchema = z
  .object({
    kind: z.literal('roles'),
    roles: z.array(z.object({ id, description: line, personas: lines }).strict()).min(1),
  })
  .strict();

export const StylesFileSchema = z
  .object({
    kind: z.literal('styles'),
    styles: z.array(z.object({ id, description: line, directives: lines }).strict()).min(1),
  })
  .strict();

export const TemplateSchema = z
  .object({
    id,
    description: line.optional(),
    slots: z.array(z.enum(TEMPLATE_SLOTS)).min(1),
    /** One string per user turn, sent in order. */
    turns: z.array(line).min(1),
  })
  .strict();

export const TemplatesFileSchema = z
  .object({
    kind: z.literal('templates'),
    category: id,
    templates: z.array(TemplateSchema).min(1),
  })
  .strict();

export const PackFileSchema = z.discriminatedUnion('kind', [
  PackMetaSchema,
  RolesFileSchema,
  StylesFileSchema,
  TemplatesFileSchema,
]);

export type PackMeta = z.infer<typeof PackMetaSchema>;
export type GapDef = PackMeta['gaps']['number'];
export type RoleDef = z.infer<typeof RolesFileSchema>['roles'][number];
export type StyleDef = z.infer<typeof StylesFileSchema>['styles'][number];
export type TemplateDef = z.infer<typeof TemplateSchema>;
export type PackFile = z.infer<typeof PackFileSchema>;
