// Small HTML helpers for the report page: value formatting, status badges and tables (a cell is a
// value, escaped, or { html } already built).
import { escapeHtml as esc } from './escape-html.ts';

/** A value as the tables show it: numbers to 4 significant digits, everything else as JSON. */
export function fmt(v: unknown): string {
  if (typeof v === 'number')
    return Number.isInteger(v) ? String(v) : Number.isFinite(v) ? String(Number(v.toPrecision(4))) : String(v);
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Markup a table cell takes as it is. */
export const html = (s: string): { html: string } => ({ html: s });

export function status(s: string): string {
  return `<span class="st st-${esc(s)}">${esc(s)}</span>`;
}

export function table(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  rowClass?: (i: number) => string,
): string {
  const head = `<tr>${columns.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>`;
  const cell = (v: unknown): string =>
    `<td${typeof v === 'number' ? ' class="num"' : ''}>${typeof v === 'object' && v !== null && 'html' in v ? (v as { html: string }).html : esc(fmt(v))}</td>`;
  const body = rows
    .map((r, i) => `<tr${rowClass?.(i) ? ` class="${rowClass(i)}"` : ''}>${r.map(cell).join('')}</tr>`)
    .join('');
  return `<table>${head}${body}</table>`;
}
