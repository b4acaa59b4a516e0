// A fixed-seed rendering of a pack on its own, for diversity_report: `count` renderings, each a
// template with a role, a style and one line of each (persona, directive, tool hint). Templates,
// roles and styles are dealt from seeded shuffles that are re-shuffled each time they run out,
// so every template, role and style is used as evenly as the count allows. The {question} slot
// holds no item (the report measures the pack's prose): the text is cut there into separate
// segments, so no n-gram spans the missing question.
import type { Rng } from 'rc1-build';
import { scenarioTools, TASKS, type ToolName } from '../data/index.ts';
import type { Pack } from './load-pack.ts';
import { renderTemplate } from './render-template.ts';
import { tokenize } from '../text/index.ts';

export interface PackRendering {
  /** One document per rendering: its segments (token lists). */
  docs: string[][][];
  roles: string[];
  styles: string[];
  templates: string[];
}

const CUT = '\uE000';

function dealer<T>(xs: readonly T[], rng: Rng): () => T {
  let deck: T[] = [];
  return () => {
    if (deck.length === 0) deck = rng.shuffle(xs);
    return deck.pop()!;
  };
}

export function renderPackSample(pack: Pack, count: number, rng: Rng): PackRendering {
  const nextTemplate = dealer(pack.templates, rng);
  const nextRole = dealer(pack.roles, rng);
  const nextStyle = dealer(pack.styles, rng);
  const categoryOf = new Map<string, string>();
  for (const [c, ts] of Object.entries(pack.templatesByCategory)) for (const t of ts) categoryOf.set(t.id, c);
  const out: PackRendering = { docs: [], roles: [], styles: [], templates: [] };
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
  for (let i = 0; i < count; i++) {
    const template = nextTemplate();
    const role = nextRole();
    const style = nextStyle();
    const category = categoryOf.get(template.id)!;
    const tasks = TASKS.filter((t) => pack.categories[t] === category);
    const tools: ToolName[] = scenarioTools(pick(tasks.length > 0 ? tasks : TASKS));
    const turns = renderTemplate(template, {
      persona: pick(role.personas),
      style: pick(style.directives),
      tool_hint: tools.map((t) => pick(pack.toolHints[t])).join(' '),
      question: CUT,
    });
    out.docs.push(turns.flatMap((turn) => turn.split(CUT).map(tokenize)).filter((seg) => seg.length > 0));
    out.roles.push(role.id);
    out.styles.push(style.id);
    out.templates.push(template.id);
  }
  return out;
}
