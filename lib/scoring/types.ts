// The scoring contract: the seven reward dimensions, what a provider is asked and answers, and
// what a score record says about where it came from. Rollouts, providers, the score cache and the
// rate limiter all meet here; change it only with every side in view.

/** The seven reward dimensions, each scored in [0, 1] (see rubric.ts for their definitions). */
export const DIMENSIONS = [
  'correctness',
  'reasoning',
  'clarity',
  'conciseness',
  'clarification',
  'tool_use',
  'format_safety',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export type DimScores = Record<Dimension, number>;

/** One judge call: item k of a rollout, sample index s (K = 3 distinct samples per item). */
export interface ScoreRequest {
  /** sha256 of the rollout's canonical JSON: the cache key's content part. */
  itemHash: string;
  sampleIndex: number;
  rubricVersion: string;
  promptVersion: string;
  temperature: number;
  /** The judge prompt (system + user messages), already rendered from the rollout and rubric. */
  messages: { role: 'system' | 'user'; content: string }[];
  /** Deterministic inputs for the heuristic provider (no prompt parsing). */
  rollout: unknown;
}

/** Where a score came from: every record says it, so a rule-based score is never passed off as live. */
export interface Provenance {
  provider: string;
  model: string;
  live: boolean;
  billable: boolean;
}

export interface ScoreSample extends Provenance {
  scores: DimScores;
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  /** True when this sample was served from the score cache (nothing billed now). */
  cached: boolean;
}

export type ScoreOutcome =
  | { ok: true; sample: ScoreSample }
  | { ok: false; error: string; attempts: number; retryable: boolean };

export interface Provider extends Provenance {
  score(req: ScoreRequest, signal: AbortSignal): Promise<ScoreOutcome>;
}
