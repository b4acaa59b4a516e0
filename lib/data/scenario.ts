// Scenarios (docs/rc1.md "Data model"): a source item rendered as a conversation opening, with the
// documents the wiki tool can return, the tools offered, the gold answer, what the user reveals
// if asked, and the expert reference trajectory. The shadow set renders the plain question
// (plainRender); the seed pool passes its template renderings to buildScenario. Objects are
// built with their keys in one fixed order, so JSON.stringify gives byte-identical lines.
//
// Context:   hotpotqa  every paragraph (supporting and distractor), text = sentences joined
//            strategyqa each fact as a document titled with the question's term
//            gsm8k     none
// Reference: gsm8k     per solution step: its calc calls (from <<expr=result>>), then the step
//            hotpotqa  a wiki call per supporting title (in order of the supporting facts)
//            strategyqa the decomposition steps
//            each preceded by the clarification exchange when the scenario needs one, and
//            closed by final_answer = the gold answer.
import type { SourceItem, Task } from './source-item.ts';

export type ToolName = 'wiki' | 'calc';

export interface Message {
  role: 'user';
  content: string;
}

export interface ContextDoc {
  id: string;
  title: string;
  text: string;
  /** Whether the document supports the answer (HotpotQA supporting paragraphs, all StrategyQA facts). */
  supporting: boolean;
}

export type ReferenceStep =
  | { type: 'clarify'; ask: string; reply: string }
  | { type: 'tool_call'; tool: ToolName; input: string; output: string }
  | { type: 'thought'; text: string };

export interface Reference {
  steps: ReferenceStep[];
  final_answer: string;
}

export interface Scenario {
  id: string;
  task: Task;
  source_id: string;
  /** The persona of the user ("user" for the plain rendering). */
  role: string;
  style: string;
  template_id: string;
  /** The rendered user turns. */
  messages: Message[];
  context: ContextDoc[];
  tools: ToolName[];
  gold_answer: string;
  needs_clarification: boolean;
  /** What the user reveals if asked; null when no clarification is needed. */
  clarification: string | null;
  reference: Reference;
}

/** How a template rendered an item: everything of a scenario that does not come from the item. */
export interface ScenarioRender {
  id: string;
  role: string;
  style: string;
  template_id: string;
  messages: Message[];
  needs_clarification: boolean;
  clarification: string | null;
  /** The assistant's clarifying question in the reference; set exactly when needs_clarification. */
  clarifying_question: string | null;
  /** 'supporting': the wiki tool offers only the documents that support the answer (the gold-paragraph setting); absent: every document. */
  context?: 'supporting';
}

/** The plain rendering used by the shadow set: the question as the single user turn. */
export function plainRender(item: SourceItem, id: string): ScenarioRender {
  return {
    id,
    role: 'user',
    style: 'plain',
    template_id: 'plain_v0',
    messages: [{ role: 'user', content: item.question }],
    needs_clarification: false,
    clarification: null,
    clarifying_question: null,
  };
}

/** The documents the wiki tool can return for an item. */
export function scenarioContext(item: SourceItem): ContextDoc[] {
  switch (item.task) {
    case 'gsm8k':
      return [];
    case 'hotpotqa': {
      const supporting = new Set(item.supporting.map((s) => s.title));
      return item.paragraphs.map((p, i) => ({
        id: `p${i + 1}`,
        title: p.title,
        text: p.sentences.join('').trim(),
        supporting: supporting.has(p.title),
      }));
    }
    case 'strategyqa':
      return item.facts.map((fact, i) => ({ id: `fact${i + 1}`, title: item.term, text: fact, supporting: true }));
  }
}

export function scenarioTools(task: Task): ToolName[] {
  return task === 'gsm8k' ? ['calc'] : ['wiki'];
}

/** The expert trajectory for an item, opened by the clarification exchange when one is given. */
export function buildReference(
  item: SourceItem,
  context: readonly ContextDoc[],
  clarify: { ask: string; reply: string } | null,
): Reference {
  const steps: ReferenceStep[] = [];
  if (clarify) steps.push({ type: 'clarify', ask: clarify.ask, reply: clarify.reply });
  switch (item.task) {
    case 'gsm8k':
      item.steps.forEach((text, i) => {
        for (const c of item.calc) {
          if (c.step === i) steps.push({ type: 'tool_call', tool: 'calc', input: c.expr, output: c.result });
        }
        steps.push({ type: 'thought', text });
      });
      break;
    case 'hotpotqa': {
      const titles = [...new Set(item.supporting.map((s) => s.title))];
      for (const title of titles) {
        const doc = context.find((d) => d.title === title);
        steps.push({ type: 'tool_call', tool: 'wiki', input: title, output: doc ? doc.text : '' });
      }
      break;
    }
    case 'strategyqa':
      for (const text of item.decomposition) steps.push({ type: 'thought', text });
      break;
  }
  return { steps, final_answer: item.gold_answer };
}

/** Builds a scenario from a source item and a rendering of it. */
export function buildScenario(item: SourceItem, render: ScenarioRender): Scenario {
  const asks = render.needs_clarification;
  if (asks !== (render.clarification !== null) || asks !== (render.clarifying_question !== null)) {
    throw new Error(
      `internal error: scenario ${render.id}: clarification and clarifying_question must be set exactly when needs_clarification; please report this`,
    );
  }
  const all = scenarioContext(item);
  const context = render.context === 'supporting' ? all.filter((d) => d.supporting) : all;
  const clarify = asks ? { ask: render.clarifying_question!, reply: render.clarification! } : null;
  return {
    id: render.id,
    task: item.task,
    source_id: item.source_id,
    role: render.role,
    style: render.style,
    template_id: render.template_id,
    messages: render.messages.map((m) => ({ role: m.role, content: m.content })),
    context,
    tools: scenarioTools(item.task),
    gold_answer: item.gold_answer,
    needs_clarification: asks,
    clarification: render.clarification,
    reference: buildReference(item, context, clarify),
  };
}

/** The shadow set's id for an item: `shadow-<task>-<source_id>`. */
export function shadowScenarioId(item: SourceItem): string {
  return `shadow-${item.task}-${item.source_id}`;
}
