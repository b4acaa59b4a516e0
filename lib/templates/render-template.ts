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

/** The slot names of texts already parsed (template turns and gap lines: a pack's few hundred texts). */
const SLOTS = new Map<string, readonly string[]>();
const SLOTS_MAX = 4096;

/** The slot names a text uses, in order of first use; a stray brace is an error. */
export function usedSlots(text: string, owner: string): string[] {
  const known = SLOTS.get(text);
  if (known) return [...known];
  const stripped = text.replace(PLACEHOLDER, '');
  if (/[{}]/.test(stripped)) throw new TemplateError(`${owner}: unbalanced brace in ${JSON.stringify(text)}`);
  const out: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) if (!out.includes(m[1]!)) out.push(m[1]!);
  if (SLOTS.size >= SLOTS_MAX) SLOTS.clear();
  SLOTS.set(text, [...out]);
  return out;
}

/**
 * Whether tidy() would change a text: a tab or any whitespace other than ' ' and '\n', two spaces
 * in a row, a space next to a line break, three line breaks in a row, or a space or line break
 * at either end. Otherwise every line is already collapsed and trimmed.
 */
function untidy(text: string): boolean {
  const n = text.length;
  if (n === 0) return false;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10) {
      if (i === 0 || prev === 32 || (c === 32 && prev === 10)) return true;
      if (c === 10 && prev === 10 && text.charCodeAt(i - 2) === 10) return true;
    } else if (
      c <= 32 ||
      c === 0x85 ||
      c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff
    ) {
      return true;
    }
    prev = c;
  }
  return prev === 32 || prev === 10;
}

function tidy(text: string): string {
  if (!untidy(text)) return text;
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

/** Templates whose slots checkTemplateSlots passed, as they were then (a changed template is checked again). */
const CHECKED = new WeakMap<TemplateDef, { id: string; turns: readonly string[]; slots: readonly string[] }>();
const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);
function checked(t: TemplateDef): boolean {
  const c = CHECKED.get(t);
  return c !== undefined && c.id === t.id && sameList(c.turns, t.turns) && sameList(c.slots, t.slots);
}

/** Renders a template's user turns. Every declared slot needs a value. */
export function renderTemplate(t: TemplateDef, values: Readonly<Partial<Record<TemplateSlot, string>>>): string[] {
  const owner = `template ${t.id}`;
  if (!checked(t)) {
    checkTemplateSlots(t, owner);
    CHECKED.set(t, { id: t.id, turns: [...t.turns], slots: [...t.slots] });
  }
  for (const name of t.slots) {
    if (typeof values[name] !== 'string') throw new TemplateError(`${owner}: slot {${name}} has no value`);
  }
  return t.turns.map((turn) => fillSlots(turn, values, t.slots, owner));
}
