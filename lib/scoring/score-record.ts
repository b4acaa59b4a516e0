// The records the scores target writes, and reading them back (later targets, the gates):
//   data/scores/scores.jsonl         one ScoreRecord per rollout, in rollout order: the median per
//                                    dimension, the per-dimension population variance, the item
//                                    variance (their max), unstable flag and weight, and every
//                                    sample with its provenance (provider, model, live, billable,
//                                    cached) — or, for a failed item, status "failed", null scores,
//                                    weight 0, and each failed sample's error
//   reports/unstable_samples.jsonl   one UnstableItemRecord per unstable item
// Keys are built in a fixed order; nothing depends on the clock, so the heuristic path gives
// byte-identical files. stabilityCheck is the per-stage stability gate check.
import { readFile } from 'node:fs/promises';
import { check, type Check } from 'rc1-build';
import type { Rollout } from '../rollouts/index.ts';
import { aggregateSamples, type AggregateOptions } from './aggregate.ts';
import { PROMPT_VERSION } from './judge-prompt.ts';
import { RUBRIC_VERSION } from './rubric.ts';
import type { ItemResult } from './score-items.ts';
import type { DimScores, Provenance } from './types.ts';

export type SampleRecord =
  | ({ index: number; ok: true } & Provenance & { cached: boolean; scores: DimScores })
  | { index: number; ok: false; error: string; attempts: number; retryable: boolean };

export interface ScoreRecord {
  rollout_id: string;
  scenario_id: string;
  task: Rollout['task'];
  difficulty: Rollout['difficulty'];
  source: Rollout['source'];
  policy: string;
  candidate_index: number;
  success: boolean;
  item_hash: string;
  rubric_version: string;
  prompt_version: string;
  status: 'scored' | 'failed';
  scores: DimScores | null;
  variance: DimScores | null;
  item_variance: number | null;
  unstable: boolean;
  weight: number;
  samples: SampleRecord[];
}

export interface UnstableItemRecord {
  rollout_id: string;
  scenario_id: string;
  task: Rollout['task'];
  item_hash: string;
  item_variance: number;
  worst_dimension: string;
  variance: DimScores;
  scores: DimScores;
  sample_scores: DimScores[];
  weight: number;
}

export function toScoreRecord(
  res: ItemResult,
  o: AggregateOptions,
): { record: ScoreRecord; unstable: UnstableItemRecord | null } {
  const r = res.item.rollout;
  const samples: SampleRecord[] = [];
  res.samples.forEach((s, index) => {
    if (s)
      samples.push({
        index,
        ok: true,
        provider: s.provider,
        model: s.model,
        live: s.live,
        billable: s.billable,
        cached: s.cached,
        scores: s.scores,
      });
  });
  if (res.status === 'failed')
    for (const f of res.failures)
      samples.push({ index: f.sampleIndex, ok: false, error: f.error, attempts: f.attempts, retryable: f.retryable });
  samples.sort((a, b) => a.index - b.index);
  const base = {
    rollout_id: r.rollout_id,
    scenario_id: r.scenario_id,
    task: r.task,
    difficulty: r.difficulty,
    source: r.source,
    policy: r.policy,
    candidate_index: r.candidate_index,
    success: r.success,
    item_hash: res.item.itemHash,
    rubric_version: RUBRIC_VERSION,
    prompt_version: PROMPT_VERSION,
  };
  if (res.status === 'failed') {
    return {
      record: {
        ...base,
        status: 'failed',
        scores: null,
        variance: null,
        item_variance: null,
        unstable: false,
        weight: 0,
        samples,
      },
      unstable: null,
    };
  }
  const agg = aggregateSamples(
    res.samples.map((s) => s.scores),
    o,
  );
  const record: ScoreRecord = {
    ...base,
    status: 'scored',
    scores: agg.median,
    variance: agg.variance,
    item_variance: agg.itemVariance,
    unstable: agg.unstable,
    weight: agg.weight,
    samples,
  };
  const unstable: UnstableItemRecord | null = agg.unstable
    ? {
        rollout_id: r.rollout_id,
        scenario_id: r.scenario_id,
        task: r.task,
        item_hash: res.item.itemHash,
        item_variance: agg.itemVariance,
        worst_dimension: agg.worstDimension,
        variance: agg.variance,
        scores: agg.median,
        sample_scores: res.samples.map((s) => s.scores),
        weight: agg.weight,
      }
    : null;
  return { record, unstable };
}

/** Reads a scores.jsonl written by the scores target (its own format: parsed, not re-validated field by field). */
export async function readScores(file: string): Promise<ScoreRecord[]> {
  const text = await readFile(file, 'utf8');
  const out: ScoreRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const v = JSON.parse(line) as Partial<ScoreRecord>;
    if (
      typeof v.rollout_id !== 'string' ||
      (v.status !== 'scored' && v.status !== 'failed') ||
      !Array.isArray(v.samples)
    ) {
      throw new Error(
        `${file}:${i + 1}: not a score record of the scores target (rollout_id, status, samples expected)`,
      );
    }
    out.push(v as ScoreRecord);
  });
  return out;
}

/** Share of items without a stable score: unstable items plus failed ones, over all items (0 when none). */
export function unstableShare(records: readonly Pick<ScoreRecord, 'status' | 'unstable'>[]): number {
  if (records.length === 0) return 0;
  return records.filter((r) => r.status === 'failed' || r.unstable).length / records.length;
}

/**
 * The stability check of a scale stage: unstable_share (unstable + failed items over all items)
 * <= threshold (config scoring.stability.max_unstable_share). For the data half's stage gates.
 */
export function stabilityCheck(records: readonly Pick<ScoreRecord, 'status' | 'unstable'>[], threshold: number): Check {
  return check(
    'unstable_share',
    unstableShare(records),
    '<=',
    threshold,
    'too many items have unstable or failed scores: re-score them (rc1-build scorecache replay-bad), check the judge temperature, or review the rubric anchors',
  );
}
