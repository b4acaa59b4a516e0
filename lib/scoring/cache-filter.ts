// Which score-cache rows `scorecache invalidate --spec SPEC` selects: the spec grammar, its
// parser, and its translation to an SQL condition. Versions compare in natural order
// ("v2" < "v10" < "v10.1"), so `rubric<3` reads as a person means it.
//
//   SPEC    := CLAUSE ("," CLAUSE)*      every clause must hold
//   CLAUSE  := "all" | "expired" | "older-than=" AGE | FIELD OP VALUE
//   FIELD   := provider | model | item | rubric | prompt
//   OP      := "=" | "!="                          for provider, model, item (item= matches a hash prefix)
//            | "=" | "!=" | "<" | "<=" | ">" | ">="  for rubric and prompt (version order)
//   AGE     := NUMBER ("s" | "m" | "h" | "d" | "w")  rows written longer ago than this
//   "expired" selects rows past the cache TTL; "all" selects everything (it must be said).
// Examples: provider=openai,model=gpt-4o-mini,rubric<3,older-than=7d   ·   expired   ·   prompt!=p2

export type CacheField = 'provider' | 'model' | 'item' | 'rubric' | 'prompt';
export type FilterOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type FilterClause =
  | { kind: 'all' }
  | { kind: 'expired' }
  | { kind: 'older-than'; ms: number }
  | { kind: 'field'; field: CacheField; op: FilterOp; value: string };

/** Rows selected by every clause. Never empty: "all" must be asked for. */
export interface InvalidateFilter {
  clauses: FilterClause[];
}

export type ParsedSpec = { ok: true; filter: InvalidateFilter } | { ok: false; error: string; hint?: string };

const FIELDS: readonly CacheField[] = ['provider', 'model', 'item', 'rubric', 'prompt'];
const VERSIONED = new Set<CacheField>(['rubric', 'prompt']);
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const COLUMN: Record<CacheField, string> = {
  provider: 'provider',
  model: 'model',
  item: 'item_hash',
  rubric: 'rubric_version',
  prompt: 'prompt_version',
};

/** Natural order on version strings: a leading "v" is ignored, digit runs compare as numbers. */
export function compareVersions(a: string, b: string): number {
  const parts = (s: string): string[] =>
    s
      .trim()
      .replace(/^v(?=\d)/i, '')
      .match(/\d+|\D+/g) ?? [];
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    const nx = /^\d/.test(x);
    const ny = /^\d/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return Math.sign(d);
    } else if (x !== y) return x < y ? -1 : 1;
  }
  return Math.sign(pa.length - pb.length);
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = d[j]!;
      d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return d[b.length]!;
}

function didYouMean(word: string): string | undefined {
  const names = [...FIELDS, 'older-than', 'expired', 'all'];
  const best = names.map((n) => ({ n, d: editDistance(word, n) })).sort((x, y) => x.d - y.d)[0];
  return best && best.d <= 2 ? `did you mean "${best.n}"?` : undefined;
}

export function parseInvalidateSpec(spec: string): ParsedSpec {
  const parts = spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0)
    return {
      ok: false,
      error: 'empty --spec',
      hint: 'say what to remove, e.g. --spec provider=openai,rubric<3 (or --spec all)',
    };
  const clauses: FilterClause[] = [];
  for (const part of parts) {
    if (part === 'all' || part === 'expired') {
      clauses.push({ kind: part });
      continue;
    }
    const m = /^([a-z-]+)\s*(!=|<=|>=|=|<|>)\s*(.*)$/.exec(part);
    if (!m)
      return {
        ok: false,
        error: `cannot read clause "${part}"`,
        hint: 'a clause is FIELD OP VALUE, older-than=AGE, expired or all',
      };
    const [, name, op, value] = m as unknown as [string, string, FilterOp, string];
    if (name === 'older-than') {
      const age = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(value);
      if (op !== '=' || !age)
        return {
          ok: false,
          error: `bad age in "${part}"`,
          hint: 'write older-than=N followed by s, m, h, d or w, e.g. older-than=7d',
        };
      clauses.push({ kind: 'older-than', ms: Number(age[1]) * UNIT_MS[age[2]!]! });
      continue;
    }
    if (!(FIELDS as readonly string[]).includes(name)) {
      const hint = didYouMean(name);
      return {
        ok: false,
        error: `unknown field "${name}" in "${part}"`,
        hint: hint ?? `fields: ${FIELDS.join(', ')}; also older-than=AGE, expired, all`,
      };
    }
    const field = name as CacheField;
    if (!VERSIONED.has(field) && op !== '=' && op !== '!=') {
      return {
        ok: false,
        error: `"${op}" does not apply to ${field}`,
        hint: 'order comparisons apply to rubric and prompt versions only',
      };
    }
    if (value === '') return { ok: false, error: `no value in "${part}"` };
    clauses.push({ kind: 'field', field, op, value });
  }
  return { ok: true, filter: { clauses } };
}

/** The SQL condition for a filter (rows of scores/failures/unstable), with its bound arguments. */
export function filterSql(
  f: InvalidateFilter,
  now: number,
  ttlMs: number,
): { where: string; args: (string | number)[] } {
  if (f.clauses.length === 0) throw new Error('internal error: an invalidate filter with no clause; please report');
  const conds: string[] = [];
  const args: (string | number)[] = [];
  for (const c of f.clauses) {
    switch (c.kind) {
      case 'all':
        conds.push('1');
        break;
      case 'expired':
        conds.push('created_at < ?');
        args.push(now - ttlMs);
        break;
      case 'older-than':
        conds.push('created_at < ?');
        args.push(now - c.ms);
        break;
      case 'field': {
        const col = COLUMN[c.field];
        if (c.field === 'item' && (c.op === '=' || c.op === '!=')) {
          conds.push(`(substr(${col}, 1, length(?)) = ?) = ${c.op === '=' ? 1 : 0}`);
          args.push(c.value, c.value);
        } else if (VERSIONED.has(c.field)) {
          conds.push(`vcmp(${col}, ?) ${c.op === '=' ? '=' : c.op} 0`);
          args.push(c.value);
        } else {
          conds.push(`${col} ${c.op === '=' ? '=' : '!='} ?`);
          args.push(c.value);
        }
        break;
      }
      default:
        return unreachable(c);
    }
  }
  return { where: conds.join(' AND '), args };
}

function unreachable(x: never): never {
  throw new Error(`internal error: unhandled filter clause ${JSON.stringify(x)}; please report`);
}
