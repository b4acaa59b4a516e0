// Negative-control check on the BUILT dev data: runs the shadow_run and weights rules (compiled as
// the engine compiles them) on the real shadow and pool rollouts, then on copies whose success
// labels are shuffled within task (one copy per seed), and prints a line per seed: which gate
// passed, which checks failed. Every shuffled seed should fail both gates on their success checks
// (floor, gain, negative controls); on the real labels those pass. Read-only: the shuffled copies
// and the rules' outputs go to a temp dir.
// Run after `npx rc1-build round2_pass`: node --import tsx scripts/shuffled-labels.ts [SEEDS]
// (SEEDS: how many shuffled seeds, default 12).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRng, type Check } from 'rc1-build';
import { compileRule, runEvalRule, shippedConfig } from '../test/helpers/evaluation-fixtures.ts';

const FILES = {
  shadow: 'data/rollouts/shadow_rollouts.jsonl',
  pool: 'data/rollouts/pool_rollouts.jsonl',
  scores: 'data/scores/scores.jsonl',
  weights: 'configs/weights.json',
  metrics: 'data/shadow_eval_245.metrics.jsonl',
};
for (const f of Object.values(FILES))
  if (!existsSync(f)) throw new Error(`${f} is missing: build the dev pipeline first (npx rc1-build round2_pass)`);
const seeds = Number(process.argv[2] ?? 12);
const cfg = shippedConfig();
const dir = mkdtempSync(join(tmpdir(), 'rc1-shuffled-'));

/** A copy of a rollouts JSONL with success shuffled within task (seeded). */
function shuffled(src: string, seed: number): string {
  const rows = readFileSync(src, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { task: string; success: boolean });
  const rng = createRng(seed);
  for (const task of [...new Set(rows.map((r) => r.task))].sort()) {
    const idx = rows.flatMap((r, i) => (r.task === task ? [i] : []));
    const values = rng.shuffle(idx.map((i) => rows[i]!.success));
    idx.forEach((i, k) => {
      rows[i]!.success = values[k]!;
    });
  }
  const out = join(dir, `seed${seed}_${src.split('/').pop()!}`);
  writeFileSync(out, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return out;
}

const failed = (cs: readonly Check[]): string[] => cs.filter((c) => c.status === 'fail').map((c) => c.name);
try {
  const shadowRule = await compileRule('shadow_run', dir);
  const weightsRule = await compileRule('weights', dir);
  for (let seed = 0; seed <= seeds; seed++) {
    const s = await runEvalRule(shadowRule, {
      params: {
        reward: cfg.reward,
        overclar: cfg.overclar,
        shadow_run: cfg.shadow_run,
        statistics: cfg.statistics,
        difficulty: { bands: cfg.difficulty.bands, dimensions: cfg.difficulty.dimensions },
      },
      root: dir,
      args: { tag: 'check' },
      outputs: ['shadow_run_check.json'],
      inputs: {
        rollouts: [seed ? shuffled(FILES.shadow, seed) : FILES.shadow],
        scores: [FILES.scores],
        weights: [FILES.weights],
        metrics: [FILES.metrics],
      },
    });
    const w = await runEvalRule(weightsRule, {
      params: {
        reward: { old_weights: cfg.reward.old_weights },
        calibration: cfg.calibration,
        statistics: cfg.statistics,
      },
      root: dir,
      outputs: ['weights.json', 'calibration_report.json'],
      inputs: { rollouts: [seed ? shuffled(FILES.pool, seed) : FILES.pool], scores: [FILES.scores] },
    });
    const rho = (s.result.report as { overall: { success: { new: { spearman: number } } } }).overall.success.new
      .spearman;
    const fs = failed(s.result.checks!);
    const fw = failed(w.result.checks!);
    console.log(
      `${seed ? `shuffled seed ${seed}` : 'real labels'}: shadow_run ${fs.length ? 'FAIL' : 'pass'} (ρ(new, success) ${rho.toFixed(3)}${fs.length ? `; failed ${fs.join(', ')}` : ''})` +
        ` | weights ${fw.length ? 'FAIL' : 'pass'}${fw.length ? ` (failed ${fw.join(', ')})` : ''}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
