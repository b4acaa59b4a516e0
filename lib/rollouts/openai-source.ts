// The `openai` rollout source: the policy served by an OpenAI-compatible endpoint (a PolicyClient)
// plays each scenario as an agent, N candidates per scenario. Each turn the policy answers with
// one JSON object (the protocol below, plain text so that any Chat Completions server works, no
// tool-calling support needed); this module plays the environment:
//   {"thought": "...", "action": "ask", "question": "..."}        → the user's reply: the scenario's
//                                                                   clarification, else "no further details"
//   {"thought": "...", "action": "tool", "tool": "wiki"|"calc", "input": "..."}
//                                                                 → wiki: the context document with that
//                                                                   title (exact, then case-insensitive,
//                                                                   then most shared words); calc: calc.ts
//   {"thought": "...", "action": "answer", "answer": "..."}        → the final answer; the episode ends
// A reply that is not such an object (after removing <think>…</think> and code fences) is taken
// as the final answer in prose. An episode that reaches max_steps ends with an empty answer.
// Candidates are independent episodes (seed = FNV-1a("<seed>:<scenario>#<c>") sent as `seed`).
// error_modes are detected from the trajectory (rollout.ts). Output order is scenario order,
// then candidate index, whatever order the calls finish in.
import { deriveSeed, type ContextDoc } from '../data/index.ts';
import { evaluate } from './calc.ts';
import type { ChatMessage, PolicyClient } from './policy-client.ts';
import { buildRollout, type Rollout, type RolloutScenario, type Step } from './rollout.ts';

export const POLICY_PROTOCOL_VERSION = 'rc1-policy-protocol-v1';

export interface OpenAiSourceOptions {
  client: PolicyClient;
  candidates: number;
  seed: number;
  temperature: number;
  maxTokens: number;
  maxSteps: number;
  concurrency: number;
  /** Optional shared rate limiter (the scoring limiter's shape: it passes each attempt its signal). */
  limiter?: { run<T>(fn: (signal: AbortSignal) => Promise<T>, estTokens: number, signal?: AbortSignal): Promise<T> };
  signal: AbortSignal;
  onEpisode?: (done: number, total: number) => void;
}

const NO_DETAILS = 'No further details; please answer the question as asked.';

export function systemPrompt(s: Pick<RolloutScenario, 'tools'>): string {
  const tools = s.tools.map((t) =>
    t === 'wiki'
      ? '- wiki: input a document title; returns that document.'
      : '- calc: input an arithmetic expression; returns its value.',
  );
  return [
    "You are a careful assistant solving the user's task step by step.",
    'Available tools:',
    ...tools,
    'If the request is ambiguous or misses information you need, you may ask the user one clarifying question; do not ask when the task is already clear.',
    'Reply on every turn with exactly one JSON object and nothing else, one of:',
    '{"thought": "<your reasoning>", "action": "ask", "question": "<clarifying question>"}',
    '{"thought": "<your reasoning>", "action": "tool", "tool": "<tool name>", "input": "<tool input>"}',
    '{"thought": "<your reasoning>", "action": "answer", "answer": "<final answer only: a number, yes/no, or a short phrase>"}',
  ].join('\n');
}

export type PolicyAction =
  | { action: 'ask'; thought: string; question: string }
  | { action: 'tool'; thought: string; tool: string; input: string }
  | { action: 'answer'; thought: string; answer: string };

/** The policy's reply as an action, or null when it is not one (then it is a prose answer). */
export function parseAction(content: string): PolicyAction | null {
  const text = stripReply(content);
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let v: unknown;
  try {
    v = JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const str = (k: string): string | null => (typeof o[k] === 'string' ? (o[k] as string) : null);
  const thought = str('thought') ?? '';
  if (o.action === 'ask' && str('question') !== null) return { action: 'ask', thought, question: str('question')! };
  if (o.action === 'tool' && str('tool') !== null && str('input') !== null)
    return { action: 'tool', thought, tool: str('tool')!, input: str('input')! };
  if (o.action === 'answer' && (str('answer') !== null || typeof o.answer === 'number'))
    return { action: 'answer', thought, answer: String(o.answer) };
  return null;
}

/** The reply without reasoning blocks and code fences. */
export function stripReply(content: string): string {
  return content
    .replace(/<think>[\s\S]*?<\/think>/g, '')
    .replace(/^[\s\S]*<\/think>/, '')
    .replace(/```(?:json)?/g, '')
    .trim();
}

const words = (t: string): Set<string> =>
  new Set(
    t
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean),
  );

/** The wiki document for a title: exact, case-insensitive, then the most shared words (ties: first). */
export function lookupDoc(context: readonly ContextDoc[], input: string): ContextDoc | null {
  const q = input.trim();
  const exact = context.find((d) => d.title === q) ?? context.find((d) => d.title.toLowerCase() === q.toLowerCase());
  if (exact) return exact;
  const qw = words(q);
  let best: ContextDoc | null = null;
  let bestN = 0;
  for (const d of context) {
    let n = 0;
    for (const w of words(d.title)) if (qw.has(w)) n++;
    if (n > bestN) {
      best = d;
      bestN = n;
    }
  }
  return best;
}

function toolOutput(s: RolloutScenario, tool: string, input: string): string {
  if (!(s.tools as string[]).includes(tool))
    return `error: tool ${JSON.stringify(tool)} is not available here (available: ${s.tools.join(', ')})`;
  if (tool === 'calc') {
    const r = evaluate(input);
    return r.ok ? r.text : `error: ${r.error}`;
  }
  const doc = lookupDoc(s.context, input);
  return doc ? `${doc.title}: ${doc.text}` : `No document found for ${JSON.stringify(input)}.`;
}

/** Plays one episode of scenario s with candidate index c. */
export async function playEpisode(s: RolloutScenario, c: number, o: OpenAiSourceOptions): Promise<Rollout> {
  const chat: ChatMessage[] = [
    { role: 'system', content: systemPrompt(s) },
    ...s.messages.map((m) => ({ role: 'user' as const, content: m.content })),
  ];
  const steps: Step[] = [];
  let answer = '';
  const seed = deriveSeed(o.seed, `${s.id}#${c}`);
  for (let turn = 0; turn < o.maxSteps; turn++) {
    o.signal.throwIfAborted();
    const est = Math.ceil(chat.reduce((n, m) => n + m.content.length, 0) / 4) + o.maxTokens;
    const call = (signal: AbortSignal): Promise<{ content: string }> =>
      o.client.complete(
        chat,
        { temperature: o.temperature, maxTokens: o.maxTokens, seed: (seed + turn) >>> 0 },
        signal,
      );
    const reply = o.limiter ? await o.limiter.run(call, est, o.signal) : await call(o.signal);
    chat.push({ role: 'assistant', content: reply.content });
    const act = parseAction(reply.content);
    if (!act) {
      answer = stripReply(reply.content);
      break;
    }
    if (act.thought.trim()) steps.push({ type: 'thought', text: act.thought.trim() });
    if (act.action === 'answer') {
      answer = act.answer;
      break;
    }
    if (act.action === 'ask') {
      const replyText = s.clarification ?? NO_DETAILS;
      steps.push({ type: 'clarify', ask: act.question, reply: replyText });
      chat.push({ role: 'user', content: replyText });
    } else {
      const out = toolOutput(s, act.tool, act.input);
      // A call of a tool that does not exist is answered but not recorded as a tool call.
      if (act.tool === 'wiki' || act.tool === 'calc')
        steps.push({ type: 'tool_call', tool: act.tool, input: act.input, output: out });
      chat.push({ role: 'user', content: `Observation from ${act.tool}: ${out}` });
    }
  }
  return buildRollout(
    s,
    { steps, final_answer: answer },
    { source: 'openai', policy: o.client.model, candidate_index: c },
  );
}

/** o.candidates episodes per scenario, at most o.concurrency at a time, in scenario then candidate order. */
export async function openAiRollouts(
  scenarios: readonly RolloutScenario[],
  o: OpenAiSourceOptions,
): Promise<Rollout[]> {
  const jobs = scenarios.flatMap((s) => Array.from({ length: o.candidates }, (_, c) => ({ s, c })));
  const out: Rollout[] = new Array(jobs.length);
  let nextJob = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (nextJob < jobs.length) {
      const j = nextJob++;
      const { s, c } = jobs[j]!;
      try {
        out[j] = await playEpisode(s, c, o);
      } catch (e) {
        nextJob = jobs.length; // one failed episode fails the run: start no more
        throw e;
      }
      o.onEpisode?.(++done, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, jobs.length)) }, worker));
  return out;
}
