// The `heuristic` provider: the dev profile's embedded scorer, no network, no key. It is a rule,
// not a judge: every sample says `provider: "heuristic", live: false, billable: false`, and prod
// refuses it. It implements the rubric's anchors (rubric.ts) from the gold answer and the
// trajectory (success is recomputed here from the final answer and the gold answer):
//   correctness   gsm8k / strategyqa: 1 if the task metric passes, else 0; hotpotqa: 1 on exact
//                 match, else the official token F1 (partial credit)
//   reasoning     coverage × (0.6 + 0.4 × correctness), coverage = min(1, (tool calls + thoughts)
//                 / the reference's)
//   clarity       answer directness (0 none, 0.5 buried in prose, 1 direct) − 0.5 × the share of
//                 thoughts that repeat the question or another step
//   conciseness   from words / reference words r: 1 up to r = 1.25, 0.5 at r = 2, 0 from r = 3
//   clarification needed: asked once 1, more 0.5, never 0; not needed: never 1, once 0.5, more 0
//   tool_use      needed n, made m: min(m, n)/n − 0.15 per call beyond n (n = 0: 1 − 0.25 m)
//   format_safety the answer's form only (number / yes-no / short phrase: 1; wrapped in prose: 0.5;
//                 none or wrong form: 0) — there is no safety classifier here
// Samples: the K samples of an item differ deterministically by sample index. Each dimension's
// score gets jitter uniform in ±A, A = jitter + ambiguity_jitter × ambiguity, drawn from mulberry32
// seeded by FNV-1a("<sampleIndex>:<itemHash>:<dimension>"); ambiguity ∈ [0, 1] is high where the
// evidence is borderline (4p(1−p) for a partial F1, coverage or length score p), the way live
// judges disagree most on borderline items. So the median and variance of K samples behave as
// they do for a live judge (borderline items can come out unstable) while staying byte-for-byte
// reproducible. Scores are clamped to [0, 1] and rounded to 4 decimals; latency and tokens are 0
// (a computed score is not timed: see score-items.ts).
import { createRng } from 'rc1-build';
import { deriveSeed } from '../data/index.ts';
import {
  judgeSuccess,
  normalizeAnswer,
  parseYesNo,
  extractNumber,
  countWords,
  type Rollout,
} from '../rollouts/index.ts';
import { DIMENSIONS, type DimScores, type Provider, type ScoreOutcome } from './types.ts';

export const HEURISTIC_PROVIDER = 'heuristic';
/** The heuristic's version: part of its cache keys and provenance; bump with any rule change. */
export const HEURISTIC_MODEL = 'heuristic-v1';

export interface HeuristicOptions {
  /** Base jitter amplitude for every dimension. */
  jitter: number;
  /** Extra amplitude at full ambiguity. */
  ambiguityJitter: number;
}

const clamp = (x: number): number => Math.min(1, Math.max(0, x));
const borderline = (p: number): number => 4 * p * (1 - p);

/** Whether `text` repeats earlier material: it contains the question or an earlier step (of 20+ characters). */
function repeats(text: string, earlier: readonly string[]): boolean {
  const t = text.toLowerCase();
  return earlier.some((e) => e.length >= 20 && t.includes(e.toLowerCase()));
}

function answerForm(r: Rollout): number {
  const a = r.trajectory.final_answer.trim();
  if (a === '') return 0;
  switch (r.task) {
    case 'gsm8k': {
      if (extractNumber(a) === null) return 0;
      return /^[$€£]?\s*-?[\d,]*\.?\d+\s*[%a-zA-Z$€£.]{0,12}$/.test(a) ? 1 : 0.5;
    }
    case 'strategyqa': {
      const n = normalizeAnswer(a);
      if (n === 'yes' || n === 'no') return 1;
      return parseYesNo(a) !== null ? 0.5 : 0;
    }
    case 'hotpotqa':
      return countWords(a) <= Math.max(8, 2 * countWords(r.gold_answer)) ? 1 : 0.5;
  }
}

/** The rule-based scores of a rollout (before jitter) and how borderline each is. */
export function heuristicBase(r: Rollout): { scores: DimScores; ambiguity: DimScores } {
  const steps = r.trajectory.steps;
  const ref = r.reference_stats;
  const { success, f1 } = judgeSuccess(r.task, r.trajectory.final_answer, r.gold_answer);
  const correctness = success ? 1 : (f1 ?? 0);

  const thoughts = steps.flatMap((s) => (s.type === 'thought' ? [s.text] : []));
  const tools = steps.filter((s) => s.type === 'tool_call').length;
  const asks = steps.filter((s) => s.type === 'clarify').length;
  const coverage = ref.work_steps === 0 ? 1 : Math.min(1, (tools + thoughts.length) / ref.work_steps);
  const reasoning = coverage * (0.6 + 0.4 * correctness);

  const question = r.messages.map((m) => m.content);
  let repeated = 0;
  thoughts.forEach((t, i) => {
    if (repeats(t, [...question, ...thoughts.slice(0, i)])) repeated++;
  });
  const repShare = thoughts.length === 0 ? 0 : repeated / thoughts.length;
  const form = answerForm(r);
  const clarity = clamp((form === 0 ? 0 : form === 1 ? 1 : 0.5) - 0.5 * repShare);

  const ratio = r.words / Math.max(1, ref.words);
  const conciseness =
    ratio <= 1.25 ? 1 : ratio <= 2 ? 1 - (0.5 * (ratio - 1.25)) / 0.75 : clamp(0.5 - 0.5 * (ratio - 2));

  const clarification = r.needs_clarification
    ? asks === 0
      ? 0
      : asks === 1
        ? 1
        : 0.5
    : asks === 0
      ? 1
      : asks === 1
        ? 0.5
        : 0;

  const n = ref.tool_calls;
  const toolCoverage = n === 0 ? 1 : Math.min(tools, n) / n;
  const tool_use = n === 0 ? clamp(1 - 0.25 * tools) : clamp(toolCoverage - 0.15 * Math.max(0, tools - n));

  const scores: DimScores = {
    correctness,
    reasoning,
    clarity,
    conciseness,
    clarification,
    tool_use,
    format_safety: form,
  };
  const ambiguity: DimScores = {
    correctness: r.task === 'hotpotqa' && !success ? borderline(f1 ?? 0) : 0,
    reasoning: borderline(coverage),
    clarity: repShare > 0 ? 0.25 : 0,
    conciseness: borderline(conciseness),
    clarification: !r.needs_clarification && asks === 1 ? 0.5 : 0,
    tool_use: borderline(toolCoverage) * 0.5,
    format_safety: form === 0.5 ? 0.5 : 0,
  };
  return { scores, ambiguity };
}

/** heuristicBase per rollout object: the K samples of an item share it. */
const bases = new WeakMap<Rollout, ReturnType<typeof heuristicBase>>();

/** One sample: the base scores with the sample's seeded jitter. */
export function heuristicSample(r: Rollout, itemHash: string, sampleIndex: number, o: HeuristicOptions): DimScores {
  let base = bases.get(r);
  if (!base) {
    base = heuristicBase(r);
    bases.set(r, base);
  }
  const { scores, ambiguity } = base;
  const out = {} as DimScores;
  for (const d of DIMENSIONS) {
    const u = createRng(deriveSeed(sampleIndex, `${itemHash}:${d}`)).next();
    const amplitude = o.jitter + o.ambiguityJitter * ambiguity[d];
    out[d] = Math.round(clamp(scores[d] + amplitude * (2 * u - 1)) * 10_000) / 10_000;
  }
  return out;
}

function isRollout(x: unknown): x is Rollout {
  const r = x as Partial<Rollout> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.task === 'string' &&
    typeof r.trajectory === 'object' &&
    typeof r.reference_stats === 'object'
  );
}

/** The heuristic provider (see the head of this file). */
export function createHeuristicProvider(o: HeuristicOptions): Provider {
  return {
    provider: HEURISTIC_PROVIDER,
    model: HEURISTIC_MODEL,
    live: false,
    billable: false,
    score(req): Promise<ScoreOutcome> {
      if (!isRollout(req.rollout)) {
        return Promise.resolve({
          ok: false,
          error: 'heuristic provider: the request carries no rollout to score',
          attempts: 1,
          retryable: false,
        });
      }
      const scores = heuristicSample(req.rollout, req.itemHash, req.sampleIndex, o);
      return Promise.resolve({
        ok: true,
        sample: {
          provider: HEURISTIC_PROVIDER,
          model: HEURISTIC_MODEL,
          live: false,
          billable: false,
          scores,
          latencyMs: 0,
          promptTokens: 0,
          completionTokens: 0,
          cached: false,
        },
      });
    },
  };
}
