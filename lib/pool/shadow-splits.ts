// The splits of the shadow set that evaluation reports (the shadow run, ppo_eval): overall, by
// task, by difficulty band, by the need for clarification, and their pairwise crossings. A split
// with fewer than `minN` scenarios is not applicable — its statistic would describe a handful of
// items — and says so, with the count and the minimum, instead of giving a number.
import { BUCKETS } from '../difficulty/index.ts';

export interface SplitRow {
  task: string;
  difficulty: string | null;
  needs_clarification: boolean;
}

export interface SplitCount {
  /** e.g. "all", "task=gsm8k", "band=hard", "clarify=yes", "task=hotpotqa,band=hard". */
  split: string;
  n: number;
  status: 'ok' | 'n/a';
  reason?: string;
}

export const SPLITS_DEFINITION =
  'splits: all; task; band (the reasoning difficulty bucket); clarify (needs_clarification yes / no); task×band; task×clarify; band×clarify. A split with fewer scenarios than shadow.min_split_n is n/a (reason given), never a number';

type Key = 'task' | 'band' | 'clarify';
const value = (r: SplitRow, k: Key): string =>
  k === 'task' ? r.task : k === 'band' ? (r.difficulty ?? 'none') : r.needs_clarification ? 'yes' : 'no';

/** Every split's count, in a fixed order (tasks as given, bands easy → hard, clarify yes → no). */
export function shadowSplits(rows: readonly SplitRow[], tasks: readonly string[], minN: number): SplitCount[] {
  const values: Record<Key, string[]> = { task: [...tasks], band: [...BUCKETS], clarify: ['yes', 'no'] };
  const groups: Key[][] = [
    [],
    ['task'],
    ['band'],
    ['clarify'],
    ['task', 'band'],
    ['task', 'clarify'],
    ['band', 'clarify'],
  ];
  const out: SplitCount[] = [];
  for (const keys of groups) {
    let combos: string[][] = [[]];
    for (const k of keys) combos = combos.flatMap((c) => values[k].map((v) => [...c, v]));
    for (const combo of combos) {
      const n = rows.filter((r) => keys.every((k, i) => value(r, k) === combo[i])).length;
      const split = keys.length === 0 ? 'all' : keys.map((k, i) => `${k}=${combo[i]}`).join(',');
      out.push(
        n >= minN
          ? { split, n, status: 'ok' }
          : {
              split,
              n,
              status: 'n/a',
              reason: `${n} scenarios, fewer than shadow.min_split_n = ${minN}: too few to report a statistic`,
            },
      );
    }
  }
  return out;
}
