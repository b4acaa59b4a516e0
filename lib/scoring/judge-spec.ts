// Everything that can change a judge's score, as one hash in every score-cache key: the rendered
// prompt template (the system message, and the user messages rendered for a set of probe
// rollouts of each task that takes every branch of the template: any wording change shows), the rubric text, provider, model, endpoint,
// temperature, top-p, max tokens, response format, K, and the prompt, rubric and answer-parser
// versions. Changing any one of them gives new keys, so the items are scored again instead of
// being served stale scores. The cache's prompt field is `<PROMPT_VERSION>+spec.<12 hex>`, so
// `rc1-build scorecache stat` lists the spec hashes present.
import { createHash } from 'node:crypto';
import type { Rollout } from '../rollouts/index.ts';
import { canonicalJson } from 'rc1-build';
import { MAX_TOOL_OUTPUT_CHARS, PROMPT_VERSION, judgeSystemPrompt, judgeUserPrompt } from './judge-prompt.ts';
import { RUBRIC_VERSION, rubricText } from './rubric.ts';

/** Bump with any change to how a judge's answer is parsed into scores. */
export const PARSER_VERSION = 'rc1-parser-v1';

export interface JudgeSpecInput {
  provider: string;
  model: string;
  /** Base URL of a live endpoint; null for the embedded heuristic judge. */
  endpoint: string | null;
  temperature: number;
  /** null: not sent (the endpoint's default). */
  topP: number | null;
  /** null: not sent (the heuristic judge). */
  maxTokens: number | null;
  responseFormat: string | null;
  k: number;
}

export interface JudgeSpec extends JudgeSpecInput {
  promptVersion: string;
  rubricVersion: string;
  parserVersion: string;
  promptTemplateSha256: string;
  rubricSha256: string;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

const PROBE_STEPS = [
  { type: 'clarify', ask: '{ask}', reply: '{reply}' },
  { type: 'tool_call', tool: 'calc', input: '{input}', output: '{output}' },
  { type: 'thought', text: '{thought}' },
];
/** A tool output one character over the cut, so the cut and its "… [n more characters]" are rendered. */
const LONG_OUTPUT = (max: number): string => '{output}'.padEnd(max + 1, 'x');

/**
 * Probe rollouts of a task that, together, render every branch of the user message: a request
 * that needs clarification (with a reply, and with none: "(nothing)") and one complete as
 * written; steps of each kind, a tool output longer than MAX_TOOL_OUTPUT_CHARS (cut) and no steps
 * ("(no steps)"); tools and no tools ("none"); a final answer and none ("(none)").
 */
export function probeRollouts(task: Rollout['task']): Rollout[] {
  const probe = (o: {
    tools: string[];
    clarify: boolean;
    clarification: string | null;
    steps: unknown[];
    answer: string;
  }): Rollout =>
    ({
      task,
      tools: o.tools,
      messages: [{ role: 'user', content: '{question}' }],
      needs_clarification: o.clarify,
      clarification: o.clarification,
      gold_answer: '{gold}',
      reference_stats: { tool_calls: 1, work_steps: 1, words: 1 },
      trajectory: { steps: o.steps, final_answer: o.answer },
    }) as unknown as Rollout;
  return [
    probe({ tools: ['wiki', 'calc'], clarify: true, clarification: '{reply}', steps: PROBE_STEPS, answer: '{answer}' }),
    probe({
      tools: ['calc'],
      clarify: true,
      clarification: null,
      steps: [{ type: 'tool_call', tool: 'calc', input: '{input}', output: LONG_OUTPUT(MAX_TOOL_OUTPUT_CHARS) }],
      answer: '{answer}',
    }),
    probe({ tools: [], clarify: false, clarification: null, steps: [], answer: '' }),
  ];
}

let template: string | null = null;
/** The prompt template as rendered: the system message and the user messages of every probe rollout of every task. */
export function promptTemplateText(): string {
  template ??= [
    judgeSystemPrompt(),
    ...(['gsm8k', 'hotpotqa', 'strategyqa'] as const).flatMap((t) => probeRollouts(t).map(judgeUserPrompt)),
  ].join('\n\u0000\n');
  return template;
}

export function judgeSpec(input: JudgeSpecInput): JudgeSpec {
  return {
    ...input,
    promptVersion: PROMPT_VERSION,
    rubricVersion: RUBRIC_VERSION,
    parserVersion: PARSER_VERSION,
    promptTemplateSha256: sha256(promptTemplateText()),
    rubricSha256: sha256(rubricText()),
  };
}

/** The first 12 hex digits of the SHA-256 of the spec's canonical JSON. */
export function specHash(spec: JudgeSpec): string {
  return sha256(canonicalJson(spec)).slice(0, 12);
}

/** The prompt field of the cache key: the prompt version and the spec hash. */
export function promptKey(spec: JudgeSpec): string {
  return `${PROMPT_VERSION}+spec.${specHash(spec)}`;
}
