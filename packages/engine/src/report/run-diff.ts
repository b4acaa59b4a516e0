// What changed between two recorded runs (DVC's `params diff`, `metrics diff` and `exp show` in
// one): params whose value changed, targets whose outputs changed, every gate check and every
// metric side by side with the numeric delta. diffRuns() returns data (the HTML report renders
// it too); formatRunDiff() is the one table `rc1-build diff` prints.
import type { Check } from '../api/index.ts';
import type { RunRecord } from '../state/run-history.ts';
import { canonicalJson } from '../util/canonical-json.ts';

export interface RunRef {
  id: number;
  at: string;
  commit: string | null;
  dirty: boolean | null;
  profile: string;
  exitCode: number;
}

export interface ParamChange {
  key: string;
  a: unknown;
  b: unknown;
}
export interface OutputChange {
  target: string;
  path: string;
  a: string | null;
  b: string | null;
}
export interface CheckSide {
  value: unknown;
  status: Check['status'];
  op: Check['op'];
  threshold: unknown;
}
export interface CheckRow {
  gate: string;
  check: string;
  a: CheckSide | null;
  b: CheckSide | null;
  delta: number | null;
  changed: boolean;
}
export interface MetricRow {
  file: string;
  key: string;
  a: number | null;
  b: number | null;
  delta: number | null;
  changed: boolean;
}

export interface RunDiff {
  a: RunRef;
  b: RunRef;
  params: ParamChange[];
  outputs: OutputChange[];
  checks: CheckRow[];
  metrics: MetricRow[];
}

const ref = (r: RunRecord): RunRef => ({
  id: r.id,
  at: r.at,
  commit: r.git.commit,
  dirty: r.git.dirty,
  profile: r.profile,
  exitCode: r.exitCode,
});
const union = (...xs: Iterable<string>[]): string[] => [...new Set(xs.flatMap((x) => [...x]))].sort();
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const sub = (a: number | null, b: number | null): number | null =>
  a === null || b === null ? null : Number((b - a).toPrecision(12));

export function diffRuns(a: RunRecord, b: RunRecord): RunDiff {
  // A declared key may hold a whole section (ppo_eval): name the leaves that changed (ppo_eval.seed).
  const params: ParamChange[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const diffParam = (key: string, x: unknown, y: unknown): void => {
    if (isObj(x) && isObj(y)) {
      for (const k of union(Object.keys(x), Object.keys(y))) diffParam(`${key}.${k}`, x[k], y[k]);
    } else if (canonicalJson(x ?? null) !== canonicalJson(y ?? null) || (x === undefined) !== (y === undefined))
      params.push({ key, a: x, b: y });
  };
  for (const k of union(Object.keys(a.params), Object.keys(b.params))) diffParam(k, a.params[k], b.params[k]);
  const outputs: OutputChange[] = [];
  for (const t of union(Object.keys(a.state), Object.keys(b.state))) {
    const oa = a.state[t]?.outputs ?? {};
    const ob = b.state[t]?.outputs ?? {};
    for (const p of union(Object.keys(oa), Object.keys(ob))) {
      if (oa[p] !== ob[p]) outputs.push({ target: t, path: p, a: oa[p] ?? null, b: ob[p] ?? null });
    }
  }
  const checks: CheckRow[] = [];
  for (const g of union(Object.keys(a.checks), Object.keys(b.checks))) {
    const ca = new Map((a.checks[g] ?? []).map((c) => [c.name, c]));
    const cb = new Map((b.checks[g] ?? []).map((c) => [c.name, c]));
    for (const n of union(ca.keys(), cb.keys())) {
      const side = (c: Check | undefined): CheckSide | null =>
        c ? { value: c.value, status: c.status, op: c.op, threshold: c.threshold } : null;
      const x = side(ca.get(n));
      const y = side(cb.get(n));
      checks.push({
        gate: g,
        check: n,
        a: x,
        b: y,
        delta: sub(num(x?.value), num(y?.value)),
        changed: canonicalJson(x) !== canonicalJson(y),
      });
    }
  }
  const metrics: MetricRow[] = [];
  for (const f of union(Object.keys(a.metrics), Object.keys(b.metrics))) {
    const ma = a.metrics[f] ?? {};
    const mb = b.metrics[f] ?? {};
    for (const k of union(Object.keys(ma), Object.keys(mb))) {
      const x = ma[k] ?? null;
      const y = mb[k] ?? null;
      metrics.push({ file: f, key: k, a: x, b: y, delta: sub(x, y), changed: x !== y });
    }
  }
  return { a: ref(a), b: ref(b), params, outputs, checks, metrics };
}

function show(v: unknown): string {
  if (v === undefined) return '(unset)';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  const s = JSON.stringify(v) ?? 'null';
  return s.length > 40 ? s.slice(0, 37) + '...' : s;
}

const signed = (d: number | null): string => (d === null ? '' : d > 0 ? `+${show(d)}` : d === 0 ? '0' : show(d));
const checkCell = (c: CheckSide | null): string =>
  c
    ? `${show(c.value)} ${c.op} ${show(c.threshold)} ${c.status === 'pass' ? 'pass' : c.status === 'fail' ? 'FAIL' : c.status === 'waived' ? 'WAIVED' : 'n/a'}`
    : '—';
const shaCell = (h: string | null): string => (h ? h.slice(0, 12) : '(none)');

export function runLabel(r: RunRef): string {
  return `run ${r.id}`;
}

/** The rows of the one table: kind, name, run A, run B, delta. `all`: unchanged checks and metrics too. */
export function runDiffRows(d: RunDiff, all: boolean): string[][] {
  const rows: string[][] = [];
  for (const p of d.params) rows.push(['param', p.key, show(p.a), show(p.b), signed(sub(num(p.a), num(p.b)))]);
  for (const o of d.outputs) rows.push(['output', `${o.target}: ${o.path}`, shaCell(o.a), shaCell(o.b), '']);
  for (const c of d.checks)
    if (all || c.changed)
      rows.push(['check', `${c.gate}: ${c.check}`, checkCell(c.a), checkCell(c.b), signed(c.delta)]);
  for (const m of d.metrics)
    if (all || m.changed)
      rows.push([
        'metric',
        `${m.file}: ${m.key}`,
        m.a === null ? '—' : show(m.a),
        m.b === null ? '—' : show(m.b),
        signed(m.delta),
      ]);
  return rows;
}
