// How a comparison gate turns a statistic into checks, the same way in every gate (shadow_run,
// weights, overclar_ablation, ppo_eval):
//   nullCheck        negative control: the real statistic must exceed the 95th percentile of its
//                    permutation null (permutation.ts); value = the real statistic, threshold =
//                    the null's p95, and the check's basis says what was permuted.
//   intervalCheck    a bound decided on the cluster-bootstrap interval (cluster-bootstrap.ts):
//                    for '>=' the interval's LOWER bound must clear the threshold (for '<=' the
//                    upper). Three outcomes: pass (the bound clears it); inconclusive (the
//                    estimate clears it but the bound does not: more scenarios could settle it —
//                    a failed check whose hint says about how many); fail (the estimate itself
//                    does not clear it). value = the bound, so a report re-read elsewhere
//                    (round1/round2_pass) recomputes the same pass from value, op and threshold.
//   estimateCheck    a threshold decided on the point estimate, with its interval shown beside.
// Each check carries `basis`: in words, what its value is and how the decision was made.
import { check, notApplicable, type Check } from 'rc1-build';
import type { Interval } from './bootstrap.ts';
import { MAX_UNDEFINED_SHARE, moreClustersNeeded } from './cluster-bootstrap.ts';
import type { PermutationNull } from './permutation.ts';

const fmt = (v: number): string => (Number.isFinite(v) ? String(Number(v.toPrecision(4))) : String(v));

/**
 * The negative-control check of a statistic: real > the permutation null's 95th percentile; n/a
 * (with the reason) when the labels are constant within every group, so no permutation moves them.
 */
export function nullCheck(name: string, p: PermutationNull, hint?: string): Check {
  if (p.degenerate) {
    return notApplicable(
      {
        ...check(`${name}.vs_null_p95`, p.real, '>', p.quantiles.p95),
        basis: `${p.permuted}: constant within every group`,
      },
      `${p.permuted} is constant within every group: no permutation can move a label, so the control cannot tell signal from noise`,
    );
  }
  const c = check(
    `${name}.vs_null_p95`,
    p.real,
    '>',
    p.quantiles.p95,
    hint ??
      `the statistic is no better than with ${p.permuted} shuffled (null p95 ${fmt(p.quantiles.p95)}, p = ${fmt(p.p_value)}): the scores do not track the labels`,
  );
  return {
    ...c,
    basis: `real statistic vs the 95th percentile of ${p.permutations} seeded permutations of ${p.permuted} (p = ${fmt(p.p_value)})`,
  };
}

export type Verdict = 'pass' | 'inconclusive' | 'fail';

export interface IntervalDecision {
  estimate: number;
  interval: Interval;
  /** The number of independent units (clusters) the interval resampled. */
  clusters: number;
  /** What a cluster is, singular, e.g. "scenario" (the default). */
  unit?: string;
}

export interface IntervalCheck extends Check {
  verdict: Verdict;
  estimate: number;
  interval: [number, number];
  /** Inconclusive only: about how many more clusters would let the bound clear the threshold. */
  more_needed?: number;
}

/**
 * A bound decided on the interval (see the module comment). whenInconclusive, if given, is added
 * to the hint of an inconclusive check: where the missing clusters would come from.
 */
export function intervalCheck(
  name: string,
  d: IntervalDecision,
  op: '>=' | '<=',
  threshold: number,
  hint: string,
  whenInconclusive?: string,
): IntervalCheck {
  const unit = d.unit ?? 'scenario';
  const units = `${unit}s`;
  const lower = op === '>=';
  const bound = lower ? d.interval.lo : d.interval.hi;
  const side = lower ? 'lower' : 'upper';
  const c = check(name, bound, op, threshold);
  if (
    Number.isNaN(bound) &&
    Number.isFinite(d.estimate) &&
    d.interval.undefined !== undefined &&
    d.interval.undefined > 0
  ) {
    // The bound is undefined because too many resamples gave no value: no verdict either way.
    return {
      ...c,
      pass: false,
      verdict: 'inconclusive',
      estimate: d.estimate,
      interval: [d.interval.lo, d.interval.hi],
      hint: `inconclusive: the interval is undefined — ${d.interval.undefined} bootstrap resamples gave no value (more than ${100 * MAX_UNDEFINED_SHARE} %); ${whenInconclusive ?? 'more clusters are needed'}`,
      basis: `${side} bound of the ${Math.round(d.interval.level * 100)} % ${unit}-level (cluster) bootstrap interval: undefined (${d.interval.undefined} undefined resamples); estimate ${fmt(d.estimate)}`,
    };
  }
  const estimateClears = lower ? d.estimate >= threshold : d.estimate <= threshold;
  const verdict: Verdict = c.pass ? 'pass' : estimateClears ? 'inconclusive' : 'fail';
  const more = verdict === 'inconclusive' ? moreClustersNeeded(d.estimate, bound, threshold, d.clusters) : undefined;
  const pct = Math.round(d.interval.level * 100);
  const why =
    verdict === 'inconclusive'
      ? `inconclusive: the estimate ${fmt(d.estimate)} clears ${fmt(threshold)} but the ${side} bound of its ${pct} % interval over ${d.clusters} ${units} does not` +
        `${more !== undefined && Number.isFinite(more) ? `; about ${more} more ${units} would be needed if the estimate held` : ''}${whenInconclusive ? ` (${whenInconclusive})` : ''}`
      : hint;
  return {
    ...c,
    ...(c.pass ? {} : { hint: why }),
    basis: `${side} bound of the ${pct} % ${unit}-level (cluster) bootstrap interval [${fmt(d.interval.lo)}, ${fmt(d.interval.hi)}]; estimate ${fmt(d.estimate)}`,
    verdict,
    estimate: d.estimate,
    interval: [d.interval.lo, d.interval.hi],
    ...(more !== undefined ? { more_needed: more } : {}),
  };
}

/** A threshold decided on the point estimate; the interval, when given, is shown in the basis. */
export function estimateCheck(
  name: string,
  estimate: number,
  op: '>=' | '<=' | '>' | '<',
  threshold: number,
  hint: string,
  interval?: Interval,
  unit = 'scenario',
): Check {
  const c = check(name, estimate, op, threshold, hint);
  const iv = interval
    ? `; ${Math.round(interval.level * 100)} % ${unit}-level bootstrap interval [${fmt(interval.lo)}, ${fmt(interval.hi)}] (reported, not decided on)`
    : '';
  return { ...c, basis: `point estimate${iv}` };
}
