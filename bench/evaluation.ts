// Evaluation benchmark: the weights gate's calibration (5-fold CV grouped by scenario, 200
// scenario-level bootstrap resamples of the whole CV, 200-permutation negative control, per-
// dimension baselines and the leakage measure: the shipped configs/evaluation.yaml settings) on
// 30 000 scored items, and the shadow run (scenario bootstrap and negative controls) on 245
// scenarios' rollouts, with times and peak memory. The items are RESAMPLED from real heuristic
// scores: whole scenarios (all N candidates, their rollout and score records unchanged) are drawn
// with replacement from the pool's scored rollouts and given new ids, until there are 30 000
// items (7 500 scenarios × 4) and 245 scenarios; the shadow items keep their pool buckets.
// Each row runs in its own Node process (so its peak RSS is its own), 3 runs each (1 with
// --quick); times exclude module loading; beside the wall time, the process's CPU time (user +
// system) for the same work, which other load on the machine inflates far less. Baselines in the
// same run: reading the 30 000 items alone, one constrained fit on all rows, the same protocol
// with the unconstrained ridge fit, the protocol with ROWS as the resampled unit and no negative
// control, and a process that only loads the modules (the RSS floor).
// Run: node --import tsx bench/evaluation.ts [--quick] [--scores FILE --rollouts FILE]
// (default inputs: data/scores/scores.jsonl + data/rollouts/pool_rollouts.jsonl, else the
// first scale stage's under data/rollouts/stages/).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createRng } from 'rc1-build';
import {
  SCORE_DIMENSIONS,
  calibrate,
  normalise,
  readItems,
  shadowRun,
  type EvalItem,
} from '../lib/evaluation/index.ts';
import { calibrateWeights, gram, matrix, simplexNnls } from '../lib/stats/index.ts';
import { fmtMs, hasFlag, loadNote, machineReport, summarize, table } from './util.ts';

const ROOT = join(fileURLToPath(import.meta.url), '../..');
const GOAL_MS = 10_000;
const N_ITEMS = 30_000;
const N_SHADOW = 245;
const flag = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const config = (): Record<string, any> =>
  Object.assign({}, ...['evaluation.yaml'].map((f) => parse(readFileSync(join(ROOT, 'configs', f), 'utf8'))));
const peakMiB = (): number => process.resourceUsage().maxRSS / 1024;

interface PhaseOut {
  read_ms: number;
  work_ms: number;
  cpu_ms: number;
  peak_mib: number;
  note: string;
}

/** One row's work, in a child process: reads its items, times the computation. */
async function phase(name: string, dir: string): Promise<PhaseOut> {
  const cfg = config();
  const old = normalise(cfg.reward.old_weights);
  if (name === 'load')
    return { read_ms: 0, work_ms: 0, cpu_ms: 0, peak_mib: peakMiB(), note: 'modules loaded, nothing read' };
  const file = name === 'shadow' ? 'shadow' : 'pool';
  let t = performance.now();
  const { items } = await readItems([join(dir, `${file}_rollouts.jsonl`)], join(dir, `${file}_scores.jsonl`), dir);
  const readMs = performance.now() - t;
  const data = (xs: readonly EvalItem[]) => {
    const X = matrix(xs.length, 7, Float64Array.from(xs.flatMap((it) => SCORE_DIMENSIONS.map((d) => it.scores[d]))));
    const y = Float64Array.from(xs, (it) => (it.success ? 1 : 0));
    return {
      X,
      y,
      success: y,
      prior: SCORE_DIMENSIONS.map((d) => old[d]),
      names: SCORE_DIMENSIONS,
      rowWeights: Float64Array.from(xs, (it) => it.weight),
    };
  };
  const grouped = (xs: readonly EvalItem[]) => ({
    ...data(xs),
    groups: xs.map((it) => it.scenario_id),
    strata: xs.map((it) => it.task),
  });
  const stats = cfg.statistics as { permutations: number; bootstrap_resamples: number; level: number; seed: number };
  const c = cfg.calibration;
  t = performance.now();
  const cpu0 = process.cpuUsage();
  let note = `${items.length} items`;
  switch (name) {
    case 'read':
      break;
    case 'calibration': {
      const r = calibrate(items, old, c, stats, 'dev');
      const iv = r.calibration.bootstrap.metrics.spearman;
      note +=
        `; weights ${SCORE_DIMENSIONS.map((d) => r.calibration.weights[d]!.toFixed(3)).join(' / ')}; ρ gain ${(100 * (r.report.rank_corr_gain as number)).toFixed(1)} %` +
        `; held-out ρ interval width ${(iv.hi - iv.lo).toFixed(4)} over ${r.calibration.bootstrap.groups} scenarios`;
      break;
    }
    case 'one-fit': {
      const d = data(items);
      simplexNnls(gram(d.X, d.y), { l2: c.l2, prior: d.prior, upper: c.max_weight, loss: c.loss });
      break;
    }
    case 'ridge': {
      calibrateWeights(grouped(items), {
        folds: c.folds,
        resamples: c.resamples,
        seed: c.seed,
        l2: c.l2,
        upper: c.max_weight,
        loss: c.loss,
        solver: 'least-squares',
      });
      break;
    }
    case 'rows': {
      const r = calibrateWeights(data(items), {
        folds: c.folds,
        resamples: c.resamples,
        seed: c.seed,
        l2: c.l2,
        upper: c.max_weight,
        loss: c.loss,
      });
      const iv = r.bootstrap.metrics.spearman;
      note += `; held-out ρ interval width ${(iv.hi - iv.lo).toFixed(4)} over ${r.bootstrap.groups} rows`;
      break;
    }
    case 'shadow': {
      const weights = {
        correctness: 0.5,
        reasoning: 0.29,
        clarity: 0.05,
        conciseness: 0.06,
        clarification: 0.045,
        tool_use: 0.015,
        format_safety: 0.04,
      };
      const r = shadowRun(
        items,
        old,
        { weights, penalty: { alpha: cfg.overclar.alpha, cap: cfg.overclar.cap }, beta: cfg.reward.beta },
        cfg.shadow_run,
        stats,
      );
      note += `, ${String(r.report.scenarios)} scenarios; ${r.checks.length} checks`;
      break;
    }
    default:
      throw new Error(`bench/evaluation.ts: unknown phase ${name}`);
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    read_ms: readMs,
    work_ms: performance.now() - t,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    peak_mib: peakMiB(),
    note,
  };
}

/** Where the real scored pool rollouts are. */
function sources(): { scores: string; rollouts: string } {
  const given = { scores: flag('--scores'), rollouts: flag('--rollouts') };
  if (given.scores && given.rollouts) return { scores: given.scores, rollouts: given.rollouts };
  const candidates = [join(ROOT, 'data')];
  const stages = join(ROOT, 'data/rollouts/stages');
  if (existsSync(stages))
    for (const s of readdirSync(stages).sort((a, b) => Number(a) - Number(b))) candidates.push(join(stages, s));
  for (const c of candidates) {
    const pair = c.endsWith('data')
      ? { scores: join(c, 'scores/scores.jsonl'), rollouts: join(c, 'rollouts/pool_rollouts.jsonl') }
      : { scores: join(c, 'scores.jsonl'), rollouts: join(c, 'pool_rollouts.jsonl') };
    if (existsSync(pair.scores) && existsSync(pair.rollouts)) return pair;
  }
  throw new Error(
    'bench/evaluation.ts: no scored pool rollouts: build them first (npx rc1-build scores), or pass --scores and --rollouts',
  );
}

/** Writes <dir>/<name>_{rollouts,scores}.jsonl: whole scenarios drawn with replacement, new ids, until `items` items (or `scenarios` scenarios). */
function resample(
  src: { scores: string; rollouts: string },
  dir: string,
  name: string,
  want: { items?: number; scenarios?: number },
  seed: number,
): number {
  const score = new Map<string, string>();
  for (const line of readFileSync(src.scores, 'utf8').split('\n'))
    if (line) score.set((JSON.parse(line) as { rollout_id: string }).rollout_id, line);
  type Line = Record<string, unknown> & { rollout_id: string; scenario_id: string; candidate_index: number };
  const groups = new Map<string, Line[]>();
  for (const line of readFileSync(src.rollouts, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line) as Line;
    if (!score.has(r.rollout_id)) continue;
    groups.set(r.scenario_id, [...(groups.get(r.scenario_id) ?? []), r]);
  }
  const pool = [...groups.values()];
  const rng = createRng(seed);
  const rollouts: string[] = [];
  const scores: string[] = [];
  for (
    let s = 0;
    (want.items === undefined || rollouts.length < want.items) && (want.scenarios === undefined || s < want.scenarios);
    s++
  ) {
    for (const r of pool[rng.int(pool.length)]!) {
      if (want.items !== undefined && rollouts.length >= want.items) break;
      // Each drawn copy is its own source question, so the number of groups the bench times is the number of copies.
      const ids = {
        rollout_id: `${name}-${s}#${r.candidate_index}`,
        scenario_id: `${name}-${s}`,
        source_id: `${name}-${s}`,
      };
      rollouts.push(JSON.stringify({ ...r, ...ids }));
      scores.push(JSON.stringify({ ...(JSON.parse(score.get(r.rollout_id)!) as object), ...ids }));
    }
  }
  writeFileSync(join(dir, `${name}_rollouts.jsonl`), `${rollouts.join('\n')}\n`);
  writeFileSync(join(dir, `${name}_scores.jsonl`), `${scores.join('\n')}\n`);
  return rollouts.length;
}

async function main(): Promise<void> {
  const runs = hasFlag('--quick') ? 1 : 3;
  const src = sources();
  const dir = mkdtempSync(join(tmpdir(), 'rc1-bench-eval-'));
  try {
    console.log('# Evaluation benchmark (calibration and shadow run)\n');
    console.log(machineReport());
    const nPool = resample(src, dir, 'pool', { items: N_ITEMS }, 20250820);
    const nShadow = resample(src, dir, 'shadow', { scenarios: N_SHADOW }, 20250821);
    const c = config().calibration;
    const s = config().statistics as { permutations: number; bootstrap_resamples: number };
    console.log(
      `data: RESAMPLED from the real heuristic scores of ${src.scores.replace(`${ROOT}/`, '')} (whole scenarios drawn with replacement, new ids): ` +
        `${nPool} pool items; ${N_SHADOW} shadow scenarios (${nShadow} rollouts)`,
    );
    console.log(
      `protocol: ${c.folds}-fold CV grouped by scenario × ${c.resamples} scenario-level bootstrap resamples of the whole CV, ${s.permutations} permutations, l2 ${c.l2} (loss ${c.loss}), each weight ≤ ${c.max_weight}, seed ${c.seed}; ${runs} run(s) per row, each in its own process\n`,
    );
    const rows: [string, string, string][] = [
      ['load', 'baseline: load the modules only', 'RSS floor'],
      ['read', 'baseline: read + join 30 000 items', 'rollouts and scores JSONL'],
      ['one-fit', 'baseline: one constrained fit, 30 000 rows', 'Gram pass + box-simplex QP'],
      ['ridge', 'baseline: protocol, unconstrained ridge fit', `${c.folds * (c.resamples + 1) + 1} Cholesky fits`],
      [
        'rows',
        'baseline: protocol, rows resampled, no null',
        `${c.folds * (c.resamples + 1) + c.resamples + 1} constrained fits`,
      ],
      [
        'calibration',
        'calibration (weights gate): scenario bootstrap + null',
        `${c.folds * (c.resamples + 1 + s.permutations) + c.resamples + 1} constrained fits + held-out ρ, τ-b, MAE, 7 baselines, leakage`,
      ],
      [
        'shadow',
        `shadow run, ${N_SHADOW} scenarios`,
        `scenario means, ρ, τ-b, top-k, test-retest, splits, ${s.bootstrap_resamples} scenario resamples, 2 × ${s.permutations} permutations`,
      ],
    ];
    const out: string[][] = [];
    let calibrationMs = NaN;
    let calibrationCpuMs = NaN;
    for (const [name, what, note] of rows) {
      const res: PhaseOut[] = [];
      for (let i = 0; i < runs; i++) {
        const r = spawnSync(
          process.execPath,
          [...process.execArgv, fileURLToPath(import.meta.url), '--phase', name, '--dir', dir],
          { encoding: 'utf8', maxBuffer: 1 << 24 },
        );
        if (r.status !== 0) throw new Error(`phase ${name} exited ${r.status}\n${r.stderr}`);
        res.push(JSON.parse(r.stdout.trim().split('\n').pop()!) as PhaseOut);
      }
      const work = summarize(res.map((x) => x.work_ms));
      const read = summarize(res.map((x) => x.read_ms));
      const cpu = summarize(res.map((x) => x.cpu_ms));
      if (name === 'calibration') {
        calibrationMs = work.median;
        calibrationCpuMs = cpu.median;
      }
      const none = name === 'load' || name === 'read';
      out.push([
        what,
        name === 'load' ? '-' : fmtMs(read.median),
        none ? '-' : fmtMs(work.median),
        none ? '-' : fmtMs(work.best),
        none ? '-' : fmtMs(cpu.median),
        Math.max(...res.map((x) => x.peak_mib)).toFixed(0),
        `${note}; ${res[0]!.note}`,
      ]);
    }
    console.log(
      table(
        [
          'what',
          'read ms (median)',
          'compute ms (median)',
          'compute ms (best)',
          'compute CPU ms (median)',
          'peak RSS MiB',
          'note',
        ],
        out,
      ),
    );
    console.log(`\n${loadNote('at end')}`);
    console.log(
      `goal: calibration ≤ ${GOAL_MS / 1000} s — ${calibrationMs <= GOAL_MS ? 'met' : 'NOT met'} (compute median ${(calibrationMs / 1000).toFixed(2)} s wall, ${(calibrationCpuMs / 1000).toFixed(2)} s CPU, reading the items excluded;` +
        ' on a loaded machine the CPU time is the closer measure of the work, the wall time of the wait)',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const p = flag('--phase');
if (p) console.log(JSON.stringify(await phase(p, flag('--dir')!)));
else await main();
