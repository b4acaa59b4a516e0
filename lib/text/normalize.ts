// Normalisation for duplicate detection: the text's `tokenize` tokens joined by single spaces
// (so case, Unicode compatibility forms, punctuation and spacing never make two texts differ).
import { tokenize } from './tokenize.ts';

export function normalizeText(text: string): string {
  return tokenize(text).join(' ');
}
