// Loads a template pack: every JSON file of the folder is validated by its `kind`'s strict
// schema, then the files are merged and cross-checked (one pack file; unique role, style and
// template ids; declared slots = used slots; every category the pack names has templates; gap
// replies reveal {detail}). Any problem is a PackError naming the file and the field. The result
// does not depend on the order the files are given in.
import { ExpectedError } from 'rc1-build';
import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { displayPath, issueField, type Task, type ToolName } from '../data/index.ts';
import {
  GAP_KINDS,
  PackFileSchema,
  REQUIRED_SLOTS,
  type GapDef,
  type GapKind,
  type PackMeta,
  type RoleDef,
  type StyleDef,
  type TemplateDef,
} from './pack-schema.ts';
import { checkTemplateSlots, fillSlots, TemplateError, usedSlots } from './render-template.ts';

/** An expected error (rc1-build's marker): the build prints its message alone, no stack. */
export class PackError extends ExpectedError {
  override name = 'PackError';
}

export interface Pack {
  name: string;
  version: number;
  description: string;
  /** The files it was read from, sorted (as given, or relative to the root). */
  files: string[];
  categories: Record<Task, string>;
  clarifyCategory: string;
  toolHints: Record<ToolName, string[]>;
  gaps: Record<GapKind, GapDef>;
  /** Sorted by id. */
  roles: RoleDef[];
  styles: StyleDef[];
  templates: TemplateDef[];
  /** Templates of each category the pack names, sorted by id. */
  templatesByCategory: Record<string, TemplateDef[]>;
}

export interface PackSource {
  file: string;
  text: string;
}

function issueText(issue: z.core.$ZodIssue): string {
  const keys = (issue as { keys?: string[] }).keys;
  return issue.code === 'unrecognized_keys' && keys
    ? `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')}`
    : issue.message;
}

const byId = <T extends { id: string }>(a: T, b: T): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Runs a check that throws TemplateError and re-throws it as a PackError at file and field. */
function at(file: string, field: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    if (e instanceof TemplateError) throw new PackError(`${file}: ${field}: ${e.message}`);
    throw e;
  }
}

/** Parses and merges the files of one pack. */
export function parsePack(sources: readonly PackSource[]): Pack {
  const sorted = [...sources].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  let meta: { file: string; value: PackMeta } | null = null;
  const roles: RoleDef[] = [];
  const styles: StyleDef[] = [];
  const templates: (TemplateDef & { category: string; file: string })[] = [];
  const seen = new Map<string, string>();
  const unique = (kind: string, idv: string, file: string, field: string): void => {
    const prev = seen.get(`${kind}:${idv}`);
    if (prev) throw new PackError(`${file}: ${field}: ${kind} id ${JSON.stringify(idv)} is already defined in ${prev}`);
    seen.set(`${kind}:${idv}`, `${file}`);
  };

  for (const { file, text } of sorted) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new PackError(`${file}: (file): invalid JSON: ${(e as Error).message}`);
    }
    const parsed = PackFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new PackError(`${file}: ${issueField(issue.path, '(file)')}: ${issueText(issue)}`);
    }
    const value = parsed.data;
    switch (value.kind) {
      case 'pack':
        if (meta) throw new PackError(`${file}: kind: a second "pack" file (the first is ${meta.file})`);
        meta = { file, value };
        for (const tool of ['wiki', 'calc'] as const) {
          value.tool_hints[tool].forEach((l, i) =>
            at(file, `tool_hints.${tool}[${i}]`, () => fillSlots(l, {}, [], 'tool hint')),
          );
        }
        for (const g of GAP_KINDS) {
          const gap = value.gaps[g];
          gap.fillers.forEach((l, i) => at(file, `gaps.${g}.fillers[${i}]`, () => fillSlots(l, {}, [], 'filler')));
          gap.asks.forEach((l, i) =>
            at(file, `gaps.${g}.asks[${i}]`, () => fillSlots(l, { phrase: '' }, ['phrase'], 'ask')),
          );
          gap.replies.forEach((l, i) =>
            at(file, `gaps.${g}.replies[${i}]`, () => {
              fillSlots(l, { detail: '' }, ['detail'], 'reply');
              if (!usedSlots(l, 'reply').includes('detail'))
                throw new TemplateError('reply: must use {detail}, the detail it reveals');
            }),
          );
        }
        break;
      case 'roles':
        value.roles.forEach((r, i) => {
          unique('role', r.id, file, `roles[${i}].id`);
          r.personas.forEach((l, j) => at(file, `roles[${i}].personas[${j}]`, () => fillSlots(l, {}, [], 'persona')));
          roles.push(r);
        });
        break;
      case 'styles':
        value.styles.forEach((s, i) => {
          unique('style', s.id, file, `styles[${i}].id`);
          s.directives.forEach((l, j) =>
            at(file, `styles[${i}].directives[${j}]`, () => fillSlots(l, {}, [], 'directive')),
          );
          styles.push(s);
        });
        break;
      case 'templates':
        value.templates.forEach((t, i) => {
          unique('template', t.id, file, `templates[${i}].id`);
          at(file, `templates[${i}]`, () => checkTemplateSlots(t));
          for (const slot of REQUIRED_SLOTS) {
            if (!t.slots.includes(slot))
              throw new PackError(`${file}: templates[${i}].slots: template ${t.id} must use {${slot}}`);
          }
          templates.push({ ...t, category: value.category, file });
        });
        break;
    }
  }
  const files = sorted.map((s) => s.file);
  if (!meta)
    throw new PackError(`${files.join(', ') || '(no files)'}: kind: no file of kind "pack" (name, categories, gaps…)`);
  const m = meta.value;
  if (roles.length === 0) throw new PackError(`${meta.file}: roles: the pack has no file of kind "roles"`);
  if (styles.length === 0) throw new PackError(`${meta.file}: styles: the pack has no file of kind "styles"`);
  const named = [...new Set([m.categories.gsm8k, m.categories.hotpotqa, m.categories.strategyqa, m.clarify_category])];
  const templatesByCategory: Record<string, TemplateDef[]> = {};
  for (const c of named) templatesByCategory[c] = [];
  for (const { category, file, ...t } of templates) {
    const list = templatesByCategory[category];
    if (!list)
      throw new PackError(
        `${file}: category: ${JSON.stringify(category)} is not a category the pack file names (${named.join(', ')})`,
      );
    list.push(t);
  }
  for (const c of named) {
    if (templatesByCategory[c]!.length === 0)
      throw new PackError(`${meta.file}: categories: category ${JSON.stringify(c)} has no templates`);
    templatesByCategory[c]!.sort(byId);
  }
  return {
    name: m.name,
    version: m.version,
    description: m.description,
    files,
    categories: { ...m.categories },
    clarifyCategory: m.clarify_category,
    toolHints: { wiki: [...m.tool_hints.wiki], calc: [...m.tool_hints.calc] },
    gaps: m.gaps,
    roles: roles.sort(byId),
    styles: styles.sort(byId),
    templates: templates.map(({ category: _c, file: _f, ...t }) => t).sort(byId),
    templatesByCategory,
  };
}

/** Reads a pack's JSON files (other files are passed over); `root` makes the names in errors relative. */
export async function loadPack(paths: readonly string[], root?: string): Promise<Pack> {
  const sources: PackSource[] = [];
  for (const p of paths) {
    if (!p.endsWith('.json')) continue;
    sources.push({ file: displayPath(p, root), text: await readFile(p, 'utf8') });
  }
  return parsePack(sources);
}
