// The judge prompt: a rollout and the rubric rendered as Chat Completions messages that ask a
// live judge for one strict JSON object {"correctness": n, "reasoning": n, …} with the seven
// dimensions in [0, 1] and nothing else (the live provider validates the answer). The system
// message holds the rubric and the output contract; the user message the task, the reference
// answer and counts, and the candidate's trajectory. PROMPT_VERSION is part of every score-cache
// key: bump it with any change to what this module renders. Rendering is deterministic.
import type { Rollout, Step } from '../rollouts/index.ts';
import { RUBRIC_VERSION, rubricText } from './rubric.ts';
import { DIMENSIONS } from './types.ts';

export const PROMPT_VERSION = 'rc1-judge-v1';

export interface JudgeMessage {
  role: 'system' | 'user';
  content: string;
}

/** Tool outputs longer than this are cut in the prompt (the judge needs their gist, not every word). */
export const MAX_TOOL_OUTPUT_CHARS = 600;

const TASK_NAMES: Record<Rollout['task'], string> = {
  gsm8k: 'math word problem (the answer is a number)',
  hotpotqa: 'multi-hop question (the answer is a short entity or phrase, or yes/no)',
  strategyqa: 'yes/no question needing implicit multi-step reasoning (the answer is yes or no)',
};

let systemPrompt: string | null = null;

/** The system message: the same for every rollout (built once). */
export function judgeSystemPrompt(): string {
  systemPrompt ??= buildSystemPrompt();
  return systemPrompt;
}

function buildSystemPrompt(): string {
  const example = `{${DIMENSIONS.map((d) => `"${d}": 0.0`).join(', ')}}`;
  return [
    "You are a strict, consistent grader of an AI assistant's attempt at a task.",
    `Score the attempt on each of the seven dimensions below (rubric ${RUBRIC_VERSION}), each a number from 0 to 1; use the anchors, and values between them where the attempt is between them.`,
    '',
    rubricText(),
    '',
    'Answer with exactly one JSON object with these seven keys and numbers as values, and nothing else: no prose, no code fence, no extra keys.',
    `Example of the form: ${example}`,
  ].join('\n');
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

function renderStep(s: Step, i: number): string {
  const n = `${i + 1}.`;
  switch (s.type) {
    case 'clarify':
      return `${n} [asks the user] ${s.ask}\n   [user replies] ${s.reply}`;
    case 'tool_call':
      return `${n} [calls ${s.tool}] ${s.input}\n   [${s.tool} returns] ${cut(s.output, MAX_TOOL_OUTPUT_CHARS)}`;
    case 'thought':
      return `${n} [thinks] ${s.text}`;
  }
}

export function judgeUserPrompt(r: Rollout): string {
  const steps = r.trajectory.steps.length > 0 ? r.trajectory.steps.map(renderStep).join('\n') : '(no steps)';
  const ref = r.reference_stats;
  return [
    `Task type: ${TASK_NAMES[r.task]}`,
    `Tools available to the assistant: ${r.tools.length > 0 ? r.tools.join(', ') : 'none'}`,
    '',
    'The user wrote:',
    ...r.messages.map((m) => `> ${m.content.replace(/\n/g, '\n> ')}`),
    '',
    r.needs_clarification
      ? `This request is missing information; a good assistant asks for it. If asked, the user reveals: ${r.clarification ?? '(nothing)'}`
      : 'This request is complete as written; no clarifying question is needed.',
    `Reference answer: ${r.gold_answer}`,
    `An expert solution made ${ref.tool_calls} tool call(s) and ${ref.work_steps} reasoning step(s) in about ${ref.words} words.`,
    '',
    "The assistant's attempt:",
    steps,
    `Final answer: ${r.trajectory.final_answer === '' ? '(none)' : r.trajectory.final_answer}`,
    '',
    'Score the attempt now, as one JSON object.',
  ].join('\n');
}

/** The judge messages for a rollout: system (rubric, output contract) and user (task and attempt). */
export function renderJudgeMessages(r: Rollout): JudgeMessage[] {
  return [
    { role: 'system', content: judgeSystemPrompt() },
    { role: 'user', content: judgeUserPrompt(r) },
  ];
}
