// A usage or configuration error (exit 64): a diagnostic with a headline, a location, key: value
// context and a hint (STYLE 22). Thrown by config/ and graph/, printed by report/.
import type { CallSite } from '../api/index.ts';
import { originalSite } from './source-map-site.ts';

export interface Diagnostic {
  headline: string;
  location?: string;
  context?: Record<string, string>;
  hint?: string;
}

export class UsageError extends Error {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic | Diagnostic[]) {
    const list = Array.isArray(diagnostics) ? diagnostics : [diagnostics];
    super(list.map((d) => d.headline).join('; '));
    this.diagnostics = list;
  }
}

/** file:line:col of a declaration, mapped back to the TypeScript source when it was compiled. */
export function siteString(site: CallSite | undefined, root: string): string | undefined {
  if (!site) return undefined;
  const s = originalSite(site);
  return `${relativeTo(root, s.file)}:${s.line}:${s.col}`;
}

function relativeTo(root: string, file: string): string {
  return file.startsWith(root + '/') ? file.slice(root.length + 1) : file;
}

/** Levenshtein distance, for "did you mean" (STYLE 23). */
export function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}
