// The rollout (docs/rc1.md "Data model"): a scenario plus one candidate trajectory from some policy,
// with the task's success computed by success.ts. A rollout carries what judging it needs and
// nothing more: the user turns, the tools offered, the gold answer, whether the scenario needs a
// clarification (and what the user reveals), counts taken from the scenario's reference, and the
// trajectory itself — not the scenario's full context (a wiki call's output is in the trajectory).
// Objects are built with their keys in one fixed order, so JSON.stringify gives identical bytes.
//
// Counts:   turns          assistant turns: one per clarifying question, plus the answer turn
//           clarifications clarify steps; tool_calls: tool_call steps
//           words          whitespace tokens the assistant wrote: clarifying questions, tool
//                          inputs, thoughts and the final answer (tool outputs and user replies
//                          are the environment's, not counted)
// error_modes: for the synthetic source, the perturbations it applied (ground truth); for the
// file and openai sources, the ones detectErrorModes finds in the trajectory.
import type { Message, ReferenceStep, Scenario, Task, ToolName } from '../data/index.ts';
import { judgeSuccess } from './success.ts';

export const ERROR_MODES = [
  'wrong_answer',
  'missing_tool_call',
  'unnecessary_clarification',
  'skipped_clarification',
  'verbosity',
] as const;
export type ErrorMode = (typeof ERROR_MODES)[number];

export const ROLLOUT_SOURCES = ['synthetic', 'file', 'openai'] as const;
export type RolloutSource = (typeof ROLLOUT_SOURCES)[number];

/** A trajectory uses the reference's step types: clarify, tool_call, thought. */
export type Step = ReferenceStep;

export interface Trajectory {
  steps: Step[];
  final_answer: string;
}

/** Counts of the scenario's expert reference, for judging a trajectory against it. */
export interface ReferenceStats {
  tool_calls: number;
  /** Tool calls plus thoughts: the reasoning work of the reference. */
  work_steps: number;
  words: number;
}

export const DIFFICULTIES = ['easy', 'medium', 'hard'] as const;
export type Difficulty = (typeof DIFFICULTIES)[number];

/** A scenario as the rollout sources read it: the balanced pool adds its difficulty bucket. */
export type RolloutScenario = Scenario & { difficulty?: Difficulty };

export interface Rollout {
  rollout_id: string;
  scenario_id: string;
  /** The scenario's source question: several scenarios render one (the evaluation's independent unit). */
  source_id: string;
  task: Task;
  /** The scenario's difficulty bucket (balanced pool); null where the scenario has none (shadow set). */
  difficulty: Difficulty | null;
  source: RolloutSource;
  policy: string;
  candidate_index: number;
  messages: Message[];
  tools: ToolName[];
  gold_answer: string;
  needs_clarification: boolean;
  clarification: string | null;
  reference_stats: ReferenceStats;
  trajectory: Trajectory;
  turns: number;
  clarifications: number;
  tool_calls: number;
  words: number;
  success: boolean;
  /** HotpotQA token F1 (official normalisation); null for the other tasks. */
  f1: number | null;
  error_modes: ErrorMode[];
}

/** A trajectory is "verbose" (detected) when it has more than this many times the reference's words. */
export const VERBOSE_RATIO = 2;

export function countWords(text: string): number {
  const t = text.trim();
  return t === '' ? 0 : t.split(/\s+/u).length;
}

/** Words the assistant wrote in a list of steps plus a final answer. */
export function assistantWords(steps: readonly Step[], finalAnswer: string): number {
  let n = countWords(finalAnswer);
  for (const s of steps) {
    if (s.type === 'clarify') n += countWords(s.ask);
    else if (s.type === 'tool_call') n += countWords(s.input);
    else n += countWords(s.text);
  }
  return n;
}

export function referenceStats(scenario: Pick<Scenario, 'reference'>): ReferenceStats {
  const steps = scenario.reference.steps;
  const tools = steps.filter((s) => s.type === 'tool_call').length;
  return {
    tool_calls: tools,
    work_steps: tools + steps.filter((s) => s.type === 'thought').length,
    words: assistantWords(steps, scenario.reference.final_answer),
  };
}

/** The error modes visible in a trajectory (used for sources that do not say what went wrong). */
export function detectErrorModes(
  r: Pick<Rollout, 'success' | 'needs_clarification' | 'reference_stats' | 'clarifications' | 'tool_calls' | 'words'>,
): ErrorMode[] {
  const out: ErrorMode[] = [];
  if (!r.success) out.push('wrong_answer');
  if (r.tool_calls < r.reference_stats.tool_calls) out.push('missing_tool_call');
  if (!r.needs_clarification && r.clarifications > 0) out.push('unnecessary_clarification');
  if (r.needs_clarification && r.clarifications === 0) out.push('skipped_clarification');
  if (r.words > VERBOSE_RATIO * Math.max(1, r.reference_stats.words)) out.push('verbosity');
  return out;
}

export function rolloutId(scenarioId: string, candidateIndex: number): string {
  return `${scenarioId}#${candidateIndex}`;
}

export interface RolloutMeta {
  source: RolloutSource;
  policy: string;
  candidate_index: number;
  /** Given by the synthetic source; detected from the trajectory when absent. */
  error_modes?: ErrorMode[];
}

/** Builds a rollout: copies what judging needs from the scenario, counts the trajectory, computes success. */
export function buildRollout(scenario: RolloutScenario, trajectory: Trajectory, meta: RolloutMeta): Rollout {
  const steps = trajectory.steps.map(copyStep);
  const clarifications = steps.filter((s) => s.type === 'clarify').length;
  const toolCalls = steps.filter((s) => s.type === 'tool_call').length;
  const { success, f1 } = judgeSuccess(scenario.task, trajectory.final_answer, scenario.gold_answer);
  const rollout: Rollout = {
    rollout_id: rolloutId(scenario.id, meta.candidate_index),
    scenario_id: scenario.id,
    source_id: scenario.source_id,
    task: scenario.task,
    difficulty: scenario.difficulty ?? null,
    source: meta.source,
    policy: meta.policy,
    candidate_index: meta.candidate_index,
    messages: scenario.messages.map((m) => ({ role: m.role, content: m.content })),
    tools: [...scenario.tools],
    gold_answer: scenario.gold_answer,
    needs_clarification: scenario.needs_clarification,
    clarification: scenario.clarification,
    reference_stats: referenceStats(scenario),
    trajectory: { steps, final_answer: trajectory.final_answer },
    turns: clarifications + 1,
    clarifications,
    tool_calls: toolCalls,
    words: assistantWords(steps, trajectory.final_answer),
    success,
    f1,
    error_modes: [],
  };
  rollout.error_modes = meta.error_modes
    ? ERROR_MODES.filter((m) => meta.error_modes!.includes(m))
    : detectErrorModes(rollout);
  return rollout;
}

/** A step with its keys in the fixed order (clarify: ask, reply; tool_call: tool, input, output; thought: text). */
export function copyStep(s: Step): Step {
  switch (s.type) {
    case 'clarify':
      return { type: 'clarify', ask: s.ask, reply: s.reply };
    case 'tool_call':
      return { type: 'tool_call', tool: s.tool, input: s.input, output: s.output };
    case 'thought':
      return { type: 'thought', text: s.text };
  }
}

/**
 * The rollout's canonical JSON (object keys sorted at every level, no whitespace): byte-equal to
 * util/canonical-json.ts canonicalJson(r), built field by field so that hashing 30 000 rollouts
 * stays cheap. Every Rollout field is required, so the compiler rejects a field left out here.
 */
export function rolloutCanonicalJson(r: Rollout): string {
  const sorted: { [K in keyof Rollout]: unknown } = {
    candidate_index: r.candidate_index,
    clarification: r.clarification,
    clarifications: r.clarifications,
    difficulty: r.difficulty,
    error_modes: r.error_modes,
    f1: r.f1,
    gold_answer: r.gold_answer,
    messages: r.messages.map((m) => ({ content: m.content, role: m.role })),
    needs_clarification: r.needs_clarification,
    policy: r.policy,
    reference_stats: {
      tool_calls: r.reference_stats.tool_calls,
      words: r.reference_stats.words,
      work_steps: r.reference_stats.work_steps,
    },
    rollout_id: r.rollout_id,
    scenario_id: r.scenario_id,
    source: r.source,
    source_id: r.source_id,
    success: r.success,
    task: r.task,
    tool_calls: r.tool_calls,
    tools: r.tools,
    trajectory: { final_answer: r.trajectory.final_answer, steps: r.trajectory.steps.map(sortedStep) },
    turns: r.turns,
    words: r.words,
  };
  return JSON.stringify(sorted);
}

function sortedStep(s: Step): unknown {
  switch (s.type) {
    case 'clarify':
      return { ask: s.ask, reply: s.reply, type: s.type };
    case 'tool_call':
      return { input: s.input, output: s.output, tool: s.tool, type: s.type };
    case 'thought':
      return { text: s.text, type: s.type };
  }
}
