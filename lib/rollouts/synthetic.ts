// The `synthetic` rollout source (the dev default): candidates made by perturbing each
// scenario's reference trajectory with declared error modes at declared rates. Every record says
// `source: "synthetic"`; its error_modes list exactly the perturbations applied.
//
// Rates: each mode is drawn independently for each candidate, with probability = its rate, among
// the candidates it can apply to (a mode that cannot apply is never drawn, so the rate is the
// share of ELIGIBLE candidates that get it):
//   wrong_answer              every candidate: the final answer becomes a plausible wrong one
//                             (gsm8k: the gold number shifted; strategyqa: yes/no flipped;
//                             hotpotqa: a distractor document's title, or the other yes/no),
//                             always checked to fail the task metric
//   missing_tool_call         the reference makes >= 1 tool call: one of them is dropped
//   unnecessary_clarification needs_clarification = false: a needless clarifying exchange opens
//   skipped_clarification     needs_clarification = true: the clarifying exchange is dropped
//   verbosity                 every candidate: filler thoughts (a restatement of the question, a
//                             recap of the reasoning so far, a needless double-check) are inserted
// The modes are orthogonal: only wrong_answer changes the answer, so success is
// "not wrong_answer". Deterministic: candidate c of scenario s draws from mulberry32 seeded by
// FNV-1a("<seed>:<s>#<c>") (one stream for the draws, one per mode for its choices), so a
// candidate does not depend on the other scenarios or on the order of the files.
import { createRng, type Rng } from 'rc1-build';
import { deriveSeed } from '../data/index.ts';
import {
  ERROR_MODES,
  buildRollout,
  copyStep,
  type ErrorMode,
  type Rollout,
  type RolloutScenario,
  type Step,
  type Trajectory,
} from './rollout.ts';
import { extractNumber, hotpotExactMatch, judgeSuccess, parseYesNo } from './success.ts';

export type ErrorRates = Record<ErrorMode, number>;

export interface SyntheticOptions {
  seed: number;
  candidates: number;
  policy: string;
  rates: ErrorRates;
}

/** Whether a mode can apply to a scenario (the denominator of its rate). */
export function eligible(mode: ErrorMode, s: RolloutScenario): boolean {
  switch (mode) {
    case 'wrong_answer':
    case 'verbosity':
      return true;
    case 'missing_tool_call':
      return s.reference.steps.some((x) => x.type === 'tool_call');
    case 'unnecessary_clarification':
      return !s.needs_clarification;
    case 'skipped_clarification':
      return s.needs_clarification && s.reference.steps.some((x) => x.type === 'clarify');
  }
}

const NEEDLESS_ASKS = [
  'Before I answer, could you tell me a bit more about what exactly you are asking?',
  'Just to be sure: do you want the short answer or a detailed explanation?',
  'Could you confirm which part of the question matters most to you?',
  'Do you have any extra details or constraints I should take into account?',
];
const NEEDLESS_REPLIES = [
  'Nothing to add; please just answer the question as asked.',
  'The question says everything; go ahead.',
  'No extra details. Please answer.',
];
const RESTATE = [
  'Let me restate the question to make sure I have it right:',
  'First, restating the task in full:',
  'To begin, here is the question again:',
];
const RECAP = [
  'To recap everything so far:',
  'Summarising the reasoning up to this point:',
  'Going over what I have found once more:',
];
const DOUBLE_CHECK = [
  'Before answering, I will double-check that nothing in the question was overlooked and that every step above is consistent with the others.',
  'Let me pause and verify once more that the steps above really support the answer, and that I have not skipped anything important along the way.',
  'I want to be thorough here, so I will briefly reconsider each assumption I made and confirm that the answer follows from them.',
];

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)]!;
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(4)));
}

/** A plausible wrong final answer that fails the task metric. */
export function wrongAnswer(s: RolloutScenario, rng: Rng): string {
  const fails = (a: string): boolean => !judgeSuccess(s.task, a, s.gold_answer).success;
  const candidates: string[] = [];
  const yn = parseYesNo(s.gold_answer);
  if (s.task === 'gsm8k') {
    const g = extractNumber(s.gold_answer) ?? 0;
    const shifts = [g + 1, g - 1, g + 2, g + 10, g * 2, g / 2, g - 10, g + 0.5];
    candidates.push(...rng.shuffle(shifts.filter((x) => x >= 0 || g < 0)).map(formatNumber));
  } else if (yn !== null && (s.task === 'strategyqa' || normalizedIsYesNo(s.gold_answer))) {
    candidates.push(yn === 'yes' ? 'no' : 'yes');
  } else {
    const distractors = s.context.filter((d) => !d.supporting).map((d) => d.title);
    const others = s.context.filter((d) => d.supporting).map((d) => d.title);
    candidates.push(...rng.shuffle(distractors), ...rng.shuffle(others));
  }
  candidates.push('I could not determine the answer.');
  for (const c of candidates) if (c.trim() !== '' && fails(c) && !hotpotExactMatch(c, s.gold_answer)) return c;
  throw new Error(`internal error: no wrong answer found for scenario ${s.id}; please report`);
}

function normalizedIsYesNo(text: string): boolean {
  const t = text.trim().toLowerCase();
  return t === 'yes' || t === 'no';
}

function insertAt<T>(xs: T[], index: number, x: T): void {
  xs.splice(Math.max(0, Math.min(index, xs.length)), 0, x);
}

/** Applies one mode to a trajectory (steps are copied before any change). */
function apply(mode: ErrorMode, s: RolloutScenario, t: Trajectory, rng: Rng): Trajectory {
  const steps: Step[] = t.steps.map(copyStep);
  switch (mode) {
    case 'wrong_answer':
      return { steps, final_answer: wrongAnswer(s, rng) };
    case 'missing_tool_call': {
      const tools = steps.flatMap((x, i) => (x.type === 'tool_call' ? [i] : []));
      steps.splice(tools[rng.int(tools.length)]!, 1);
      return { steps, final_answer: t.final_answer };
    }
    case 'unnecessary_clarification':
      return {
        steps: [{ type: 'clarify', ask: pick(rng, NEEDLESS_ASKS), reply: pick(rng, NEEDLESS_REPLIES) }, ...steps],
        final_answer: t.final_answer,
      };
    case 'skipped_clarification':
      return { steps: steps.filter((x) => x.type !== 'clarify'), final_answer: t.final_answer };
    case 'verbosity': {
      const question = s.messages.map((m) => m.content).join(' ');
      const firstWork = steps.findIndex((x) => x.type !== 'clarify');
      insertAt(steps, firstWork < 0 ? steps.length : firstWork, {
        type: 'thought',
        text: `${pick(rng, RESTATE)} ${question}`,
      });
      const recap = steps
        .filter((x) => x.type === 'thought')
        .slice(1)
        .map((x) => (x.type === 'thought' ? x.text : ''))
        .join(' ');
      if (recap) steps.push({ type: 'thought', text: `${pick(rng, RECAP)} ${recap}` });
      insertAt(steps, 1 + rng.int(steps.length), { type: 'thought', text: pick(rng, DOUBLE_CHECK) });
      return { steps, final_answer: t.final_answer };
    }
  }
}

/** Candidate `index` of a scenario: the reference with the drawn error modes applied. */
export function syntheticRollout(s: RolloutScenario, index: number, o: SyntheticOptions): Rollout {
  const label = `${s.id}#${index}`;
  const draws = createRng(deriveSeed(o.seed, label));
  const applied: ErrorMode[] = [];
  let t: Trajectory = { steps: s.reference.steps.map(copyStep), final_answer: s.reference.final_answer };
  for (const mode of ERROR_MODES) {
    const u = draws.next(); // always drawn, so one mode's eligibility never shifts another's draw
    if (!eligible(mode, s) || u >= o.rates[mode]) continue;
    t = apply(mode, s, t, createRng(deriveSeed(o.seed, `${label}:${mode}`)));
    applied.push(mode);
  }
  return buildRollout(s, t, { source: 'synthetic', policy: o.policy, candidate_index: index, error_modes: applied });
}

/** o.candidates synthetic rollouts per scenario, in scenario order then candidate order. */
export function syntheticRollouts(scenarios: readonly RolloutScenario[], o: SyntheticOptions): Rollout[] {
  const out: Rollout[] = [];
  for (const s of scenarios) for (let c = 0; c < o.candidates; c++) out.push(syntheticRollout(s, c, o));
  return out;
}
