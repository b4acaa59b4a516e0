// The seed pool generator. Scenario k is a pure function of (config, k, sources): the pool at n is
// the first n scenarios of the pool at any larger n. For position k:
//   task      taskSequence (largest-remainder quotas on every prefix, mix from config)
//   kind      under-specified or not, and the variant flags hint / gold / split, each with the same
//             share in both clarification strata: a function of the scenario's index among its
//             task's scenarios (lib/pool/pool-kinds.ts), exact shares on every prefix
//   item      its i-th scenario of that (task, kind) takes position i mod N of round ⌊i/N⌋ of the
//             N eligible items, each round a fresh seeded shuffle, so items are used evenly
//   combo     (template, role, style) = the item's own seeded permutation of its feasible combos,
//             entry (round mod count): an item rendered again in a later round gets another combo,
//             which keeps renderings of one item apart (duplicates) while reusing items
//   variants  persona line, directive, tool hint, gap, filler, ask, reply, hint sentence and
//             lead-in from rng(seed, k)
// Items held aside (the shadow set) are removed first, then items whose reference needs more tool
// calls than ceilings.tool_hops (the difficulty gate's ceiling; the next eligible item takes their
// place, so the pool stays prefix-stable). A kind renders with the templates of its category whose
// user turns are in user_turns[frameKind(kind)][task] and whose dialogue fits min(max_turns,
// ceilings.turns); a gold kind's context is the item's supporting documents only.
// A combo is feasible for an item when the rendering cannot fall outside the length bounds
// whatever lines are drawn, and its tokenize length × ceilings.qwen3_per_token (user turns,
// clarification reply and context) cannot exceed ceilings.len_tokens (a pre-filter with a margin
// for the Qwen3 count that the difficulty gate checks). If a drawn detail would still show in the
// turns, the next gap, then the next item of the round, is tried (counted in `fallbacks`).
import { createRng, type Rng } from 'rc1-build';
import {
  buildReference,
  buildScenario,
  compareSourceItems,
  deriveSeed,
  scenarioContext,
  scenarioTools,
  TASKS,
  type Scenario,
  type SourceItem,
  type Task,
  type ToolName,
} from '../data/index.ts';
import type { GapKind, Pack, TemplateDef } from '../templates/index.ts';
import { countTokens, tokenize } from '../text/index.ts';
import { containsTokens, findGaps, type GapCandidate } from './find-gaps.ts';
import {
  frameKind,
  kindAt,
  kindKey,
  kindPlan,
  planKinds,
  type FrameKind,
  type Kind,
  type KindPlan,
  type Variant,
} from './pool-kinds.ts';
import { renderScenario, type PoolRender } from './render-scenario.ts';
import { contextTokens } from './scenario-metrics.ts';
import { checkMix, taskSequence } from './task-sequence.ts';
import { findHints, splitQuestion, type Hint } from './variants.ts';

export interface PoolConfig {
  seed: number;
  mix: Readonly<Record<string, number>>;
  clarifyRate: number;
  maxTurns: number;
  tools: readonly ToolName[];
  /** Construction bounds on scenarioLength (user turns + context tokens). */
  length: { min: number; max: number };
  /** Scenario ids are `<idPrefix>-<k+1, 6 digits>`. */
  idPrefix: string;
  /** Per variant, its share of each task's scenarios, the same in both clarification strata (absent: no variants). */
  variants?: Readonly<Partial<Record<Variant, Partial<Record<Task, number>>>>>;
  /** Required when a hint share is set. */
  hint?: { leadIns: readonly string[]; minTokens: number };
  /** Per kind and task, the [min, max] user turns of the templates it renders with (absent: any). */
  userTurns?: Readonly<Record<FrameKind, Partial<Record<Task, readonly [number, number]>>>>;
  /** Absent: no ceilings beyond max_turns and length. */
  ceilings?: { toolHops: number; turns: number; lenTokens: number; qwen3PerToken: number };
}

const NO_CEILINGS = { toolHops: Infinity, turns: Infinity, lenTokens: Infinity, qwen3PerToken: 1 };
const ANY_TURNS: readonly [number, number] = [1, Infinity];

/** A pool scenario: a Scenario and the sentence its user quotes (null unless hinted). */
export type PoolScenario = Scenario & { hint: Hint | null };

/** The pool scenario of an item's rendering. */
export function poolScenario(item: SourceItem, render: PoolRender): PoolScenario {
  return { ...buildScenario(item, render), hint: render.hint };
}

interface Bounds {
  low: number;
  high: number;
}
interface ItemInfo {
  item: SourceItem;
  ctx: number;
  ctxGold: number;
  q: number;
  hops: number;
  gaps: GapCandidate[];
  gapped: Bounds;
  hints: Hint[];
  hint: Bounds;
  split: { setup: string; ask: string } | null;
}
interface Frame extends Bounds {
  template: TemplateDef;
}

export interface PoolStats {
  /** Per task: items left after removing the held-aside ones, those of them over ceilings.tool_hops (never used), and those eligible per kind (by kindKey). */
  eligible: Record<Task, { items: number; over_ceiling: number; kinds: Record<string, number> }>;
  excluded: number;
  fallbacks: number;
}

const count = countTokens;
const bounds = (lines: readonly string[]): Bounds => {
  const n = lines.map(count);
  return { low: Math.min(...n), high: Math.max(...n) };
};

export class PoolBuilder {
  private readonly plans = new Map<Task, KindPlan>();
  private readonly eligible = new Map<string, ItemInfo[]>();
  private readonly orders = new Map<string, ItemInfo[]>();
  private readonly combos = new Map<ItemInfo, Map<string, number[]>>();
  private readonly frames = new Map<string, Frame[]>();
  /** Every item that is not held aside, in compareSourceItems order, and by task/source_id (the last of a repeated key). */
  private readonly kept: SourceItem[];
  private readonly keptByKey = new Map<string, SourceItem>();
  /** The infos computed so far (on an item's first use). */
  private readonly infos = new Map<SourceItem, ItemInfo>();
  private readonly weights: Record<Task, number>;
  private readonly poolStats: PoolStats;
  private prepared = false;
  private readonly roleB: Bounds[];
  private readonly styleB: Bounds[];
  private readonly leadB: Bounds;
  private readonly replyB: Bounds;
  private readonly ceilings: NonNullable<PoolConfig['ceilings']>;
  private readonly leadIns: readonly string[];

  /**
   * Checks the config. An item's measures (tokens, gaps, hints, tool hops) are computed when it is
   * first needed, and the eligible items per task and kind when the pool or its stats are first
   * asked for: the shadow set renders a few hundred chosen items and needs neither. The items
   * (and the pack) must not change after the builder is made.
   */
  constructor(
    items: readonly SourceItem[],
    excluded: ReadonlySet<string>,
    private readonly pack: Pack,
    private readonly config: PoolConfig,
    private readonly rng: (seed: number) => Rng = createRng,
  ) {
    this.weights = checkMix(config.mix);
    if (!(config.clarifyRate >= 0 && config.clarifyRate <= 1))
      throw new RangeError(`pool.clarify_rate: expected a number in [0, 1], got ${config.clarifyRate}`);
    this.roleB = pack.roles.map((r) => bounds(r.personas));
    this.styleB = pack.styles.map((s) => bounds(s.directives));
    this.ceilings = config.ceilings ?? NO_CEILINGS;
    this.leadIns = config.hint?.leadIns ?? [];
    this.leadB = bounds(this.leadIns.length ? this.leadIns : ['']);
    this.replyB = bounds(Object.values(pack.gaps).flatMap((g) => g.replies));
    this.kept = items.filter((i) => !excluded.has(i.source_id)).sort(compareSourceItems);
    for (const item of this.kept) this.keptByKey.set(`${item.task}/${item.source_id}`, item);
    this.poolStats = { eligible: {} as PoolStats['eligible'], excluded: items.length - this.kept.length, fallbacks: 0 };
    for (const task of TASKS) {
      const plan = kindPlan(task, config.clarifyRate, config.variants ?? {});
      if (plan.variants.some((v) => v.kind === 'hint') && this.leadIns.length === 0)
        throw new RangeError('pool.hint.lead_ins: hinted scenarios need at least one lead-in line');
      this.plans.set(task, plan);
      if (this.weights[task] > 0) {
        for (const tool of scenarioTools(task)) {
          if (!config.tools.includes(tool))
            throw new RangeError(
              `pool.tools: ${task} scenarios need the ${tool} tool, which pool.tools (${config.tools.join(', ')}) leaves out`,
            );
        }
      }
    }
  }

  /** Per task: items left after removing the held-aside ones, over the ceiling, eligible per kind; shadow items excluded; fallbacks so far. */
  get stats(): PoolStats {
    this.prepare();
    return this.poolStats;
  }

  /** The item's info, computed on first use. */
  private infoOf(item: SourceItem): ItemInfo {
    let info = this.infos.get(item);
    if (!info) this.infos.set(item, (info = this.info(item)));
    return info;
  }

  /** The eligible items of every task and kind, in kept order (computed once). */
  private prepare(): void {
    if (this.prepared) return;
    for (const task of TASKS) {
      const all = this.kept.filter((i) => i.task === task).map((item) => this.infoOf(item));
      const infos = all.filter((i) => i.hops <= this.ceilings.toolHops);
      const active = this.weights[task] > 0;
      const stats: PoolStats['eligible'][Task] = {
        items: all.length,
        over_ceiling: all.length - infos.length,
        kinds: {},
      };
      for (const kind of planKinds(this.plans.get(task)!)) {
        const list = active ? infos.filter((i) => this.supports(i, kind)) : [];
        this.eligible.set(`${task}:${kindKey(kind)}`, list);
        stats.kinds[kindKey(kind)] = list.length;
      }
      this.poolStats.eligible[task] = stats;
    }
    this.prepared = true;
  }

  /** Whether an item can be rendered as a kind at all. */
  private supports(i: ItemInfo, kind: Kind): boolean {
    return (
      (!kind.clarify || i.gaps.length > 0) &&
      (!kind.hint || i.hints.length > 0) &&
      (!kind.split || i.split !== null) &&
      (!kind.gold || i.ctxGold > 0) &&
      (!(kind.clarify && kind.hint) ||
        i.gaps.some((g) => i.hints.some((h) => !containsTokens(tokenize(h.text), tokenize(g.detail))))) &&
      this.feasible(i, kind, true).length > 0
    );
  }

  private info(item: SourceItem): ItemInfo {
    const q = count(item.question);
    const gaps = findGaps(item);
    // The bounds of every filler of the item's gap kinds (each kind's bounds counted once per pack).
    const fill = gaps.length
      ? gaps
          .map((g) => this.fillerBounds(g.kind))
          .reduce((a, b) => ({ low: Math.min(a.low, b.low), high: Math.max(a.high, b.high) }))
      : bounds(['']);
    const detail = bounds(gaps.length ? gaps.map((g) => g.detail) : ['']);
    const hints = this.leadIns.length ? findHints(item, this.config.hint!.minTokens) : [];
    const hint = bounds(hints.length ? hints.map((h) => h.text) : ['']);
    const context = scenarioContext(item);
    const hops = buildReference(item, context, null).steps.filter((s) => s.type === 'tool_call').length;
    // contextTokens of every document and of the supporting ones, each document tokenised once.
    let ctx = 0;
    let ctxGold = 0;
    for (const d of context) {
      const t = contextTokens([d]);
      ctx += t;
      if (d.supporting) ctxGold += t;
    }
    return {
      item,
      ctx,
      ctxGold,
      q,
      hops,
      gaps,
      hints,
      split: splitQuestion(item),
      gapped: { low: q - detail.high - 1 + fill.low - 1, high: q - detail.low + fill.high },
      hint: { low: hint.low + this.leadB.low, high: hint.high + this.leadB.high },
    };
  }

  private readonly fillB = new Map<GapKind, Bounds>();
  private fillerBounds(kind: GapKind): Bounds {
    let b = this.fillB.get(kind);
    if (!b) this.fillB.set(kind, (b = bounds(this.pack.gaps[kind].fillers)));
    return b;
  }

  /** The templates a (task, kind) renders with, with their prose token bounds. */
  private framesFor(task: Task, kind: Kind): Frame[] {
    const key = `${task}:${kindKey(kind)}`;
    let frames = this.frames.get(key);
    if (!frames) {
      const fk = frameKind(kind);
      const range = this.config.userTurns ? this.config.userTurns[fk][task] : ANY_TURNS;
      if (!range)
        throw new RangeError(
          `pool.user_turns.${fk}: no [min, max] for ${task}, which renders ${kindKey(kind)} scenarios`,
        );
      const category = kind.clarify ? this.pack.clarifyCategory : this.pack.categories[task];
      const hint = scenarioTools(task)
        .map((t) => bounds(this.pack.toolHints[t]))
        .reduce((a, b) => ({ low: a.low + b.low, high: a.high + b.high }), { low: 0, high: 0 });
      const maxTurns = Math.min(this.config.maxTurns, this.ceilings.turns);
      frames = (this.pack.templatesByCategory[category] ?? [])
        .filter((t) => t.turns.length >= range[0] && t.turns.length <= range[1])
        .filter((t) => t.turns.length + (kind.split ? 1 : 0) + 1 + (kind.clarify ? 2 : 0) <= maxTurns)
        .map((template) => {
          const prose = count(template.turns.join('\n').replace(/\{[^{}]*\}/g, ' '));
          const h = template.slots.includes('tool_hint') ? hint : { low: 0, high: 0 };
          return { template, low: prose + h.low, high: prose + h.high };
        });
      this.frames.set(key, frames);
    }
    return frames;
  }

  /** Feasible combo indices ((frame·R + role)·S + style), ascending; with `first`, at most the first one. */
  private feasible(info: ItemInfo, kind: Kind, first = false): number[] {
    const frames = this.framesFor(info.item.task, kind);
    const base = kind.clarify ? info.gapped : { low: info.q, high: info.q };
    const q = kind.hint ? { low: base.low + info.hint.low, high: base.high + info.hint.high } : base;
    const reply = kind.clarify ? this.replyB.high + Math.max(0, ...info.gaps.map((g) => count(g.detail))) : 0;
    const ctx = kind.gold ? info.ctxGold : info.ctx;
    const { lenTokens, qwen3PerToken } = this.ceilings;
    const { min, max } = this.config.length;
    const roleB = this.roleB;
    const styleB = this.styleB;
    const R = roleB.length;
    const S = styleB.length;
    const out: number[] = [];
    for (let fi = 0; fi < frames.length; fi++) {
      const f = frames[fi]!;
      for (let ri = 0; ri < R; ri++) {
        const lowFR = ctx + q.low + f.low + roleB[ri]!.low;
        const highFR = ctx + q.high + f.high + roleB[ri]!.high;
        for (let si = 0; si < S; si++) {
          const low = lowFR + styleB[si]!.low;
          const high = highFR + styleB[si]!.high;
          if (low >= min && high <= max && (high + reply) * qwen3PerToken <= lenTokens) {
            out.push((fi * R + ri) * S + si);
            if (first) return out;
          }
        }
      }
    }
    return out;
  }

  private combosFor(info: ItemInfo, kind: Kind): number[] {
    let byKind = this.combos.get(info);
    if (!byKind) this.combos.set(info, (byKind = new Map()));
    const key = kindKey(kind);
    let list = byKind.get(key);
    if (!list) {
      list = this.rng(deriveSeed(this.config.seed, `combos:${info.item.task}/${info.item.source_id}:${key}`)).shuffle(
        this.feasible(info, kind),
      );
      byKind.set(key, list);
    }
    return list;
  }

  private order(task: Task, kind: Kind, round: number): ItemInfo[] {
    const key = `${task}:${kindKey(kind)}:${round}`;
    let order = this.orders.get(key);
    if (!order) {
      order = this.rng(deriveSeed(this.config.seed, `order:${key}`)).shuffle(
        this.eligible.get(`${task}:${kindKey(kind)}`)!,
      );
      this.orders.set(key, order);
    }
    return order;
  }

  /** Scenario k, given its task and its index j among the scenarios of that task. */
  scenario(k: number, task: Task, j: number): PoolScenario {
    const { item, render } = this.rendering(k, task, j);
    return poolScenario(item, render);
  }

  /**
   * Scenario k's source item and rendering, without the Scenario object: PoolLines (lib/pool/pool-lines.ts)
   * writes its JSON line from these, byte for byte JSON.stringify(scenario(k, task, j)).
   */
  rendering(k: number, task: Task, j: number): { item: SourceItem; render: PoolRender } {
    this.prepare();
    const { kind, index: i } = kindAt(j, this.plans.get(task)!);
    const list = this.eligible.get(`${task}:${kindKey(kind)}`)!;
    if (list.length === 0)
      throw new RangeError(
        `pool: no ${task} item can be rendered as a ${kindKey(kind)} scenario (check the pack's templates, pool.user_turns, pool.max_turns, pool.ceilings, pool.length and pool.variants)`,
      );
    const round = Math.floor(i / list.length);
    const order = this.order(task, kind, round);
    const id = `${this.config.idPrefix}-${String(k + 1).padStart(6, '0')}`;
    for (let attempt = 0; attempt < order.length; attempt++) {
      const info = order[((i % list.length) + attempt) % order.length]!;
      const combos = this.combosFor(info, kind);
      const made = this.render(
        info,
        kind,
        combos[round % combos.length]!,
        id,
        this.rng(deriveSeed(this.config.seed, `scenario:${k}:${attempt}`)),
      );
      if (made) {
        if (attempt > 0 || made.gapTried > 0) this.poolStats.fallbacks += 1;
        return { item: info.item, render: made.render };
      }
    }
    throw new RangeError(
      `pool: no ${task} item renders scenario ${id} as a ${kindKey(kind)} scenario (every gap or quoted sentence would show the left-out detail); lower that variant's share in pool.variants`,
    );
  }

  /**
   * One given item rendered as one given kind with a seeded feasible combo (the shadow set's
   * renderings), or null when the item is held aside, over a ceiling, or cannot take the kind.
   */
  renderItem(item: SourceItem, kind: Kind, id: string, rng: Rng): PoolScenario | null {
    const kept = this.keptByKey.get(`${item.task}/${item.source_id}`);
    if (!kept) return null;
    const info = this.infoOf(kept);
    if (info.hops > this.ceilings.toolHops || !this.supports(info, kind)) return null;
    const combos = this.combosFor(info, kind);
    const made = this.render(info, kind, combos[rng.int(combos.length)]!, id, rng);
    return made ? poolScenario(info.item, made.render) : null;
  }

  /** Renders with combo c, trying the item's gaps in a seeded order; null when every one would show. */
  private render(
    info: ItemInfo,
    kind: Kind,
    c: number,
    id: string,
    rng: Rng,
  ): { render: PoolRender; gapTried: number } | null {
    const task = info.item.task;
    const R = this.pack.roles.length;
    const S = this.pack.styles.length;
    const frame = this.framesFor(task, kind)[Math.floor(c / (R * S))]!;
    const gaps: (GapCandidate | null)[] = kind.clarify ? rng.shuffle(info.gaps) : [null];
    for (const [g, gap] of gaps.entries()) {
      const render = renderScenario(this.pack, info.item, {
        id,
        template: frame.template,
        role: this.pack.roles[Math.floor(c / S) % R]!,
        style: this.pack.styles[c % S]!,
        tools: scenarioTools(task),
        gap,
        rng,
        hint: kind.hint ? { candidates: info.hints, leadIns: this.leadIns } : null,
        split: kind.split ? info.split : null,
        gold: kind.gold,
      });
      if (render) return { render, gapTried: g };
    }
    return null;
  }

  /** The first n scenarios, in order. */
  *scenarios(n: number): Generator<PoolScenario> {
    for (const { item, render } of this.renderings(n)) yield poolScenario(item, render);
  }

  /** The source item and rendering of each of the first n scenarios, in order (see rendering()). */
  *renderings(n: number): Generator<{ item: SourceItem; render: PoolRender }> {
    const seq = taskSequence(n, this.config.mix);
    for (let k = 0; k < n; k++) yield this.rendering(k, seq.tasks[k]!, seq.index[k]!);
  }
}
