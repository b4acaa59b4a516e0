// Renders one source item with a template pack into a ScenarioRender (lib/data/scenario.ts), the
// part of a scenario that does not come from the item: the user turns, role, style, template id
// and, for an under-specified scenario, the clarification exchange. The rng picks, in this order,
// the persona line, the style directive, one tool hint per tool, and for a gap the filler, the ask
// and the reply, for a hint the sentence and its lead-in; the same rng state gives the same
// rendering. The variants (lib/pool/variants.ts) show in the template id, which gets "+hint",
// "+gold" and/or "+split": a hinted rendering opens its first turn with the lead-in and the quoted
// sentence (its own paragraph; never one holding the left-out detail of an under-specified
// scenario); a gold one offers only the supporting documents; a split one sends the problem
// statement (of the under-specified question, when there is a gap) as its own first turn, and the
// template renders the question asked.
import type { Rng } from 'rc1-build';
import type { ScenarioRender, SourceItem, ToolName } from '../data/index.ts';
import {
  fillSlots,
  renderTemplate,
  type Pack,
  type RoleDef,
  type StyleDef,
  type TemplateDef,
} from '../templates/index.ts';
import { tokenize } from '../text/index.ts';
import { applyGap, containsTokens, type GapCandidate } from './find-gaps.ts';
import { splitText, type Hint } from './variants.ts';

export interface RenderChoice {
  id: string;
  template: TemplateDef;
  role: RoleDef;
  style: StyleDef;
  /** The scenario's tools: one tool hint line each, joined by a space. */
  tools: readonly ToolName[];
  /** The detail to leave out (an under-specified scenario), or null. */
  gap: GapCandidate | null;
  /** A hinted rendering: the sentences it may quote and the lead-in lines (one of each is drawn). */
  hint?: { candidates: readonly Hint[]; leadIns: readonly string[] } | null;
  /** A split rendering: the statement (the first turn) and the question asked (the template's {question}). */
  split?: { setup: string; ask: string } | null;
  /** Offer only the supporting documents (the gold-paragraph setting). */
  gold?: boolean;
  rng: Rng;
}

/** A rendering and the sentence it quotes (null when it is not hinted). */
export type PoolRender = ScenarioRender & { hint: Hint | null };

const pick = <T>(xs: readonly T[], rng: Rng): T => xs[rng.int(xs.length)]!;

/**
 * The rendering, or null when the left-out detail would still show in the user turns (a persona
 * or style line happens to contain it): the caller then tries another gap or item.
 */
export function renderScenario(pack: Pack, item: SourceItem, c: RenderChoice): PoolRender | null {
  const persona = pick(c.role.personas, c.rng);
  const style = pick(c.style.directives, c.rng);
  const toolHint = c.tools.map((t) => pick(pack.toolHints[t], c.rng)).join(' ');
  let question = (c.split ? c.split.ask : item.question).trim();
  let setup = c.split ? c.split.setup.trim() : null;
  let clarification: string | null = null;
  let ask: string | null = null;
  if (c.gap) {
    const def = pack.gaps[c.gap.kind];
    const filler = pick(def.fillers, c.rng);
    const gapped = applyGap(item.question, c.gap, filler);
    question = gapped.question.trim();
    if (c.split) {
      const parts = splitText(question);
      if (!parts) return null;
      ({ setup, ask: question } = parts);
    }
    ask = fillSlots(
      pick(def.asks, c.rng),
      { phrase: gapped.phrase },
      ['phrase'],
      `pack ${pack.name}: gaps.${c.gap.kind}.asks`,
    );
    clarification = fillSlots(
      pick(def.replies, c.rng),
      { detail: c.gap.detail },
      ['detail'],
      `pack ${pack.name}: gaps.${c.gap.kind}.replies`,
    );
  }
  const turns = renderTemplate(c.template, { persona, question, style, tool_hint: toolHint });
  let hint: Hint | null = null;
  if (c.hint) {
    const detail = c.gap ? tokenize(c.gap.detail) : null;
    const candidates = detail
      ? c.hint.candidates.filter((h) => !containsTokens(tokenize(h.text), detail))
      : c.hint.candidates;
    if (candidates.length === 0) return null;
    hint = pick(candidates, c.rng);
    turns[0] = `${pick(c.hint.leadIns, c.rng)} "${hint.text}"\n\n${turns[0]}`;
  }
  if (setup !== null) turns.unshift(setup);
  if (c.gap && containsTokens(tokenize(turns.join('\n')), tokenize(c.gap.detail))) return null;
  return {
    id: c.id,
    role: c.role.id,
    style: c.style.id,
    template_id: `${c.template.id}${hint ? '+hint' : ''}${c.gold ? '+gold' : ''}${c.split ? '+split' : ''}`,
    messages: turns.map((content) => ({ role: 'user' as const, content })),
    needs_clarification: c.gap !== null,
    clarification,
    clarifying_question: ask,
    ...(c.gold ? { context: 'supporting' as const } : {}),
    hint,
  };
}
