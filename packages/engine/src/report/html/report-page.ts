// The report page: one self-contained HTML file (inline CSS, inline SVG, no script, no external
// resource) that opens offline. The engine's parts — the graph coloured by state, every gate with
// its checks and hints, the run-to-run diff — then the pipeline's own sections. Pure: the same
// data gives the same bytes.
import type { Check } from '../../api/index.ts';
import type { RunDiff } from '../run-diff.ts';
import { diffHtml } from './diff-html.ts';
import { escapeHtml as esc } from './escape-html.ts';
import { STATE_COLOURS, type GraphNode, type NodeState } from './graph-svg.ts';
import { fmt, html, status, table } from './html-table.ts';
import type { TraceDiff } from './trace-diff.ts';

export interface GateView {
  name: string;
  state: NodeState;
  /** The gate's report file, workspace-relative, and the link to it from the page. */
  report?: { path: string; href: string; exists: boolean };
  /** Checks of the last build of the gate (null: never built). */
  checks: readonly Check[] | null;
  result?: string;
  at?: string;
}

export type RenderedItem =
  | { kind: 'chart'; title: string; svg: string; note?: string }
  | { kind: 'table'; title: string; columns: string[]; rows: (string | number | boolean | null)[][]; note?: string }
  | { kind: 'text'; title: string; text: string };

export interface RenderedSection {
  title: string;
  note?: string;
  unavailable?: string;
  items: RenderedItem[];
}

export interface PageData {
  title: string;
  profile: string;
  /** Time of the newest trace record (the state the page shows), null when nothing was built. */
  asOf: string | null;
  git: { commit: string | null; dirty: boolean | null } | null;
  graph: readonly GraphNode[];
  graphSvg: string;
  gates: readonly GateView[];
  /** The last two runs of the run history, or (fewer than two recorded) the trace's previous records and why. */
  diff: { kind: 'runs'; diff: RunDiff; recorded: number } | { kind: 'trace'; diff: TraceDiff; source: string };
  /** Where the pipeline's sections come from (the module), or why there are none. */
  sectionsSource: string;
  sections: readonly RenderedSection[];
}

const CSS = `
body{font:14px/1.45 "DejaVu Sans",Helvetica,Arial,sans-serif;color:#222;margin:0;background:#fafafa}
header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#cfd8dc}
nav{padding:8px 24px;background:#eceff1;border-bottom:1px solid #cfd8dc}nav a{margin-right:16px;color:#1e4f7a}
main{padding:8px 24px 40px}section{margin:18px 0 28px}h2{font-size:18px;border-bottom:2px solid #cfd8dc;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}.note{color:#555;max-width:70em}.unavailable{color:#8a5a00;background:#fff8e1;padding:6px 10px;border-left:3px solid #f0b400}
.scroll{overflow-x:auto;background:#fff;border:1px solid #ddd;padding:6px}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f1f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.st{font-weight:bold;padding:0 6px;border-radius:3px;white-space:nowrap}.st-pass,.st-up-to-date,.st-ok{background:#e3f4e4;color:#1b4d1e}
.st-fail,.st-failed,.st-gate-failed{background:#fde0dc;color:#7f1414}.st-waived,.st-stale{background:#fff2cc;color:#5c4300}.st-n\\/a,.st-missing,.st-never{background:#eee;color:#444}
.hint{color:#555;font-size:12.5px}.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;border:1px solid}
figure{display:inline-block;margin:6px 18px 12px 0;vertical-align:top;background:#fff;border:1px solid #ddd;padding:8px}figcaption{font-weight:bold;margin-bottom:4px}
.changed{background:#fff8e1}
`;

function checkRow(c: Check): unknown[] {
  const why =
    c.status === 'waived' ? `waived: ${c.waived ?? ''}` : c.status === 'n/a' ? `n/a: ${c.not_applicable ?? ''}` : '';
  const notes = [
    why,
    c.status !== 'pass' && c.hint ? `hint: ${c.hint}` : '',
    c.basis ? `basis: ${c.basis}` : '',
  ].filter(Boolean);
  return [
    c.name,
    html(status(c.status)),
    c.value,
    `${c.op} ${fmt(c.threshold)}`,
    html(notes.map((n) => `<div class="hint">${esc(n)}</div>`).join('')),
  ];
}

function gatesHtml(gates: readonly GateView[]): string {
  if (gates.length === 0) return '<p class="note">The pipeline declares no gates.</p>';
  const summary = table(
    ['gate', 'state', 'last result', 'checks (pass / fail / waived / n/a)', 'report'],
    gates.map((g) => {
      const n = (s: string): number => (g.checks ?? []).filter((c) => c.status === s).length;
      return [
        html(`<a href="#gate-${esc(g.name)}">${esc(g.name)}</a>`),
        html(status(g.state)),
        g.result ? html(status(g.result)) : 'never built',
        g.checks ? `${n('pass')} / ${n('fail')} / ${n('waived')} / ${n('n/a')}` : '—',
        g.report?.path ?? '—',
      ];
    }),
  );
  const each = gates
    .map((g) => {
      const link = g.report
        ? g.report.exists
          ? `<a href="${esc(g.report.href)}">${esc(g.report.path)}</a>`
          : `${esc(g.report.path)} (not on disk)`
        : '';
      const head = `<h3 id="gate-${esc(g.name)}">${esc(g.name)} ${status(g.state)}</h3><p class="note">${g.at ? `last built ${esc(g.at)}` : 'never built'}${link ? ` · report ${link}` : ''}${g.state !== 'up-to-date' && g.checks ? ' · the checks below are from its last build, which is no longer up to date' : ''}</p>`;
      if (!g.checks) return head;
      if (g.checks.length === 0) return `${head}<p class="note">Its last build recorded no checks.</p>`;
      return head + table(['check', 'status', 'value', 'threshold', 'why / hint / basis'], g.checks.map(checkRow));
    })
    .join('');
  return summary + each;
}

function sectionHtml(s: RenderedSection, i: number): string {
  const body = s.unavailable
    ? `<p class="unavailable">${esc(s.unavailable)}</p>`
    : s.items
        .map((it) => {
          if (it.kind === 'chart')
            return `<figure class="chart"><figcaption>${esc(it.title)}</figcaption>${it.svg}${it.note ? `<div class="hint">${esc(it.note)}</div>` : ''}</figure>`;
          if (it.kind === 'table')
            return `<h3>${esc(it.title)}</h3>${it.note ? `<p class="note">${esc(it.note)}</p>` : ''}<div class="scroll">${table(it.columns, it.rows)}</div>`;
          return `<h3>${esc(it.title)}</h3><p>${esc(it.text)}</p>`;
        })
        .join('');
  return `<section id="section-${i}" class="pipeline-section"><h2>${esc(s.title)}</h2>${s.note ? `<p class="note">${esc(s.note)}</p>` : ''}${body}</section>`;
}

export function renderPage(d: PageData): string {
  const counts = (['up-to-date', 'stale', 'missing', 'failed'] as const).map(
    (s) => [s, d.graph.filter((n) => n.state === s).length] as const,
  );
  const legend =
    counts
      .map(
        ([s, n]) =>
          `<span><i style="background:${STATE_COLOURS[s].fill};border-color:${STATE_COLOURS[s].stroke}"></i>${s} (${n})</span>`,
      )
      .join('') + '<span>rounded, thick border: a gate</span>';
  const git = d.git?.commit ? `git ${d.git.commit.slice(0, 12)}${d.git.dirty ? ' (dirty)' : ''}` : 'git commit unknown';
  const nav = [
    '<a href="#graph">graph</a>',
    '<a href="#gates">gates</a>',
    '<a href="#diff">run diff</a>',
    ...d.sections.map((s, i) => `<a href="#section-${i}">${esc(s.title)}</a>`),
  ].join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(d.title)} — rc1-build report</title><style>${CSS}</style></head>
<body><header><h1>${esc(d.title)} — build report</h1><p>profile ${esc(d.profile)} · ${esc(git)} · state as of ${esc(d.asOf ?? 'no build yet')} · ${d.graph.length} targets</p></header>
<nav>${nav}</nav><main>
<section id="graph"><h2>Graph</h2><p class="legend">${legend}</p><div class="scroll">${d.graphSvg}</div><p class="note">Each target's state as <code>rc1-build status</code> computes it now; hover a target for the reason.</p></section>
<section id="gates"><h2>Gates</h2>${gatesHtml(d.gates)}</section>
<section id="diff"><h2>Run diff</h2>${diffHtml(d.diff)}</section>
<p class="note">${esc(d.sectionsSource)}</p>
${d.sections.map(sectionHtml).join('\n')}
</main></body></html>
`;
}
