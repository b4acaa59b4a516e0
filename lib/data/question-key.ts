// The content identity of a source question: items are the same item when their normalised
// question texts are equal (within a task), whatever their ids or where they were read. The
// normalisation is the project's tokenize() (NFKC, lower case, punctuation and spacing dropped)
// joined by single spaces; the key is the first 16 hex digits of its SHA-256, prefixed by the task.
import { createHash } from 'node:crypto';
import { tokenize } from '../text/tokenize.ts';
import type { Task } from './source-item.ts';

export const QUESTION_KEY_DEFINITION =
  'task/sha256(tokenize(question) joined by single spaces)[0:16]: two records are one item when their normalised questions are equal (case, Unicode forms, punctuation and spacing ignored)';

/** The normalised question text. */
export function normalizeQuestion(question: string): string {
  return tokenize(question).join(' ');
}

/** Keys already computed, per item object (an item is keyed again by every stage that reads it). */
const computed = new WeakMap<object, { task: Task; question: string; key: string }>();

/** `task/<16 hex>`: the item's content identity. */
export function questionKey(item: { task: Task; question: string }): string {
  const known = computed.get(item);
  if (known !== undefined && known.task === item.task && known.question === item.question) return known.key;
  const key = `${item.task}/${createHash('sha256').update(normalizeQuestion(item.question)).digest('hex').slice(0, 16)}`;
  computed.set(item, { task: item.task, question: item.question, key });
  return key;
}
