// RC1's report sections (lib/report/sections.ts) on real builds, the page checked in headless
// Chromium from Debian: the pipeline built up to its evaluation gates in a copy of the project
//   … --> rollouts_shadow, scores, weights, difficulty_metrics_shadow --> shadow_run (gate)
//   … --> balanced_pool --> difficulty_report (gate)
// and a small `train` run with two seeds for the learning curves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, TestRig } from '../helpers/rig.ts';
import { SMALL, trainWorkspace } from '../helpers/train-fixtures.ts';
import { chartsOnPage, keepArtefact, visitPage } from '../helpers/chromium-page.ts';
import type { Page } from 'playwright-core';

async function inspect(page: Page) {
  return {
    charts: await chartsOnPage(page),
    sections: await page.$$eval('section.pipeline-section', (ss) =>
      ss.map((s) => ({
        title: s.querySelector('h2')?.textContent,
        unavailable: s.querySelector('.unavailable')?.textContent ?? null,
      })),
    ),
    /** Data marks per chart by kind (vega's mark-<type> class on the mark's group). */
    marks: await page.$$eval('figure.chart', (figs) =>
      figs.map((f) =>
        Object.fromEntries(
          ['symbol', 'rect', 'rule', 'line'].map((k) => [k, f.querySelectorAll(`g.role-mark.mark-${k} > *`).length]),
        ),
      ),
    ),
  };
}

function assertCleanVisit(v: {
  console: { type: string }[];
  pageErrors: string[];
  requests: string[];
  failedRequests: string[];
}): void {
  assert.deepEqual(
    v.console.filter((m) => m.type === 'error' || m.type === 'warning'),
    [],
  );
  assert.deepEqual(v.pageErrors, []);
  assert.deepEqual(v.requests, []);
  assert.deepEqual(v.failedRequests, []);
}

test('RC1 report after the evaluation gates: the shadow-run scatter has a point per scenario and the split bars their interval whiskers, the calibration and difficulty charts are drawn, and the learning curves say train is not built', async () => {
  const rig = new TestRig();
  try {
    for (const p of ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'])
      fs.cpSync(path.join(REPO, p), path.join(rig.dir, p), { recursive: true });
    const b = rig.run(['-j', '2', 'shadow_run', 'shadow_run_pre_run_check', 'weights', 'difficulty_report']);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    const r = rig.run(['report']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^report: reports\/rc1\/index\.html · \d+ targets, \d+ gates, 5 sections \(1 unavailable\), 8 charts$/m,
    );
    const shot = path.join(rig.dir, 'report.png');
    const v = await visitPage(path.join(rig.dir, 'reports/rc1/index.html'), shot, inspect);
    console.log(`report screenshot: ${keepArtefact(shot, 'report-rc1.png')}`);
    assertCleanVisit(v);
    assert.deepEqual(
      v.result.sections.map((s) => s.title),
      ['Shadow run (round1)', 'Shadow run (pre_run_check)', 'Calibration', 'Difficulty', 'Learning curves'],
    );
    assert.deepEqual(
      v.result.sections.filter((s) => s.unavailable).map((s) => s.unavailable),
      ['reports/metrics.jsonl is missing: build train first'],
    );
    for (const c of v.result.charts) assert.ok(c.svg && c.marks > 0, `${c.title}: an SVG with drawn marks`);
    assert.deepEqual(
      v.result.charts.map((c) => c.title),
      [
        'Old score vs new reward, 245 scenarios',
        'Per split: agreement and correlation with success',
        'Old score vs new reward, 245 scenarios',
        'Per split: agreement and correlation with success',
        'Weights with 95 % intervals',
        'Held-out metrics per fold',
        'Buckets',
        'Histograms of the difficulty metrics',
      ],
    );
    assert.equal(v.result.marks[0]!.symbol, 245, 'a point per shadow scenario');
    // 2 split kinds x 3 splits x 3 statistics: a bar and an interval whisker each
    assert.equal(v.result.marks[1]!.rect, 18);
    assert.equal(v.result.marks[1]!.rule, 18);
    const cal = JSON.parse(rig.read('reports/calibration_report.json')) as {
      weights: Record<string, number>;
      folds: unknown[];
    };
    const dims = Object.keys(cal.weights).length;
    // vega draws a tick as a rect: per dimension a bar and an old-weight tick, and an interval whisker
    assert.deepEqual(
      [v.result.marks[4]!.rect, v.result.marks[4]!.rule],
      [2 * dims, dims],
      'a bar, tick and whisker per dimension',
    );
    assert.equal(v.result.marks[5]!.symbol, cal.folds.length * 3 * 2, 'per fold: 3 metrics x (calibrated, old)');
  } finally {
    rig.cleanup();
  }
});

test('RC1 learning curves: a line per seed of a real (small) train run, for reward, success and the rollout KL', async () => {
  const rig = trainWorkspace();
  try {
    rig.write('configs/profiles/dev.yaml', `${JSON.stringify({ ...SMALL, ppo: { ...SMALL.ppo, seeds: [11, 12] } })}\n`);
    rig.write(
      'rc1.build.ts',
      rig
        .read('rc1.build.ts')
        .replace(
          "defaultTargets: ['train'],",
          "defaultTargets: ['train'], report: { sections: 'lib/report/sections.ts' },",
        ),
    );
    const b = rig.run(['train']);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    // the bound ppo_eval reports (kl.bound of reports/ppo_eval.json) is drawn in the KL chart
    rig.write('reports/ppo_eval.json', `${JSON.stringify({ kl: { target_kl: 0.03, bound: 0.045 } })}\n`);
    const r = rig.run(['report']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /· 1 targets, 0 gates, 5 sections \(4 unavailable\), 3 charts$/m);
    const shot = path.join(rig.dir, 'report.png');
    const v = await visitPage(path.join(rig.dir, 'reports/build/index.html'), shot, inspect);
    console.log(`report screenshot: ${keepArtefact(shot, 'report-rc1-learning-curves.png')}`);
    assertCleanVisit(v);
    assert.deepEqual(
      v.result.charts.map((c) => c.title),
      ['batch reward', 'success rate', 'KL to the reference of the policy that generated each batch (kl_rollout)'],
    );
    // reward and success: each seed's raw line and its trailing mean; KL: each seed's kl_rollout of
    // every step, unsmoothed (ppo_eval gates its maximum), and the bound as one rule
    assert.deepEqual(
      v.result.marks.map((m) => m.line),
      [4, 4, 2],
    );
    assert.equal(v.result.marks[2]!.rule, 1);
    assert.match(rig.read('reports/build/index.html'), /the dashed rule is the bound 0\.045/);
    const lc = v.result.sections.find((s) => s.title === 'Learning curves')!;
    assert.equal(lc.unavailable, null);
    assert.match(rig.read('reports/build/index.html'), /2 seeds \(11, 12\), 12 metrics lines/);
  } finally {
    rig.cleanup();
  }
});
