// The difficulty histograms in the report: for every difficulty metric, the share of scenarios per
// bin in the whole pool and in the balanced pool, from the difficulty_report gate's report
// (fixed-width bins, non-empty bins only, as the report lists them).
import type { ReportContext, ReportSection } from 'rc1-build';

interface Bin {
  from: number;
  to: number;
  count: number;
}
interface Population {
  n: number;
  counts: Record<string, number>;
  metrics: Record<string, { histogram: { bin_width: number; bins: Bin[] } }>;
}
interface DifficultyReport {
  pool: { all: Population };
  balanced: { all: Population } | null;
}

const FILE = 'reports/rc1/difficulty_report.json';

export function difficultySection(ctx: ReportContext): ReportSection {
  const title = 'Difficulty';
  if (!ctx.exists(FILE))
    return { title, unavailable: `${FILE} is missing: build ${ctx.producerOf(FILE) ?? 'difficulty_report'} first` };
  const r = ctx.readJson(FILE) as DifficultyReport;
  const pops = [
    ['pool', r.pool?.all],
    ['balanced', r.balanced?.all],
  ] as const;
  const bins: Record<string, unknown>[] = [];
  const buckets: Record<string, unknown>[] = [];
  for (const [population, p] of pops) {
    if (!p) continue;
    for (const [metric, m] of Object.entries(p.metrics)) {
      for (const b of m.histogram.bins) bins.push({ population, metric, from: b.from, to: b.to, share: b.count / p.n });
    }
    for (const [bucket, count] of Object.entries(p.counts))
      buckets.push({ population, bucket, share: count / p.n, count });
  }
  if (bins.length === 0) return { title, unavailable: `${FILE} lists no histogram` };
  const sizes = pops
    .filter(([, p]) => p)
    .map(([name, p]) => `${name} ${p!.n}`)
    .join(', ');
  return {
    title,
    note: `Scenarios: ${sizes} (${FILE}). Shares, so the two populations compare despite their sizes.`,
    items: [
      {
        title: 'Buckets',
        vegaLiteSpec: {
          data: { values: buckets },
          width: 240,
          height: 160,
          mark: 'bar',
          encoding: {
            x: { field: 'bucket', type: 'nominal', sort: ['easy', 'medium', 'hard'], title: null },
            xOffset: { field: 'population', type: 'nominal' },
            y: { field: 'share', type: 'quantitative', axis: { format: '%' } },
            color: { field: 'population', type: 'nominal' },
          },
        },
      },
      {
        title: 'Histograms of the difficulty metrics',
        note: "each bar spans its bin [from, to); the share of the population's scenarios that fall in it",
        vegaLiteSpec: {
          data: { values: bins },
          facet: { field: 'metric', type: 'nominal', title: null },
          columns: 5,
          resolve: { scale: { x: 'independent', y: 'independent' } },
          spec: {
            width: 170,
            height: 110,
            mark: { type: 'rect', opacity: 0.55 },
            encoding: {
              x: { field: 'from', type: 'quantitative', title: null, scale: { zero: false } },
              x2: { field: 'to' },
              y: { field: 'share', type: 'quantitative', title: null, stack: null },
              y2: { datum: 0 },
              color: { field: 'population', type: 'nominal' },
            },
          },
        },
      },
    ],
  };
}
