// Difficulty-aware scenario sampling for training (docs/rc1.md, target train):
//   seed draws      with probability seed_ratio(step) (seed_ratio_schedule: the ratio of the last
//                   entry whose step <= the current step), a scenario of the balanced seed pool:
//                   a difficulty bucket by sampling.by_difficulty (easy .2 / medium .4 / hard .4,
//                   renormalised over the buckets present), then a scenario uniformly within it
//   priority draws  otherwise, a (task, difficulty) bucket with weight ∝ its failure rate
//                   1 − ŝ_b (ŝ_b: an exponential moving average of the bucket's episode success,
//                   rate success_ema, starting at 0.5) plus 0.05, each bucket's share capped at
//                   low_perf_cap (the excess goes to the other buckets in proportion), then a
//                   scenario uniformly within it — so the policy practises where it fails without
//                   one failing bucket taking over
// With ppo.priority_sampling.enable false, every episode is a uniform draw from the training
// scenarios. All draws use the run's TrainRng; the success estimates are the sampler's
// checkpointed state.
import type { JsonValue } from 'rc1-build';
import type { TrainConfig } from '../config.ts';
import { seedRatioAt } from '../config.ts';
import type { TrainRng } from '../rng.ts';
import type { EnvScenario } from './scenario-spec.ts';

const DIFFS = ['easy', 'medium', 'hard'] as const;
const FLOOR = 0.05;

/**
 * Shares proportional to the weights, none above `cap`: capped entries get exactly `cap` and the
 * rest share what is left in proportion to their weights (water-filling). When the positive
 * weights cannot carry the mass under the cap (fewer than 1 / cap of them), every entry gets 1 / n.
 */
export function capShares(weights: readonly number[], cap: number): number[] {
  const n = weights.length;
  const positive = weights.filter((w) => w > 0).length;
  if (positive === 0 || positive * cap < 1) return weights.map(() => 1 / n);
  const capped = new Set<number>();
  for (;;) {
    const free = weights.flatMap((w, i) => (w > 0 && !capped.has(i) ? [i] : []));
    const mass = 1 - cap * capped.size;
    const total = free.reduce((a, i) => a + weights[i]!, 0);
    const over = free.filter((i) => (mass * weights[i]!) / total > cap);
    if (over.length === 0) return weights.map((w, i) => (capped.has(i) ? cap : w > 0 ? (mass * w) / total : 0));
    for (const i of over) capped.add(i);
  }
}

export class ScenarioSampler {
  private readonly byDiff: Map<string, EnvScenario[]>;
  private readonly buckets: string[];
  private readonly byBucket: Map<string, EnvScenario[]>;
  private success: Map<string, number>;

  constructor(
    private readonly scenarios: readonly EnvScenario[],
    private readonly cfg: TrainConfig['sampling'],
  ) {
    if (scenarios.length === 0) throw new Error('internal error: ScenarioSampler needs scenarios; please report this');
    this.byDiff = new Map();
    this.byBucket = new Map();
    for (const s of scenarios) {
      const d = s.difficulty ?? 'medium';
      this.byDiff.set(d, [...(this.byDiff.get(d) ?? []), s]);
      const b = `${s.task}/${d}`;
      this.byBucket.set(b, [...(this.byBucket.get(b) ?? []), s]);
    }
    this.buckets = [...this.byBucket.keys()].sort();
    this.success = new Map(this.buckets.map((b) => [b, 0.5]));
  }

  /** Draws one training scenario at a step; `seed` says which kind of draw it was. */
  draw(step: number, rng: TrainRng): { spec: EnvScenario; seed: boolean } {
    if (!this.cfg.enabled) return { spec: this.scenarios[rng.int(this.scenarios.length)]!, seed: true };
    const ratio = seedRatioAt(this.cfg.seed_ratio_schedule, step);
    if (rng.next() < ratio) {
      const present = DIFFS.filter((d) => this.byDiff.has(d));
      const w = present.map((d) => this.cfg.by_difficulty[d]);
      const diff = present[w.some((x) => x > 0) ? rng.pick(w) : rng.int(present.length)]!;
      const pool = this.byDiff.get(diff)!;
      return { spec: pool[rng.int(pool.length)]!, seed: true };
    }
    const shares = capShares(
      this.buckets.map((b) => 1 - this.success.get(b)! + FLOOR),
      this.cfg.low_perf_cap,
    );
    const pool = this.byBucket.get(this.buckets[rng.pick(shares)]!)!;
    return { spec: pool[rng.int(pool.length)]!, seed: false };
  }

  /** Updates the bucket's success estimate after an episode. */
  record(spec: EnvScenario, success: boolean): void {
    const b = `${spec.task}/${spec.difficulty ?? 'medium'}`;
    const prev = this.success.get(b)!;
    this.success.set(b, prev + this.cfg.success_ema * ((success ? 1 : 0) - prev));
  }

  state(): JsonValue {
    return Object.fromEntries(this.buckets.map((b) => [b, this.success.get(b)!]));
  }

  restore(s: JsonValue): void {
    const o = s as Record<string, number>;
    for (const b of this.buckets) {
      const v = o[b];
      if (typeof v !== 'number') throw new Error(`checkpoint sampler state has no success estimate for bucket ${b}`);
      this.success.set(b, v);
    }
  }

  get size(): number {
    return this.scenarios.length;
  }
}
