// The learning curves in the report: per training step, the batch reward, success rate and KL of
// every seed's run, from the metrics lines the train target writes (reports/metrics.jsonl, one
// JSON object per step and seed).
import type { ReportContext, ReportSection } from 'rc1-build';

interface MetricsLine {
  seed: number;
  step: number;
  reward: number;
  success: number;
  kl: number;
  kl_rollout?: number;
  strategy?: string;
  engine?: string;
}

const FILE = 'reports/metrics.jsonl';

const WINDOW = 10;

/** One metric against the step, a line per seed: each step faint, the trailing mean over WINDOW steps drawn over it. */
const curve = (field: 'reward' | 'success' | 'kl', title: string, values: Record<string, unknown>[]) => ({
  title,
  note: `faint: every step; solid: the mean of the last ${WINDOW} steps`,
  vegaLiteSpec: {
    data: { values },
    width: 300,
    height: 200,
    transform: [
      {
        window: [{ op: 'mean', field, as: 'smoothed' }],
        frame: [-(WINDOW - 1), 0],
        groupby: ['seed'],
        sort: [{ field: 'step' }],
      },
    ],
    encoding: {
      x: { field: 'step', type: 'quantitative', title: 'step' },
      color: { field: 'seed', type: 'nominal', title: 'seed', legend: { symbolOpacity: 1, symbolStrokeWidth: 2 } },
    },
    layer: [
      {
        mark: { type: 'line', strokeWidth: 0.8, opacity: 0.3 },
        encoding: { y: { field, type: 'quantitative', title, scale: { zero: false } } },
      },
      { mark: { type: 'line', strokeWidth: 2 }, encoding: { y: { field: 'smoothed', type: 'quantitative' } } },
    ],
  },
});

export function learningCurvesSection(ctx: ReportContext): ReportSection {
  const title = 'Learning curves';
  if (!ctx.exists(FILE))
    return { title, unavailable: `${FILE} is missing: build ${ctx.producerOf(FILE) ?? 'train'} first` };
  const lines = (ctx.readJsonl(FILE) as MetricsLine[]).filter(
    (l) => typeof l.step === 'number' && typeof l.seed === 'number',
  );
  if (lines.length === 0) return { title, unavailable: `${FILE} holds no metrics line` };
  const values = lines.map((l) => ({
    seed: String(l.seed),
    step: l.step,
    reward: l.reward,
    success: l.success,
    kl: l.kl,
  }));
  const seeds = [...new Set(values.map((v) => v.seed))];
  const how = [...new Set(lines.map((l) => [l.engine, l.strategy].filter(Boolean).join(' ')))]
    .filter(Boolean)
    .join(', ');
  return {
    title,
    note: `${seeds.length} seed${seeds.length === 1 ? '' : 's'} (${seeds.join(', ')}), ${lines.length} metrics lines${how ? `, ${how}` : ''} (${FILE}).`,
    items: [
      curve('reward', 'batch reward', values),
      curve('success', 'success rate', values),
      curve('kl', 'KL to the reference', values),
    ],
  };
}
