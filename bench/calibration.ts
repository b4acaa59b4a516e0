// Calibration benchmark: the `weights` protocol of docs/rc1.md (calibrateWeights in lib/stats: 5-fold
// CV stratified by success × 200 bootstrap resamples of each fold's training rows, each fit the
// constrained prior NNLS from the resample's XᵀX / Xᵀy, each scored on the held-out fold by
// Spearman, Kendall τ-b and MAE) on SYNTHETIC data: 30 000 items × 7 score dimensions, a noisy
// ground-truth weighting and a binary success drawn from it. Baselines measured in the same run:
// the same protocol with the unconstrained ridge fit in place of the constrained one, one
// constrained fit on all rows, and the pieces (Gram pass, Spearman, Kendall on 30 000 items).
// Goal (issue 5): the protocol in ≤ 10 s on this machine.
// Run: node --import tsx bench/calibration.ts [--quick]   (--quick: one run per row instead of 3)
import { createRng } from 'rc1-build';
import {
  calibrateWeights,
  gram,
  kendallTauB,
  matVec,
  matrix,
  simplexNnls,
  spearman,
  type CalibrationData,
  type CalibrationOptions,
} from '../lib/stats/index.ts';
import { fmtMs, hasFlag, loadNote, machineReport, summarize, table, timeSync, type Sample } from './util.ts';

const RUNS = hasFlag('--quick') ? 1 : 3;
const N = 30_000;
const GOAL_MS = 10_000;
// The seven reward dimensions of lib/scoring, named here so the benchmark stands alone.
const NAMES = ['correctness', 'reasoning', 'clarity', 'conciseness', 'clarification', 'tool_use', 'format_safety'];
const TRUTH = [0.34, 0.18, 0.12, 0.06, 0.16, 0.09, 0.05];
const OLD = NAMES.map(() => 1 / NAMES.length);
const PROTOCOL: CalibrationOptions = { folds: 5, resamples: 200, seed: 42, l2: 0.1, upper: 0.5 };

/** Synthetic scored items: correlated dimension scores in [0, 1], y = X·TRUTH + noise, success from y. */
function synthetic(n: number, seed: number): CalibrationData {
  const rng = createRng(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const d = NAMES.length;
  const X = matrix(n, d);
  const y = new Float64Array(n);
  const success = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const quality = rng.next();
    let t = 0;
    for (let j = 0; j < d; j++) {
      const v = Math.min(1, Math.max(0, 0.55 * quality + 0.45 * rng.next() + 0.05 * gauss()));
      X.data[i * d + j] = v;
      t += TRUTH[j]! * v;
    }
    y[i] = t + 0.05 * gauss();
    success[i] = rng.next() < 1 / (1 + Math.exp(-12 * (y[i]! - 0.5))) ? 1 : 0;
  }
  return { X, y, success, prior: OLD, names: NAMES };
}

function measure(fn: () => void): Sample {
  return summarize(Array.from({ length: RUNS }, () => timeSync(fn)));
}

const rssMiB = (): number => process.memoryUsage().rss / 2 ** 20;
const peakRssMiB = (): number => process.resourceUsage().maxRSS / 1024;

console.log('# Calibration benchmark (synthetic data)\n');
console.log(machineReport());
const data = synthetic(N, 20250820);
const positives = Array.from(data.success).reduce((a, b) => a + b, 0);
console.log(
  `data: SYNTHETIC, ${N} items × ${NAMES.length} dimensions, success rate ${(positives / N).toFixed(3)}, ` +
    `ground truth ${TRUTH.join(' / ')}, old weights uniform 1/7`,
);
console.log(
  `protocol: ${PROTOCOL.folds}-fold CV (stratified by success) × ${PROTOCOL.resamples} bootstraps, l2 ${PROTOCOL.l2}, ` +
    `each weight ≤ ${PROTOCOL.upper}, seed ${PROTOCOL.seed}; ${RUNS} run(s) per row\n`,
);

const rssBefore = rssMiB();
const peakBefore = peakRssMiB();
let result = calibrateWeights(data, PROTOCOL);
const protocol = measure(() => (result = calibrateWeights(data, PROTOCOL)));
const peakAfter = peakRssMiB();
let baselineResult = calibrateWeights(data, { ...PROTOCOL, solver: 'least-squares' });
const baseline = measure(() => (baselineResult = calibrateWeights(data, { ...PROTOCOL, solver: 'least-squares' })));
const fits = PROTOCOL.folds * (PROTOCOL.resamples + 1) + 1;
const single = measure(() => simplexNnls(gram(data.X, data.y), { l2: PROTOCOL.l2, prior: OLD, upper: PROTOCOL.upper }));
const g = gram(data.X, data.y);
const gramOnly = measure(() => gram(data.X, data.y));
const solveOnly = summarize(
  Array.from(
    { length: RUNS },
    () =>
      timeSync(() => {
        for (let r = 0; r < 1000; r++) simplexNnls(g, { l2: PROTOCOL.l2, prior: OLD, upper: PROTOCOL.upper });
      }) / 1000,
  ),
);
const score = matVec(data.X, OLD);
const sp = measure(() => spearman(score, data.success));
const kt = measure(() => kendallTauB(score, data.success));

const perFit = (s: Sample): Sample => summarize(s.runs.map((ms) => ms / fits));
const row = (name: string, s: Sample, note: string): string[] => [name, fmtMs(s.median), fmtMs(s.best), note];
console.log(
  table(
    ['what', 'median ms', 'best ms', 'note'],
    [
      row(
        'calibration protocol, constrained NNLS',
        protocol,
        `${fits} fits and ${PROTOCOL.folds * (PROTOCOL.resamples + 2)} held-out scorings`,
      ),
      row('same protocol, unconstrained ridge (baseline)', baseline, 'Cholesky solve in place of the active-set QP'),
      row('  protocol per fit, constrained', perFit(protocol), 'resample + Gram + solve + held-out ρ, τ-b, MAE'),
      row('  protocol per fit, baseline', perFit(baseline), ''),
      row('one constrained fit, 30 000 rows', single, 'Gram pass + active-set QP'),
      row('Gram pass XᵀX, Xᵀy, 30 000 rows', gramOnly, ''),
      row('active-set QP solve alone (d = 7)', solveOnly, 'mean of 1000 solves'),
      row('Spearman ρ, 30 000 items', sp, 'old-weight score vs success'),
      row('Kendall τ-b, 30 000 items', kt, 'Knight O(n log n), ties in both'),
    ],
  ),
);
console.log(
  `\nconstrained protocol / unconstrained baseline protocol: ${(protocol.median / baseline.median).toFixed(2)}× (medians)`,
);
console.log('');
console.log(
  `peak RSS: ${peakAfter.toFixed(0)} MiB for the whole process (${peakBefore.toFixed(0)} MiB before the protocol ran, ` +
    `RSS then ${rssBefore.toFixed(0)} MiB); growth during the protocol ${(peakAfter - peakBefore).toFixed(0)} MiB`,
);
console.log(loadNote('at end'));
const fmtW = (w: Record<string, number>): string => NAMES.map((n) => w[n]!.toFixed(3)).join(' / ');
console.log(`\nfitted weights (all rows): ${fmtW(result.weights)}  (truth ${TRUTH.join(' / ')})`);
console.log(`unconstrained baseline:    ${fmtW(baselineResult.weights)}`);
console.log(
  `median held-out Spearman with success: fitted ${result.median.metrics.spearman.toFixed(4)}, old ${result.median.prior.spearman.toFixed(4)}; ` +
    `Kendall ${result.median.metrics.kendall.toFixed(4)} vs ${result.median.prior.kendall.toFixed(4)}; ` +
    `MAE ${result.median.metrics.mae.toFixed(4)} vs ${result.median.prior.mae.toFixed(4)}`,
);
const ok = protocol.median <= GOAL_MS;
console.log(
  `\ngoal: protocol ≤ ${GOAL_MS / 1000} s — ${ok ? 'met' : 'NOT met'} (median ${(protocol.median / 1000).toFixed(2)} s)`,
);
