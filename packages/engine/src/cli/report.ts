// `rc1-build report`: writes <manifestDir>/index.html, one self-contained page (report/html/):
// the graph coloured by state, every gate with its checks and hints, the run-to-run diff (the last
// two runs of the run history; before there are two, the trace's previous records), then the
// sections the pipeline contributes through definePipeline({ report: { sections } }) — a module
// compiled like a rule whose default export is an array of section functions; each reads
// artifacts and returns a title and charts (Vega-Lite specs, rendered here to SVG) or tables.
// Reads the workspace without taking the lock, like `status`. A section that throws or a chart
// that cannot be drawn is shown on the page with its error, and the command exits 1.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ReportContext, ReportSection, ReportSectionFn } from '../api/index.ts';
import { CompileError } from '../config/compile-module.ts';
import { PIPELINE_FILE } from '../config/load-pipeline.ts';
import { UsageError } from '../config/usage-error.ts';
import { graphSvg, type GraphNode } from '../report/html/graph-svg.ts';
import { renderChart } from '../report/html/render-chart.ts';
import {
  renderPage,
  type GateView,
  type PageData,
  type RenderedItem,
  type RenderedSection,
} from '../report/html/report-page.ts';
import { readTraceHistory, traceDiff } from '../report/html/trace-diff.ts';
import { diffRuns } from '../report/run-diff.ts';
import { historyOf } from '../report/run-recorder.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { targetStatuses } from './status.ts';
import type { Workspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

export const REPORT_FILE = 'index.html';

function reportContext(ws: Workspace): ReportContext {
  const abs = (rel: string): string => path.resolve(ws.root, rel);
  return {
    root: ws.root,
    profile: ws.profile,
    path: abs,
    exists: (rel) => fs.existsSync(abs(rel)),
    readJson(rel) {
      const text = fs.readFileSync(abs(rel), 'utf8');
      try {
        return JSON.parse(text) as unknown;
      } catch (e) {
        throw new Error(`${rel}: not valid JSON (${(e as Error).message})`);
      }
    },
    readJsonl(rel) {
      return fs
        .readFileSync(abs(rel), 'utf8')
        .split('\n')
        .flatMap((line, i) => {
          if (line.trim() === '') return [];
          try {
            return [JSON.parse(line) as unknown];
          } catch (e) {
            throw new Error(`${rel}:${i + 1}: not valid JSON (${(e as Error).message})`);
          }
        });
    },
    producerOf: (rel) => ws.pipeline.producers.get(rel),
  };
}

/** The pipeline's section functions, or null when it declares none. */
async function loadSections(ws: Workspace): Promise<{ module: string; fns: ReportSectionFn[] } | null> {
  const rel = ws.pipeline.reportSections;
  if (!rel) return null;
  if (!fs.existsSync(path.join(ws.root, rel))) {
    throw new UsageError({
      headline: `report sections module ${rel} does not exist`,
      location: PIPELINE_FILE,
      hint: 'definePipeline({ report: { sections } }) names a workspace-relative module',
    });
  }
  let file: string;
  try {
    file = await ws.compiler.compiled(rel);
  } catch (e) {
    if (e instanceof CompileError)
      throw new UsageError({
        headline: `report sections module ${rel} does not compile`,
        context: { error: e.message },
      });
    throw e;
  }
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  const fns = mod.default;
  if (!Array.isArray(fns) || !fns.every((f) => typeof f === 'function')) {
    throw new UsageError({
      headline: `report sections module ${rel} must \`export default\` an array of section functions`,
      location: `${rel}:1:1`,
      hint: 'export default defineReportSections([shadowRun, …]) (from rc1-build)',
    });
  }
  return { module: rel, fns: fns as ReportSectionFn[] };
}

function shapeProblem(s: unknown): string | null {
  if (!s || typeof s !== 'object') return 'returned no section object';
  const o = s as Partial<ReportSection>;
  if (typeof o.title !== 'string' || o.title === '') return 'a section needs a title';
  if (o.unavailable === undefined && !Array.isArray(o.items))
    return `section "${o.title}": give items (charts, tables, text) or say why it is unavailable`;
  for (const it of o.items ?? []) {
    if (!it || typeof it.title !== 'string') return `section "${o.title}": every item needs a title`;
    if (!('vegaLiteSpec' in it) && !('table' in it) && !('text' in it))
      return `section "${o.title}", item "${(it as { title: string }).title}": expected vegaLiteSpec, table or text`;
    if ('table' in it && (!Array.isArray(it.table?.columns) || !Array.isArray(it.table?.rows)))
      return `section "${o.title}", item "${it.title}": a table has columns and rows`;
  }
  return null;
}

export async function runReport(ws: Workspace, io: Io): Promise<number> {
  const statuses = await targetStatuses(ws);
  const sections = await loadSections(ws);
  ws.saveCaches();
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const graph: GraphNode[] = ws.pipeline.order.map((n) => {
    const t = ws.pipeline.targets.get(n)!;
    const s = byName.get(n)!;
    return { name: n, deps: t.deps, gate: t.gate, state: s.state, reasons: s.reasons };
  });
  const gates: GateView[] = graph
    .filter((g) => g.gate)
    .map((g) => {
      const t = ws.pipeline.targets.get(g.name)!;
      const rec = ws.trace.records.get(g.name);
      return {
        name: g.name,
        state: g.state,
        checks: rec ? (rec.checks ?? []) : null,
        ...(rec ? { result: rec.result, at: rec.at } : {}),
        ...(t.report
          ? {
              report: {
                path: t.report,
                href: path.posix.relative(ws.pipeline.manifestDir, t.report),
                exists: fs.existsSync(path.join(ws.root, t.report)),
              },
            }
          : {}),
      };
    });
  // The run diff: the last two runs of the run history (as `rc1-build diff` shows them); with
  // fewer than two recorded, each target's current trace record against its previous one.
  const runs = historyOf(ws).all();
  const diff: PageData['diff'] =
    runs.length >= 2
      ? { kind: 'runs', diff: diffRuns(runs[runs.length - 2]!, runs[runs.length - 1]!), recorded: runs.length }
      : {
          kind: 'trace',
          diff: traceDiff(readTraceHistory(ws.trace.file), ws.pipeline.order),
          source: `The run history (.rc1/runs.jsonl, rc1-build diff) holds ${runs.length} run${runs.length === 1 ? '' : 's'}, fewer than two to compare: this compares each target's current record in .rc1/trace.log with its previous record there instead (the trace keeps superseded records until it is compacted).`,
        };
  let manifestGit = null;
  try {
    manifestGit =
      (
        JSON.parse(fs.readFileSync(path.join(ws.root, ws.pipeline.manifestDir, 'manifest.json'), 'utf8')) as {
          git?: { commit: string | null; dirty: boolean | null };
        }
      ).git ?? null;
  } catch {
    /* no manifest yet */
  }
  const asOf =
    [...ws.trace.records.values()]
      .map((r) => r.at)
      .sort()
      .pop() ?? null;

  const failures: string[] = [];
  const rendered: RenderedSection[] = [];
  let charts = 0;
  let chartIds = 0;
  if (sections) {
    const ctx = reportContext(ws);
    for (const [i, fn] of sections.fns.entries()) {
      const label = fn.name || `#${i + 1}`;
      let out: ReportSection[];
      try {
        const r = await fn(ctx);
        out = Array.isArray(r) ? r : [r];
        const bad = out.map(shapeProblem).find((p) => p !== null);
        if (bad) throw new Error(bad);
      } catch (e) {
        const msg = `report section ${label} (${sections.module}): ${(e as Error).message}`;
        failures.push(msg);
        rendered.push({ title: label, unavailable: `this section failed: ${(e as Error).message}`, items: [] });
        continue;
      }
      for (const s of out) {
        const items: RenderedItem[] = [];
        for (const it of s.items ?? []) {
          if ('vegaLiteSpec' in it) {
            try {
              items.push({
                kind: 'chart',
                title: it.title,
                svg: await renderChart(it.vegaLiteSpec, `c${++chartIds}-`),
                ...(it.note ? { note: it.note } : {}),
              });
              charts++;
            } catch (e) {
              failures.push(`report section ${label}, chart "${it.title}": ${(e as Error).message}`);
              items.push({
                kind: 'text',
                title: it.title,
                text: `this chart could not be drawn: ${(e as Error).message}`,
              });
            }
          } else if ('table' in it)
            items.push({
              kind: 'table',
              title: it.title,
              columns: it.table.columns,
              rows: it.table.rows,
              ...(it.note ? { note: it.note } : {}),
            });
          else items.push({ kind: 'text', title: it.title, text: it.text });
        }
        rendered.push({
          title: s.title,
          ...(s.note ? { note: s.note } : {}),
          ...(s.unavailable !== undefined ? { unavailable: s.unavailable } : {}),
          items,
        });
      }
    }
  }
  const page = renderPage({
    title: path.basename(ws.root),
    profile: ws.profile,
    asOf,
    git: manifestGit,
    graph,
    graphSvg: graphSvg(graph),
    gates,
    diff,
    sectionsSource: sections
      ? `The sections below come from the pipeline (${sections.module}); their charts were drawn when this page was written.`
      : 'The pipeline declares no report sections (definePipeline({ report: { sections } })).',
    sections: rendered,
  });
  const rel = path.posix.join(ws.pipeline.manifestDir, REPORT_FILE);
  const abs = path.join(ws.root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  writeFileAtomic(abs, page);
  const unavailable = rendered.filter((s) => s.unavailable !== undefined).length;
  io.out(
    `report: ${rel} · ${graph.length} targets, ${gates.length} gates, ${rendered.length} sections (${unavailable} unavailable), ${charts} charts\n`,
  );
  for (const f of failures) io.err(`rc1-build: ${f}\n`);
  return failures.length ? 1 : 0;
}
