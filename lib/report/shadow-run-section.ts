// The shadow run in the report: per scenario, the old score against the new reward (coloured by
// task), and per split (task, difficulty bucket) the agreement and success correlations with their
// bootstrap intervals — all read from reports/shadow_run_<tag>.json as the shadow_run gate wrote it.
import type { ReportContext, ReportItem, ReportSection } from 'rc1-build';

interface Interval {
  lo: number;
  hi: number;
  median: number;
  level: number;
}
interface ShadowReport {
  scenarios: number;
  overall: { spearman_old_new: number; success: { old: { spearman: number }; new: { spearman: number } } };
  splits: Record<
    string,
    Record<
      string,
      { n: number; spearman_old_new: number; success: { old: { spearman: number }; new: { spearman: number } } }
    >
  >;
  split_intervals?: Record<string, Record<string, Record<string, Interval>> | string>;
  scenario_scores?: {
    rows: { scenario_id: string; task: string; difficulty: string | null; old: number; new: number; success: number }[];
  };
}

const STATS = [
  ['spearman_old_new', 'ρ(old, new)'],
  ['rho_new', 'ρ(new, success)'],
  ['rho_old', 'ρ(old, success)'],
] as const;

export function shadowRunSection(ctx: ReportContext, tag: string): ReportSection {
  const file = `reports/shadow_run_${tag}.json`;
  const title = `Shadow run (${tag})`;
  if (!ctx.exists(file))
    return { title, unavailable: `${file} is missing: build ${ctx.producerOf(file) ?? 'the shadow run'} first` };
  const r = ctx.readJson(file) as ShadowReport;
  const items: ReportItem[] = [];
  const rows = r.scenario_scores?.rows;
  if (rows?.length) {
    items.push({
      title: `Old score vs new reward, ${rows.length} scenarios`,
      note: `Spearman ρ(old, new) ${r.overall.spearman_old_new.toFixed(3)}; size: the scenario's success share`,
      vegaLiteSpec: {
        data: { values: rows },
        width: 380,
        height: 320,
        mark: { type: 'point', filled: true, opacity: 0.65 },
        encoding: {
          x: { field: 'old', type: 'quantitative', title: 'old score (mean over candidates)', scale: { zero: false } },
          y: {
            field: 'new',
            type: 'quantitative',
            title: 'new reward, before the difficulty factor',
            scale: { zero: false },
          },
          color: { field: 'task', type: 'nominal', title: 'task' },
          size: { field: 'success', type: 'quantitative', title: 'success share', scale: { range: [12, 90] } },
        },
      },
    });
  } else {
    items.push({
      title: 'Old score vs new reward',
      text: `${file} holds no per-scenario scores (written before the report needed them): rebuild ${ctx.producerOf(file) ?? 'the shadow run'} to draw this chart.`,
    });
  }
  const values: Record<string, unknown>[] = [];
  for (const [by, groups] of Object.entries(r.splits)) {
    for (const [split, c] of Object.entries(groups)) {
      const iv = r.split_intervals?.[by];
      for (const [key, label] of STATS) {
        const estimate =
          key === 'spearman_old_new'
            ? c.spearman_old_new
            : key === 'rho_new'
              ? c.success.new.spearman
              : c.success.old.spearman;
        const interval = typeof iv === 'object' ? iv[split]?.[key] : undefined;
        values.push({
          by,
          split: `${split} (${c.n})`,
          statistic: label,
          estimate,
          lo: interval?.lo ?? null,
          hi: interval?.hi ?? null,
        });
      }
    }
  }
  const withIntervals = values.some((v) => v.lo !== null);
  items.push({
    title: 'Per split: agreement and correlation with success',
    note: withIntervals
      ? "bars: the split's estimate; whiskers: its 95 % scenario-level bootstrap interval (not gated)"
      : `bars: the split's estimate; ${file} holds no per-split intervals (written before they were reported): rebuild to add them`,
    vegaLiteSpec: {
      data: { values },
      hconcat: Object.keys(r.splits).map((by) => ({
        title: `by ${by}`,
        transform: [{ filter: { field: 'by', equal: by } }],
        width: 220,
        height: 220,
        encoding: {
          x: { field: 'split', type: 'nominal', title: null, axis: { labelAngle: -20 } },
          xOffset: { field: 'statistic', type: 'nominal' },
        },
        layer: [
          {
            mark: 'bar',
            encoding: {
              y: { field: 'estimate', type: 'quantitative', title: 'Spearman ρ', scale: { domain: [-0.2, 1] } },
              color: { field: 'statistic', type: 'nominal', title: 'statistic' },
            },
          },
          ...(withIntervals
            ? [
                {
                  mark: { type: 'rule', color: '#222', strokeWidth: 1.5 },
                  encoding: { y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' } },
                },
              ]
            : []),
        ],
      })),
    },
  });
  return {
    title,
    note: `${r.scenarios} scenarios; overall ρ(new, success) ${r.overall.success.new.spearman.toFixed(3)} vs ρ(old, success) ${r.overall.success.old.spearman.toFixed(3)} (${file}).`,
    items,
  };
}
