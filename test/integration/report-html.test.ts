// `rc1-build report` end to end through the CLI, the page checked in headless Chromium from Debian:
//   src/a.txt --> a --> b --> g (gate) --> after_gate
//   src/c.txt --> c (independent branch)
//   src/w.txt --> sq (squeeze) --> after_sq
// with a report sections module (lib/report.ts) that charts the gate's report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PIPELINE, standardRig } from '../helpers/rig.ts';
import { chartsOnPage, keepArtefact, visitPage } from '../helpers/chromium-page.ts';

const SECTIONS = `import { defineReportSections } from 'rc1-build';
export default defineReportSections([
  function lengths(ctx) {
    if (!ctx.exists('reports/g.json')) return { title: 'Lengths', unavailable: 'reports/g.json is missing: build g' };
    const r = ctx.readJson('reports/g.json') as { length: number; checks: { threshold: number }[] };
    const values = [{ what: 'length', n: r.length }, { what: 'threshold', n: r.checks[0]!.threshold }];
    return {
      title: 'Lengths', note: 'the gate report, charted',
      items: [
        { title: 'length vs threshold', vegaLiteSpec: { data: { values }, mark: 'bar', encoding: { x: { field: 'what', type: 'nominal' }, y: { field: 'n', type: 'quantitative' } } } },
        { title: 'as a table', table: { columns: ['what', 'n'], rows: values.map((v) => [v.what, v.n]) } },
      ],
    };
  },
  function notBuilt(ctx) {
    return ctx.exists('reports/never.json') ? { title: 'Never', items: [] } : { title: 'Never', unavailable: 'reports/never.json is missing: nothing builds it here' };
  },
]);
`;

function reportRig() {
  const rig = standardRig();
  rig.write(
    'rc1.build.ts',
    PIPELINE.replace(
      "defaultTargets: ['after_gate', 'c', 'after_sq'],",
      "defaultTargets: ['after_gate', 'c', 'after_sq'], report: { sections: 'lib/report.ts' },",
    ),
  );
  rig.write('lib/report.ts', SECTIONS);
  return rig;
}

test("report writes one self-contained page: the graph by state, the failed gate with its hint, the params diff, and the pipeline's chart drawn as SVG with marks, clean in Chromium", async () => {
  const rig = reportRig();
  try {
    assert.equal(rig.run([]).code, 0);
    // second build: two params changed; the gate now fails (exit 2), so after_gate is blocked
    rig.write('configs/default.yaml', 'copy:\n  suffix: "?"\ngate:\n  min: 100\nunrelated: 1\n');
    assert.equal(rig.run(['-k']).code, 2);
    rig.write('src/c.txt', 'changed\n'); // c is now stale
    const r = rig.run(['report']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^report: reports\/build\/index\.html · 7 targets, 1 gates, 2 sections \(1 unavailable\), 1 charts$/m,
    );
    const html = rig.read('reports/build/index.html');
    assert.doesNotMatch(html, /<script|<link|<img|<iframe|@import|url\((?!#)/i, 'no script, no external resource');
    assert.doesNotMatch(
      html.replace(/xmlns(:xlink)?="http:\/\/www\.w3\.org\/[^"]+"/g, ''),
      /https?:\/\//,
      'no URL other than the SVG namespaces',
    );
    // the run diff of the last two recorded runs: both changed params, the gate check's status change
    assert.match(
      html,
      /The last two of 2 recorded runs \(\.rc1\/runs\.jsonl\), as <code>rc1-build diff<\/code> compares them: run 1 \(/,
    );
    assert.match(html, /<td>copy\.suffix<\/td><td>!<\/td><td>\?<\/td><td><\/td>/);
    assert.match(html, /<td>gate\.min<\/td><td class="num">3<\/td><td class="num">100<\/td><td>\+97<\/td>/);
    assert.match(html, /<td>g<\/td><td>length<\/td><td>8 &gt;= 3 · pass<\/td><td>8 &gt;= 100 · fail<\/td><td>0<\/td>/);
    assert.match(html, /<td>a<\/td><td>out\/a\.txt<\/td><td>[0-9a-f]{12}<\/td><td>[0-9a-f]{12}<\/td>/);
    assert.match(html, /hint: make the text longer or lower gate\.min/);

    const shot = path.join(rig.dir, 'report.png');
    const visit = await visitPage(path.join(rig.dir, 'reports/build/index.html'), shot, async (page) => ({
      charts: await chartsOnPage(page),
      nodes: await page.$$eval('svg.graph g.node', (gs) =>
        gs.map((g) => ({
          name: g.getAttribute('data-target'),
          cls: g.getAttribute('class'),
          fill: g.querySelector('rect')?.getAttribute('fill'),
        })),
      ),
      gate: await page.$eval('#gate-g', (h) => h.textContent),
      unavailable: await page.$$eval('.unavailable', (ps) => ps.map((p) => p.textContent)),
      tables: await page.$$eval('section.pipeline-section table', (ts) => ts.length),
    }));
    const shown = keepArtefact(shot, 'report-html.png');
    console.log(`report screenshot: ${shown}`);
    assert.deepEqual(
      visit.console.filter((m) => m.type === 'error' || m.type === 'warning'),
      [],
    );
    assert.deepEqual(visit.pageErrors, []);
    assert.deepEqual(visit.requests, []);
    assert.deepEqual(visit.failedRequests, []);
    assert.deepEqual(
      visit.result.charts.map((c) => [c.title, c.svg]),
      [['length vs threshold', true]],
    );
    assert.equal(visit.result.charts[0]!.marks, 2, 'two bars drawn');
    const state = Object.fromEntries(visit.result.nodes.map((n) => [n.name, n.cls]));
    assert.equal(visit.result.nodes.length, 7);
    assert.equal(state.a, 'node state-up-to-date');
    assert.equal(state.c, 'node state-stale');
    assert.equal(state.g, 'node state-failed gate');
    assert.equal(state.after_gate, 'node state-stale');
    assert.equal(visit.result.nodes.find((n) => n.name === 'g')!.fill, '#fde0dc');
    assert.match(visit.result.gate ?? '', /^g failed$/);
    assert.deepEqual(visit.result.unavailable, ['reports/never.json is missing: nothing builds it here']);
    assert.equal(visit.result.tables, 1);
  } finally {
    rig.cleanup();
  }
});

test("with fewer than two recorded runs the diff compares the trace's previous records and says so; a section module that does not export section functions is a usage error (64)", () => {
  const rig = reportRig();
  try {
    assert.equal(rig.run([]).code, 0);
    assert.equal(rig.run(['report']).code, 0);
    let html = rig.read('reports/build/index.html');
    assert.match(html, /holds 1 run, fewer than two to compare/);
    assert.match(html, /No target has a previous record to compare with \(7 targets recorded\)/);
    rig.write('configs/default.yaml', 'copy:\n  suffix: "?"\ngate:\n  min: 3\nunrelated: 1\n');
    assert.equal(rig.run([]).code, 0);
    fs.rmSync(path.join(rig.dir, '.rc1/runs.jsonl'));
    assert.equal(rig.run(['report']).code, 0);
    html = rig.read('reports/build/index.html');
    assert.match(
      html,
      /holds 0 runs, fewer than two to compare: this compares each target&#39;s current record in \.rc1\/trace\.log with its previous record there/,
    );
    assert.match(html, /<td>copy\.suffix<\/td><td>!<\/td><td>\?<\/td><td>a, b, after_gate, c, after_sq<\/td>/);
    assert.match(
      html,
      /<td>g<\/td><td>[^<]+<\/td><td>[^<]+<\/td><td>ok<\/td><td>none \(same bytes: early cutoff\)<\/td>/,
    );
    rig.write('lib/report.ts', 'export default { sections: [] };\n');
    const r = rig.run(['report']);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /report sections module lib\/report\.ts must `export default` an array of section functions/,
    );
  } finally {
    rig.cleanup();
  }
});

test('a section that throws and a chart that cannot be drawn are shown on the page with their errors, and report exits 1', () => {
  const rig = reportRig();
  try {
    rig.write(
      'lib/report.ts',
      `import { defineReportSections } from 'rc1-build';
export default defineReportSections([
  function broken() { throw new Error('reports/x.json: not valid JSON'); },
  function badChart() { return { title: 'Bad', items: [{ title: 'remote data', vegaLiteSpec: { data: { url: 'https://example.org/x.json' }, mark: 'bar' } }] }; },
]);
`,
    );
    assert.equal(rig.run([]).code, 0);
    const r = rig.run(['report']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /report section broken \(lib\/report\.ts\): reports\/x\.json: not valid JSON/);
    assert.match(
      r.stderr,
      /report section badChart, chart "remote data": .*charts take inline data \(data\.values\); it asks to load https:\/\/example\.org\/x\.json/,
    );
    const html = rig.read('reports/build/index.html');
    assert.match(html, /this section failed: reports\/x\.json: not valid JSON/);
    assert.match(html, /this chart could not be drawn/);
  } finally {
    rig.cleanup();
  }
});
