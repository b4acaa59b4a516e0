// The normalized source item: one question of GSM8K, HotpotQA or StrategyQA with its gold answer
// (always a string) and the task's evidence, whatever file format it was read from. Everything
// downstream (the shadow set, the seed pool, scenarios) works on SourceItems only.
//
// source_id is the dataset's own id, so it is stable across formats and re-downloads:
//   hotpotqa   `_id` (original), `question_id` (IRCoT, the same value) or `id` (Hugging Face)
//   strategyqa `qid`
//   gsm8k      has no id: `gsm8k-<split>-<n>`, n the 1-based line (JSONL), row (Parquet) or array
//              position of the record in its file, split `test` when the file name contains
//              "test" and `train` otherwise. The original train.jsonl and the Hugging Face
//              `main` train export list the records in the same order, so both give the same ids.
import type { Location } from './data-error.ts';

export const TASKS = ['gsm8k', 'hotpotqa', 'strategyqa'] as const;
export type Task = (typeof TASKS)[number];

export function isTask(value: string): value is Task {
  return (TASKS as readonly string[]).includes(value);
}

/** Which layout a record was read from. */
export type SourceFormat =
  | 'gsm8k' // original and Hugging Face are the same layout: question, answer
  | 'hotpotqa-distractor' // official JSON: _id, supporting_facts [[title, sent_id]], context [[title, [sentences]]]
  | 'hotpotqa-ircot' // IRCoT processed: question_id, answers_objects, contexts (paragraph-level support)
  | 'hotpotqa-hf' // Hugging Face hotpot_qa: id, supporting_facts {title[], sent_id[]}, context {title[], sentences[][]}
  | 'strategyqa' // official: qid, term, description, question, answer, facts[], decomposition[], evidence
  | 'strategyqa-hf'; // Hugging Face variants: no evidence, or facts / decomposition as one string

interface SourceBase {
  task: Task;
  source_id: string;
  format: SourceFormat;
  question: string;
  gold_answer: string;
  /** Where the record was read (the file as shown to the user). */
  origin: Location;
}

/** A `<<expr=result>>` calculator annotation of a GSM8K solution. */
export interface CalcCall {
  expr: string;
  result: string;
  /** 0-based index of the solution step (in `steps`) the annotation is in. */
  step: number;
}

export interface Gsm8kItem extends SourceBase {
  task: 'gsm8k';
  /** The solution lines before `#### n`, with the `<<…>>` annotations removed; blank lines dropped. */
  steps: string[];
  calc: CalcCall[];
}

export interface Paragraph {
  title: string;
  /** Sentences as published (after the first they usually start with a space, so join('') gives the paragraph). IRCoT paragraphs are one entry. */
  sentences: string[];
}

export interface SupportingFact {
  title: string;
  /** 0-based sentence index in the titled paragraph; absent for IRCoT records (paragraph-level support). */
  sent_id?: number;
}

export interface HotpotqaItem extends SourceBase {
  task: 'hotpotqa';
  /** All context paragraphs, gold and distractor, in the published order. */
  paragraphs: Paragraph[];
  supporting: SupportingFact[];
  /** 'bridge' | 'comparison'; null where the format does not say (IRCoT). */
  type: string | null;
  /** 'easy' | 'medium' | 'hard'; null where the format does not say (IRCoT). */
  level: string | null;
}

export interface StrategyqaItem extends SourceBase {
  task: 'strategyqa';
  term: string;
  description: string;
  facts: string[];
  /** Sub-questions; later ones refer to earlier answers as #1, #2, … */
  decomposition: string[];
}

export type SourceItem = Gsm8kItem | HotpotqaItem | StrategyqaItem;

/** Orders items by (task, source_id), comparing code units, so the order never depends on locale. */
export function compareSourceItems(a: SourceItem, b: SourceItem): number {
  if (a.task !== b.task) return a.task < b.task ? -1 : 1;
  if (a.source_id !== b.source_id) return a.source_id < b.source_id ? -1 : 1;
  return 0;
}

/** `task/source_id`: unique across tasks. */
export function sourceKey(item: { task: Task; source_id: string }): string {
  return `${item.task}/${item.source_id}`;
}
