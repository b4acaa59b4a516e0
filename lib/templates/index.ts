// Template packs as data, imported by rules as 'rc1-build/templates': the strict schemas of the
// pack files, loading and cross-checking a pack folder, and slot filling with errors that name
// the template and the slot.
export {
  GAP_KINDS,
  PackFileSchema,
  PackMetaSchema,
  REQUIRED_SLOTS,
  RolesFileSchema,
  StylesFileSchema,
  TEMPLATE_SLOTS,
  TemplateSchema,
  TemplatesFileSchema,
  type GapDef,
  type GapKind,
  type PackFile,
  type PackMeta,
  type RoleDef,
  type StyleDef,
  type TemplateDef,
  type TemplateSlot,
} from './pack-schema.ts';
export { loadPack, PackError, parsePack, type Pack, type PackSource } from './load-pack.ts';
export { checkTemplateSlots, fillSlots, renderTemplate, TemplateError, usedSlots } from './render-template.ts';
export { renderPackSample, type PackRendering } from './render-pack.ts';
export {
  DiversityParamsSchema,
  TemplatesParamsSchema,
  type DiversityParams,
  type TemplatesParams,
} from './templates-params.ts';
