// The "twin" of a pool scenario under another pack: the same source item, rendered as the same
// kind (plain or under-specified), with a template of the matching category and a role and style
// of that pack drawn by the rng. pool_validation compares the pool's n-gram distribution with
// its twins under pack_v1, so the KL measures what the packs change and not which items happen
// to be sampled (the questions are the same on both sides). A hinted or split pool scenario's twin
// is the plain rendering: the quoted sentence and the split count as differences from pack_v1.
import type { Rng } from 'rc1-build';
import { scenarioTools, type SourceItem } from '../data/index.ts';
import type { Pack } from '../templates/index.ts';
import { findGaps } from './find-gaps.ts';
import { renderScenario } from './render-scenario.ts';

/** The user turns of the twin rendering; null when no gap of the item renders under this pack. */
export function renderTwin(pack: Pack, item: SourceItem, clarify: boolean, rng: Rng): string[] | null {
  const category = clarify ? pack.clarifyCategory : pack.categories[item.task];
  const templates = pack.templatesByCategory[category]!;
  const template = templates[rng.int(templates.length)]!;
  const role = pack.roles[rng.int(pack.roles.length)]!;
  const style = pack.styles[rng.int(pack.styles.length)]!;
  const gaps = clarify ? findGaps(item) : [null];
  for (const gap of gaps) {
    const r = renderScenario(pack, item, {
      id: 'twin',
      template,
      role,
      style,
      tools: scenarioTools(item.task),
      gap,
      rng,
    });
    if (r) return r.messages.map((m) => m.content);
  }
  return null;
}
