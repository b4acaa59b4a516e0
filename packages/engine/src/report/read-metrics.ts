// Reads a declared metrics file (DVC's `metrics:`): a JSON object gives its numeric leaves under
// dotted keys; a JSON Lines file gives the numeric fields of its last line. Arrays and strings
// are no metrics. At most MAX_KEYS keys per file, so a large report declared by mistake cannot
// bloat every run record.
import * as fs from 'node:fs';

const MAX_KEYS = 500;

function flatten(v: unknown, prefix: string, out: Record<string, number>): void {
  if (Object.keys(out).length >= MAX_KEYS) return;
  if (typeof v === 'number' && Number.isFinite(v)) out[prefix] = v;
  else if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  }
}

/** The metrics of one file, or an error message (unreadable, not JSON). */
export function readMetrics(abs: string): Record<string, number> | { error: string } {
  let text: string;
  try {
    text = fs.readFileSync(abs, 'utf8');
  } catch (e) {
    return { error: (e as Error).message };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    const lines = text.split('\n').filter((l) => l.trim());
    try {
      doc = JSON.parse(lines[lines.length - 1] ?? '');
    } catch {
      return { error: 'neither JSON nor JSON Lines' };
    }
  }
  const out: Record<string, number> = {};
  flatten(doc, '', out);
  return out;
}
