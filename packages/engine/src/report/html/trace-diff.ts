// The run-to-run diff the report shows while there is no run history: each target's current
// record in .rc1/trace.log against its previous record there (the latest earlier line with another
// key). The trace is append-only until it is compacted, so a target rebuilt since the last
// compaction has its previous record; one that was not rebuilt since has none and is left out.
// Param changes are grouped by key (one line for a key that many targets read), code changes by
// file; gate checks are set side by side with the numeric delta.
import * as fs from 'node:fs';
import type { Check } from '../../api/index.ts';
import { diffFingerprints, formatReason, type RebuildReason } from '../../hash/fingerprint.ts';
import { TRACE_FORMAT, type TargetRecord } from '../../state/trace-log.ts';

export interface CheckPair {
  name: string;
  old?: Pick<Check, 'value' | 'status'>;
  new?: Pick<Check, 'value' | 'status'>;
  delta: number | null;
}

export interface TargetChange {
  name: string;
  previousAt: string;
  currentAt: string;
  previousResult: string;
  currentResult: string;
  /** Output paths whose content hash changed (empty: the rebuild gave the same bytes, early cutoff). */
  outputsChanged: string[];
  /** Every fingerprint difference, formatted (as --explain prints them). */
  reasons: string[];
  checks: CheckPair[];
}

export interface TraceDiff {
  /** Targets recorded in the trace, and how many of them have a previous record to compare with. */
  recorded: number;
  changes: TargetChange[];
  params: { key: string; old: unknown; new: unknown; targets: string[] }[];
  code: { file: string; targets: string[] }[];
}

/** Every record of every target in the order the log holds them (superseded lines included). */
export function readTraceHistory(file: string): Map<string, TargetRecord[]> {
  const out = new Map<string, TargetRecord[]>();
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  const lines = text.split('\n');
  lines.pop(); // the text after the last newline is empty or a torn line
  let first = true;
  for (const line of lines) {
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      break;
    }
    if (first) {
      first = false;
      if ((obj as { format?: number }).format !== TRACE_FORMAT) return out;
      continue;
    }
    const rec = obj as TargetRecord | { name: string; deleted: true };
    if ('deleted' in rec) {
      out.delete(rec.name);
      continue;
    }
    (out.get(rec.name) ?? out.set(rec.name, []).get(rec.name)!).push(rec);
  }
  return out;
}

function checkPairs(a: readonly Check[] = [], b: readonly Check[] = []): CheckPair[] {
  const names = [...new Set([...b.map((c) => c.name), ...a.map((c) => c.name)])];
  return names.map((name) => {
    const o = a.find((c) => c.name === name);
    const n = b.find((c) => c.name === name);
    const delta = typeof o?.value === 'number' && typeof n?.value === 'number' ? n.value - o.value : null;
    return {
      name,
      ...(o ? { old: { value: o.value, status: o.status } } : {}),
      ...(n ? { new: { value: n.value, status: n.status } } : {}),
      delta,
    };
  });
}

/** The diff for the targets in `order` that are still declared (declaration order). */
export function traceDiff(history: ReadonlyMap<string, TargetRecord[]>, order: readonly string[]): TraceDiff {
  const changes: TargetChange[] = [];
  const params = new Map<string, { key: string; old: unknown; new: unknown; targets: string[] }>();
  const code = new Map<string, string[]>();
  let recorded = 0;
  for (const name of order) {
    const recs = history.get(name);
    if (!recs?.length) continue;
    recorded++;
    const cur = recs[recs.length - 1]!;
    const prev = [...recs].reverse().find((r) => r.key !== cur.key);
    if (!prev) continue;
    let reasons: RebuildReason[] = [];
    try {
      reasons = diffFingerprints(prev.fingerprint, cur.fingerprint);
    } catch {
      reasons = [];
    }
    for (const r of reasons) {
      if (r.kind === 'param-changed' || r.kind === 'arg-changed') {
        const id = `${r.kind === 'arg-changed' ? 'arg ' : ''}${r.key}\u0000${JSON.stringify(r.old)}\u0000${JSON.stringify(r.new)}`;
        const p =
          params.get(id) ??
          params
            .set(id, { key: r.kind === 'arg-changed' ? `${r.key} (arg)` : r.key, old: r.old, new: r.new, targets: [] })
            .get(id)!;
        p.targets.push(name);
      } else if (r.kind === 'code-changed' || r.kind === 'code-added' || r.kind === 'code-removed') {
        (code.get(r.file) ?? code.set(r.file, []).get(r.file)!).push(name);
      }
    }
    const oldOut = new Map(prev.outputs.map((o) => [o.path, o.sha256]));
    changes.push({
      name,
      previousAt: prev.at,
      currentAt: cur.at,
      previousResult: prev.result,
      currentResult: cur.result,
      outputsChanged: cur.outputs.filter((o) => oldOut.get(o.path) !== o.sha256).map((o) => o.path),
      reasons: reasons.map(formatReason),
      checks: checkPairs(prev.checks, cur.checks),
    });
  }
  return {
    recorded,
    changes,
    params: [...params.values()].sort((a, b) => a.key.localeCompare(b.key)),
    code: [...code].sort(([a], [b]) => a.localeCompare(b)).map(([file, targets]) => ({ file, targets })),
  };
}
