// The calibration in the report: the calibrated weight of each score dimension with its bootstrap
// interval beside the old weight, and the held-out metrics of every cross-validation fold
// (calibrated vs old weights), from reports/calibration_report.json as the weights gate wrote it.
import type { ReportContext, ReportSection } from 'rc1-build';

interface Interval {
  lo: number;
  hi: number;
  median: number;
}
interface Metrics {
  spearman: number;
  kendall: number;
  mae: number;
}
interface CalibrationReport {
  weights: Record<string, number>;
  old_weights: Record<string, number>;
  intervals: { weights: Record<string, Interval>; unit: string; resamples: number };
  folds: { fold: number; nTest: number; metrics: Metrics; prior: Metrics }[];
  held_out?: { rows: { weights: string; spearman: number; kendall_tau_b: number; mae: number }[] };
}

const FILE = 'reports/calibration_report.json';

export function calibrationSection(ctx: ReportContext): ReportSection {
  const title = 'Calibration';
  if (!ctx.exists(FILE))
    return { title, unavailable: `${FILE} is missing: build ${ctx.producerOf(FILE) ?? 'weights'} first` };
  const r = ctx.readJson(FILE) as CalibrationReport;
  const weights = Object.keys(r.weights)
    .sort()
    .map((d) => ({
      dimension: d,
      calibrated: r.weights[d],
      old: r.old_weights[d] ?? null,
      lo: r.intervals.weights[d]?.lo ?? null,
      hi: r.intervals.weights[d]?.hi ?? null,
    }));
  const folds = r.folds.flatMap((f) =>
    (['spearman', 'kendall', 'mae'] as const).flatMap((m) => [
      { fold: `fold ${f.fold}`, metric: m, weights: 'calibrated', value: f.metrics[m] },
      { fold: `fold ${f.fold}`, metric: m, weights: 'old', value: f.prior[m] },
    ]),
  );
  return {
    title,
    note: `Weights fitted on the pool's scored rollouts; intervals over ${r.intervals.resamples} bootstrap resamples of the ${r.intervals.unit} (${FILE}).`,
    items: [
      {
        title: 'Weights with 95 % intervals',
        note: 'bar: calibrated weight; whisker: bootstrap interval; black tick: the old weight',
        vegaLiteSpec: {
          data: { values: weights },
          width: 360,
          height: 240,
          encoding: { x: { field: 'dimension', type: 'nominal', title: null, axis: { labelAngle: -30 } } },
          layer: [
            {
              mark: { type: 'bar', color: '#4c78a8' },
              encoding: { y: { field: 'calibrated', type: 'quantitative', title: 'weight' } },
            },
            {
              mark: { type: 'rule', color: '#e45756', strokeWidth: 2 },
              encoding: { y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' } },
            },
            {
              mark: { type: 'tick', color: '#111', thickness: 2 },
              encoding: { y: { field: 'old', type: 'quantitative' } },
            },
          ],
        },
      },
      {
        title: 'Held-out metrics per fold',
        note: 'each fold scored on its held-out source questions; Spearman and Kendall with success (higher is better), MAE (lower is better)',
        vegaLiteSpec: {
          data: { values: folds },
          facet: { column: { field: 'metric', type: 'nominal', title: null } },
          resolve: { scale: { y: 'independent' } },
          spec: {
            width: 170,
            height: 200,
            mark: { type: 'point', filled: true, size: 70 },
            encoding: {
              x: { field: 'fold', type: 'nominal', title: null },
              y: { field: 'value', type: 'quantitative', scale: { zero: false }, title: null },
              color: { field: 'weights', type: 'nominal', title: 'weights' },
              shape: { field: 'weights', type: 'nominal' },
            },
          },
        },
      },
      ...(r.held_out
        ? [
            {
              title: 'Held-out median over folds',
              table: {
                columns: ['weights', 'Spearman', 'Kendall τ-b', 'MAE'],
                rows: r.held_out.rows.map((x) => [x.weights, x.spearman, x.kendall_tau_b, x.mae]),
              },
            },
          ]
        : []),
    ],
  };
}
