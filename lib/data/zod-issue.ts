// Turns a zod issue into the parts of a data-layer diagnostic — the field path (`a.b[2].c`), what
// was expected in plain words, and the value found — so every schema-checked file (rollouts, an
// external trainer's metrics, template packs) reports bad input the same way:
// `file:line: field: expected …, got …`.
import type { z } from 'zod';

/** `a.b[2].c` from a zod issue path; `empty` when the issue is about the whole record. */
export function issueField(path: readonly PropertyKey[], empty = '(record)'): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || empty;
}

/** The value at a zod issue path inside the parsed record (undefined when the path breaks off). */
export function valueAt(record: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = record;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

/** The path to report: an unknown key names the key itself. */
export function issuePath(issue: z.core.$ZodIssue): PropertyKey[] {
  return issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : [...issue.path];
}

/** What the issue expected, in the words of the data layer's diagnostics. */
export function issueExpected(issue: z.core.$ZodIssue, opts: { union?: string } = {}): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'array'
        ? 'a list'
        : issue.expected === 'object'
          ? 'an object'
          : issue.expected === 'int'
            ? 'a whole number'
            : `a ${issue.expected}`;
    case 'invalid_value':
      return `one of ${issue.values.map((v) => JSON.stringify(v)).join(' | ')}`;
    case 'unrecognized_keys':
      return 'no such field (an unknown key: check its spelling)';
    case 'invalid_union':
      return opts.union ?? issue.message;
    case 'too_small':
      return issue.origin === 'array'
        ? `at least ${String(issue.minimum)} entries`
        : issue.origin === 'string'
          ? 'a non-empty string'
          : `a value >= ${String(issue.minimum)}${issue.origin === 'number' && !issue.inclusive ? ' (exclusive)' : ''}`;
    case 'too_big':
      return `a value <= ${String(issue.maximum)}`;
    default:
      return issue.message;
  }
}
