// Where every threshold of the comparison gates comes from, and how each is decided. Reports
// carry these entries beside the values (key `thresholds`), and docs/gates.md is the same table
// for readers. Sources are described in words: the RC1 specification (its per-target table), the
// team's planning notes (Phase 2 of the evaluation plan), or a design decision taken for RC1's
// statistical soundness, with the reasoning.
export interface Provenance {
  /** The config key the value is read from. */
  key: string;
  /** Where the value comes from, in words. */
  from: string;
  /** How the gate decides on it: point estimate, interval bound, or permutation null. */
  decided_on: string;
}

const SPEC = 'RC1 specification, target table';
const PLAN = 'planning notes, evaluation Phase 2';
const DESIGN = 'design decision (gates that tell signal from noise)';
const LOWER = 'lower bound of the scenario-level (cluster) bootstrap interval';
const _UPPER = 'upper bound of the scenario-level (cluster) bootstrap interval';
const QLOWER = 'lower bound of the source-question-level (cluster) bootstrap interval';
const QUPPER = 'upper bound of the source-question-level (cluster) bootstrap interval';
const NULL = 'real statistic > 95th percentile of its permutation null';

export const PROVENANCE = {
  'shadow_run.min_spearman_old_new': {
    key: 'shadow_run.min_spearman_old_new',
    from: `${SPEC}, shadow_run: Spearman(old, new) ≥ .75 (${PLAN} A)`,
    decided_on: LOWER,
  },
  'shadow_run.top_overlap.min': {
    key: 'shadow_run.top_overlap.min',
    from: `${SPEC}, shadow_run: top-10 % overlap ≥ .70 (${PLAN} A)`,
    decided_on: LOWER,
  },
  'shadow_run.min_success_rank_corr_gain': {
    key: 'shadow_run.min_success_rank_corr_gain',
    from: `${SPEC}, shadow_run: the new reward's correlation with success ≥ 10 % above the old score's (${PLAN} A)`,
    decided_on: LOWER,
  },
  'shadow_run.min_success_rank_corr': {
    key: 'shadow_run.min_success_rank_corr',
    from: `${DESIGN}: an absolute floor beside the relative gain, so a gain over a correlation near zero does not count; .30 is a moderate rank association (Cohen's medium effect), below which the reward explains under a tenth of the rank variance of success`,
    decided_on: LOWER,
  },
  'calibration.min_rank_corr_gain': {
    key: 'calibration.min_rank_corr_gain',
    from: `${SPEC}, weights: median held-out rank correlation with success ≥ 8 % above the old weights' (${PLAN} B)`,
    decided_on: QLOWER,
  },
  'calibration.max_mae_change': {
    key: 'calibration.max_mae_change',
    from: `${SPEC}, weights: held-out MAE at least 5 % below the old weights' (${PLAN} B)`,
    decided_on: QUPPER,
  },
  'calibration.min_rank_corr': {
    key: 'calibration.min_rank_corr',
    from: `${DESIGN}: the absolute floor beside the 8 % gain, the same value and reasoning as shadow_run.min_success_rank_corr`,
    decided_on: QLOWER,
  },
  'calibration.max_single_dimension_agreement': {
    key: 'calibration.max_single_dimension_agreement',
    from: `${DESIGN}: a judge dimension that alone agrees with success on more than this share of items is reading the label (leakage), not judging the trajectory; a failure in prod, a visible waiver in dev, whose heuristic judge sees the reference answer`,
    decided_on: 'best single-threshold agreement of the dimension with success over all items (point value)',
  },
  'calibration.max_weight': {
    key: 'calibration.max_weight',
    from: `${SPEC}, weights: each weight ≤ .5, all ≥ 0, sum 1 (${PLAN} B)`,
    decided_on: 'the shipped weights (enforced by the solver, checked)',
  },
  'overclar.ablation.min_relative_drop': {
    key: 'overclar.ablation.min_relative_drop',
    from: `${SPEC}, overclar_ablation: over-clarification rate down ≥ 20 % relative (${PLAN} C)`,
    decided_on: QLOWER,
  },
  'overclar.ablation.min_absolute_drop_pp': {
    key: 'overclar.ablation.min_absolute_drop_pp',
    from: `${DESIGN}: an absolute floor beside the relative drop, so a relative drop of a rate already near zero does not count; 1 pp, the same materiality scale the specification uses for success (not worse by > 1 pp)`,
    decided_on: 'point estimate (interval reported)',
  },
  'overclar.ablation.max_turns_increase': {
    key: 'overclar.ablation.max_turns_increase',
    from: `${SPEC}, overclar_ablation: average turns not up (${PLAN} C)`,
    decided_on:
      'point estimate (interval reported): a bound at 0 would demand a significant decrease, more than "not up"',
  },
  'overclar.ablation.max_success_drop_pp': {
    key: 'overclar.ablation.max_success_drop_pp',
    from: `${SPEC}, overclar_ablation: success not worse by > 1 pp (${PLAN} C)`,
    decided_on: `${LOWER} (non-inferiority with a 1 pp margin)`,
  },
  'statistics.permutations': {
    key: 'statistics.permutations',
    from: `${DESIGN}: negative controls in every comparison gate; 200 seeded permutations of the labels (within task), enough to place a 95th percentile to about ±.01 in correlation`,
    decided_on: NULL,
  },
} as const satisfies Record<string, Provenance>;

export type ThresholdKey = keyof typeof PROVENANCE;

/** The report entry of a threshold: its value, where it comes from and how it is decided. */
export function threshold(key: ThresholdKey, value: unknown): Provenance & { value: unknown; see: string } {
  return { ...PROVENANCE[key], value, see: 'docs/gates.md' };
}
