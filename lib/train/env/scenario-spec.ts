// What the dialogue environment (dialogue-env.ts) needs from one scenario, read once from the
// scenario's data: which detail a clarification reveals, which documents a wiki call can return,
// which arithmetic steps a calc call reveals, and what "needed" means for it.
//
// Needed, per task (the answer succeeds only when all of it was gathered):
//   clarification  exactly when the scenario's needs_clarification is true (the user's reply is
//                  the scenario's `clarification`)
//   wiki           hotpotqa: one call per supporting article, in the reference's order;
//                  strategyqa: one call per distinct title of its supporting facts (the facts are
//                  stored as documents titled with the question's term, so usually one call)
//   calc           gsm8k: one call per calc step of the reference (each reveals the expression,
//                  its result and the reasoning sentence that uses it)
// The reference's remaining thoughts (strategyqa's decomposition, gsm8k sentences with no calc)
// are the reasoning the answer turn writes once everything needed is known.
import type { Scenario, Task } from '../../data/index.ts';
import { referenceStats, type Difficulty, type ReferenceStats, type RolloutScenario } from '../../rollouts/index.ts';
import { agentView, type AgentView } from './features.ts';

export interface WikiDoc {
  title: string;
  text: string;
}
export interface CalcStep {
  expr: string;
  result: string;
  thoughts: string[];
}

export interface EnvScenario {
  readonly scenario: RolloutScenario;
  readonly id: string;
  readonly task: Task;
  readonly difficulty: Difficulty | null;
  readonly needsClarification: boolean;
  /** The reference's clarifying question (null when none is needed). */
  readonly clarifyAsk: string | null;
  /** The supporting articles a wiki call returns, in order. */
  readonly wiki: readonly WikiDoc[];
  /** Articles a search returns while the request is still missing its detail (non-supporting context). */
  readonly distractors: readonly WikiDoc[];
  readonly calc: readonly CalcStep[];
  /** Thoughts the answer turn writes when everything needed is known. */
  readonly answerThoughts: readonly string[];
  readonly finalAnswer: string;
  readonly refStats: ReferenceStats;
  /** What the agent sees of the request (features.ts agentView: its words and text features), computed once. */
  readonly view: AgentView;
  /** A number written in the request (the last one), for a premature gsm8k answer; null when none. */
  readonly lastNumber: string | null;
  /** gsm8k needing a clarification: the number the request leaves out (the first number of the user's reply); else null. */
  readonly detailNumber: number | null;
  /**
   * Pages of the other scenarios of the same task (scenarioSpecs): what a search returns for a
   * scenario with no distractor page of its own when it cannot find the page it needs — a search
   * engine's unrelated hits. Shared by every scenario of the task; a draw skips the scenario's own
   * source question's pages. Empty for a spec built alone (scenarioSpec).
   */
  readonly offTopic: readonly OffTopicDoc[];
}

/** A page of some scenario, with the source question it belongs to. */
export interface OffTopicDoc extends WikiDoc {
  readonly source: string;
}

function wikiDocs(s: Scenario): WikiDoc[] {
  switch (s.task) {
    case 'hotpotqa':
      return s.reference.steps.flatMap((st) =>
        st.type === 'tool_call' && st.tool === 'wiki' ? [{ title: st.input, text: st.output }] : [],
      );
    case 'strategyqa': {
      const byTitle = new Map<string, string[]>();
      for (const d of s.context) if (d.supporting) byTitle.set(d.title, [...(byTitle.get(d.title) ?? []), d.text]);
      return [...byTitle].map(([title, texts]) => ({ title, text: texts.join(' ') }));
    }
    case 'gsm8k':
      return [];
  }
}

function calcSteps(s: Scenario): { calc: CalcStep[]; loose: string[] } {
  const calc: CalcStep[] = [];
  const loose: string[] = [];
  for (const st of s.reference.steps) {
    if (st.type === 'tool_call' && st.tool === 'calc') calc.push({ expr: st.input, result: st.output, thoughts: [] });
    else if (st.type === 'thought') {
      const last = calc[calc.length - 1];
      if (last && s.task === 'gsm8k') last.thoughts.push(st.text);
      else loose.push(st.text);
    }
  }
  return { calc, loose };
}

function detailNumber(s: RolloutScenario): number | null {
  if (s.task !== 'gsm8k' || !s.needs_clarification || !s.clarification) return null;
  const m = /\d[\d,]*(?:\.\d+)?/.exec(s.clarification);
  return m ? Number(m[0].replace(/,/g, '')) : null;
}

export function scenarioSpec(s: RolloutScenario): EnvScenario {
  const clarify = s.reference.steps.find((st) => st.type === 'clarify');
  const { calc, loose } = calcSteps(s);
  const request = s.messages.map((m) => m.content).join('\n');
  const numbers = request.match(/\d[\d,]*(?:\.\d+)?/g);
  const supportingTitles = new Set(s.context.filter((d) => d.supporting).map((d) => d.title));
  return {
    scenario: s,
    id: s.id,
    task: s.task,
    difficulty: s.difficulty ?? null,
    needsClarification: s.needs_clarification,
    clarifyAsk: clarify && clarify.type === 'clarify' ? clarify.ask : null,
    wiki: wikiDocs(s),
    distractors: s.context.filter((d) => !supportingTitles.has(d.title)).map((d) => ({ title: d.title, text: d.text })),
    calc: s.task === 'gsm8k' ? calc : [],
    answerThoughts: loose,
    finalAnswer: s.reference.final_answer,
    refStats: referenceStats(s),
    view: agentView(s),
    lastNumber: numbers ? numbers[numbers.length - 1]!.replace(/,/g, '') : null,
    detailNumber: detailNumber(s),
    offTopic: [],
  };
}

/**
 * The specs of a set of scenarios (the pool a run trains on, the held-out set ppo_eval plays),
 * each given the set's off-topic pages of its task: every distinct page (supporting or not) of
 * every scenario of that task, in the set's order. They depend on the set, never on a scenario's
 * label, so a request that misses its detail and a complete one draw from the same pages.
 */
export function scenarioSpecs(list: readonly RolloutScenario[]): EnvScenario[] {
  const specs = list.map(scenarioSpec);
  const byTask = new Map<Task, OffTopicDoc[]>();
  const seen = new Set<string>();
  for (const sp of specs) {
    const docs = byTask.get(sp.task) ?? [];
    byTask.set(sp.task, docs);
    for (const d of [...sp.wiki, ...sp.distractors]) {
      const key = `${sp.task}\u0000${d.title}\u0000${d.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      docs.push({ title: d.title, text: d.text, source: sp.scenario.source_id });
    }
  }
  return specs.map((sp) => ({ ...sp, offTopic: byTask.get(sp.task) ?? [] }));
}
