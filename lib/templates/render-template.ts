// Slot filling. A template's turns use {slot} placeholders; it declares the slots it uses.
// Rendering with a slot that has no value, a slot the template does not declare, or a name that
// is no slot at all is a TemplateError naming the template and the slot. Gap lines (asks,
// replies) are filled the same way with their own slot names. After filling, runs of spaces are
// collapsed and every line trimmed, so an empty optional value leaves no double space.
import { ExpectedError } from 'rc1-build';
import { TEMPLATE_SLOTS, type TemplateDef, type TemplateSlot } from './pack-schema.ts';

/** An expected error (rc1-build's marker): the build prints its message alone, no stack. */
export class TemplateError extends ExpectedError {
  override name = 'TemplateError';
}

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The slot names a text uses, in order of first use; a stray brace is an error. */
export function usedSlots(text: string, owner: string): string[] {
  const stripped = text.replace(PLACEHOLDER, '');
  if (/[{}]/.test(stripped)) throw new TemplateError(`${owner}: unbalanced brace in ${JSON.stringify(text)}`);
  const out: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

function tidy(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Fills {name} placeholders of `text` from `values`; `allowed` lists the names the text may use. */
export function fillSlots(
  text: string,
  values: Readonly<Record<string, string | undefined>>,
  allowed: readonly string[],
  owner: string,
): string {
  for (const name of usedSlots(text, owner)) {
    if (!allowed.includes(name))
      throw new TemplateError(
        `${owner}: unknown slot {${name}} (allowed: ${allowed.map((a) => `{${a}}`).join(', ') || 'none'})`,
      );
    if (typeof values[name] !== 'string') throw new TemplateError(`${owner}: slot {${name}} has no value`);
  }
  return tidy(text.replace(PLACEHOLDER, (_, name: string) => values[name]!));
}

/** Checks a template's declared slots against the slots its turns use (load time and render time). */
export function checkTemplateSlots(t: TemplateDef, owner = `template ${t.id}`): void {
  const dup = t.slots.find((s, i) => t.slots.indexOf(s) !== i);
  if (dup) throw new TemplateError(`${owner}: declares slot {${dup}} twice`);
  const used = new Set(t.turns.flatMap((turn) => usedSlots(turn, owner)));
  for (const name of used) {
    if (!(TEMPLATE_SLOTS as readonly string[]).includes(name)) {
      throw new TemplateError(
        `${owner}: unknown slot {${name}} (slots: ${TEMPLATE_SLOTS.map((s) => `{${s}}`).join(', ')})`,
      );
    }
    if (!t.slots.includes(name as TemplateSlot))
      throw new TemplateError(`${owner}: uses slot {${name}}, which it does not declare in "slots"`);
  }
  for (const name of t.slots) {
    if (!used.has(name)) throw new TemplateError(`${owner}: declares slot {${name}}, which none of its turns uses`);
  }
}

/** Renders a template's user turns. Every declared slot needs a value. */
export function renderTemplate(t: TemplateDef, values: Readonly<Partial<Record<TemplateSlot, string>>>): string[] {
  const owner = `template ${t.id}`;
  checkTemplateSlots(t, owner);
  for (const name of t.slots) {
    if (typeof values[name] !== 'string') throw new TemplateError(`${owner}: slot {${name}} has no value`);
  }
  return t.turns.map((turn) => fillSlots(turn, values, t.slots, owner));
}
