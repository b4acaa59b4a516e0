// The learning curves in the report: per training step, the batch reward, success rate and KL of
// every seed's run, from the metrics lines the train target writes (reports/metrics.jsonl, one
// JSON object per step and seed). The KL chart plots kl_rollout — the KL to the reference of the
// policy that generated each batch, which ppo_eval gates by its maximum over every step of every
// seed — every step, unsmoothed, with the bound of reports/ppo_eval.json (kl.bound) as a rule; a
// run without kl_rollout (DPO, a command-engine trainer) shows its post-update `kl`, said so.
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

/** kl_rollout of every step, a line per seed, no smoothing (the gate takes the maximum), and the bound as a rule. */
const klCurve = (values: Record<string, unknown>[], bound: number | null) => ({
  title: 'KL to the reference of the policy that generated each batch (kl_rollout)',
  note:
    bound === null
      ? 'every step, unsmoothed; reports/ppo_eval.json is missing, so the bound is not drawn'
      : `every step, unsmoothed; the dashed rule is the bound ${bound} (reports/ppo_eval.json kl.bound) that ppo_eval holds the largest step of any seed to`,
  vegaLiteSpec: {
    width: 300,
    height: 200,
    layer: [
      {
        data: { values },
        mark: { type: 'line', strokeWidth: 1 },
        encoding: {
          x: { field: 'step', type: 'quantitative', title: 'step' },
          y: { field: 'kl', type: 'quantitative', title: 'KL(π ‖ π_ref)' },
          color: { field: 'seed', type: 'nominal', title: 'seed' },
        },
      },
      ...(bound === null
        ? []
        : [
            {
              data: { values: [{ bound }] },
              mark: { type: 'rule', strokeDash: [6, 4], color: 'black' },
              encoding: { y: { field: 'bound', type: 'quantitative' } },
            },
          ]),
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
  const rollout = lines.every((l) => typeof l.kl_rollout === 'number');
  const values = lines.map((l) => ({
    seed: String(l.seed),
    step: l.step,
    reward: l.reward,
    success: l.success,
    kl: rollout ? l.kl_rollout! : l.kl,
  }));
  const evalFile = 'reports/ppo_eval.json';
  const bound = ctx.exists(evalFile) ? (ctx.readJson(evalFile) as { kl?: { bound?: unknown } }).kl?.bound : undefined;
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
      rollout
        ? klCurve(values, typeof bound === 'number' ? bound : null)
        : curve('kl', 'KL to the reference after each update (no kl_rollout in the metrics)', values),
    ],
  };
}
