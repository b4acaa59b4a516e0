// The run diff on the report page: the last two runs of the run history as `rc1-build diff`
// computes them (params, outputs, gate checks and metrics side by side with deltas; unchanged
// checks and metrics folded away in a <details>), or, before two runs are recorded, each target's
// current trace record against its previous one.
import type { CheckSide, RunDiff, RunRef } from '../run-diff.ts';
import { escapeHtml as esc } from './escape-html.ts';
import { fmt, html, table } from './html-table.ts';
import type { TraceDiff } from './trace-diff.ts';

const signed = (d: number | null): string => (d === null ? '' : d > 0 ? `+${fmt(d)}` : fmt(d));
const side = (c: CheckSide | null): string => (c ? `${fmt(c.value)} ${c.op} ${fmt(c.threshold)} · ${c.status}` : '—');
const runLabel = (r: RunRef): string =>
  `run ${r.id} (${r.at}, ${r.commit ? r.commit.slice(0, 9) + (r.dirty ? '+dirty' : '') : 'no git'}, ${r.profile}, exit ${r.exitCode})`;

function runDiffHtml(d: RunDiff, recorded: number): string {
  const a = `run ${d.a.id}`;
  const b = `run ${d.b.id}`;
  const parts = [
    `<p class="note">The last two of ${recorded} recorded runs (.rc1/runs.jsonl), as <code>rc1-build diff</code> compares them: ${esc(runLabel(d.a))} → ${esc(runLabel(d.b))}.</p>`,
  ];
  parts.push(
    '<h3>Params</h3>',
    d.params.length
      ? table(
          ['key', a, b, 'delta'],
          d.params.map((p) => [
            p.key,
            p.a === undefined ? '(unset)' : p.a,
            p.b === undefined ? '(unset)' : p.b,
            signed(typeof p.a === 'number' && typeof p.b === 'number' ? p.b - p.a : null),
          ]),
        )
      : '<p class="note">No declared param changed.</p>',
  );
  parts.push(
    '<h3>Outputs</h3>',
    d.outputs.length
      ? table(
          ['target', 'output', a, b],
          d.outputs.map((o) => [
            o.target,
            o.path,
            o.a ? o.a.slice(0, 12) : '(none)',
            o.b ? o.b.slice(0, 12) : '(none)',
          ]),
        )
      : '<p class="note">No output changed.</p>',
  );
  const checks = (rows: RunDiff['checks']) =>
    table(
      ['gate', 'check', a, b, 'delta'],
      rows.map((c) => [c.gate, c.check, side(c.a), side(c.b), signed(c.delta)]),
    );
  const changedChecks = d.checks.filter((c) => c.changed);
  parts.push(
    '<h3>Gate checks</h3>',
    changedChecks.length ? checks(changedChecks) : '<p class="note">No gate check changed.</p>',
  );
  if (d.checks.length > changedChecks.length)
    parts.push(`<details><summary>all ${d.checks.length} checks of both runs</summary>${checks(d.checks)}</details>`);
  const metrics = (rows: RunDiff['metrics']) =>
    table(
      ['file', 'metric', a, b, 'delta'],
      rows.map((m) => [m.file, m.key, m.a, m.b, signed(m.delta)]),
    );
  const changedMetrics = d.metrics.filter((m) => m.changed);
  parts.push(
    '<h3>Metrics</h3>',
    d.metrics.length === 0
      ? '<p class="note">Neither run recorded a declared metric.</p>'
      : changedMetrics.length
        ? metrics(changedMetrics)
        : '<p class="note">No metric changed.</p>',
  );
  if (d.metrics.length > changedMetrics.length && d.metrics.length)
    parts.push(
      `<details><summary>all ${d.metrics.length} metrics of both runs</summary>${metrics(d.metrics)}</details>`,
    );
  return parts.join('');
}

function traceDiffHtml(diff: TraceDiff, source: string): string {
  const parts = [`<p class="note">${esc(source)}</p>`];
  if (diff.changes.length === 0) {
    parts.push(
      `<p class="note">No target has a previous record to compare with (${diff.recorded} targets recorded): nothing was rebuilt since the trace began or was last compacted.</p>`,
    );
    return parts.join('');
  }
  parts.push(
    `<p>${diff.changes.length} of ${diff.recorded} recorded targets were rebuilt since their previous record.</p>`,
  );
  parts.push(
    '<h3>Params</h3>',
    diff.params.length
      ? table(
          ['key', 'previous', 'current', 'targets'],
          diff.params.map((p) => [p.key, p.old, p.new, p.targets.join(', ')]),
        )
      : '<p class="note">No declared param changed.</p>',
  );
  if (diff.code.length)
    parts.push(
      '<h3>Code</h3>',
      table(
        ['file', 'targets'],
        diff.code.map((c) => [c.file, c.targets.join(', ')]),
      ),
    );
  parts.push(
    '<h3>Targets</h3>',
    table(
      ['target', 'previous', 'current', 'result', 'outputs changed', 'why it ran'],
      diff.changes.map((c) => [
        c.name,
        c.previousAt,
        c.currentAt,
        c.previousResult === c.currentResult ? c.currentResult : `${c.previousResult} → ${c.currentResult}`,
        c.outputsChanged.length ? c.outputsChanged.join(', ') : 'none (same bytes: early cutoff)',
        html(
          c.reasons
            .slice(0, 6)
            .map((r) => `<div class="hint">${esc(r)}</div>`)
            .join('') + (c.reasons.length > 6 ? `<div class="hint">… and ${c.reasons.length - 6} more</div>` : ''),
        ),
      ]),
    ),
  );
  const gateRows = diff.changes.filter((c) => c.checks.length);
  if (gateRows.length) {
    parts.push('<h3>Gate checks</h3>');
    for (const c of gateRows) {
      const changed = (i: number): string => {
        const p = c.checks[i]!;
        return fmt(p.old?.value) !== fmt(p.new?.value) || p.old?.status !== p.new?.status ? 'changed' : '';
      };
      parts.push(
        `<p><b>${esc(c.name)}</b></p>`,
        table(
          ['check', 'previous', 'current', 'delta', 'status'],
          c.checks.map((p) => [
            p.name,
            p.old ? p.old.value : '—',
            p.new ? p.new.value : '—',
            p.delta === null ? '—' : (p.delta > 0 ? '+' : '') + fmt(p.delta),
            p.old?.status === p.new?.status
              ? (p.new?.status ?? '—')
              : `${p.old?.status ?? '—'} → ${p.new?.status ?? '—'}`,
          ]),
          changed,
        ),
      );
    }
  }
  return parts.join('');
}

export function diffHtml(
  d: { kind: 'runs'; diff: RunDiff; recorded: number } | { kind: 'trace'; diff: TraceDiff; source: string },
): string {
  return d.kind === 'runs' ? runDiffHtml(d.diff, d.recorded) : traceDiffHtml(d.diff, d.source);
}
