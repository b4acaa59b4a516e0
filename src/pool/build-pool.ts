// The seed pool generator. Scenario k is a pure function of (config, k, sources): the pool at n is
// the first n scenarios of the pool at any larger n. For position k:
//   task      taskSequence (largest-remainder quotas on every prefix, mix from config)
//   clarify   the j-th scenario of its task is under-specified iff ⌊(j+1)ρ⌋ > ⌊jρ⌋ (ρ =
//             clarify_rate): every prefix of every task holds ⌊mρ⌋ under-specified scenarios
//   item      its i-th scenario of that (task, kind) takes position i mod N of round ⌊i/N⌋ of the
//             N eligible items, each round a fresh seeded shuffle, so items are used evenly
//   combo     (template, role, style) = the item's own seeded permutation of its feasible combos,
//             entry (round mod count): an item rendered again in a later round gets another combo,
//             which keeps renderings of one item apart (duplicates) while reusing items
//   variants  persona line, directive, tool hint, gap, filler, ask, reply from rng(seed, k)
// Items held aside (the shadow set) are removed first. A combo is feasible for an item when the
// rendering cannot fall outside the length bounds whatever lines are drawn, and its turns fit
// max_turns. If a drawn detail would still show in the turns, the next gap, then the next item of
// the round, is tried (counted in `fallbacks`).
import { createRng, type Rng } from '../api/index.ts';
import {
  buildScenario, compareSourceItems, deriveSeed, scenarioContext, scenarioTools, TASKS,
  type Scenario, type SourceItem, type Task, type ToolName,
} from '../data/index.ts';
import type { Pack, TemplateDef } from '../templates/index.ts';
import { tokenize } from '../text/index.ts';
import { findGaps, type GapCandidate } from './find-gaps.ts';
import { renderScenario } from './render-scenario.ts';
import { contextTokens } from './scenario-metrics.ts';
import { checkMix, taskSequence } from './task-sequence.ts';

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
}

type Kind = 'plain' | 'clarify';
interface Bounds { low: number; high: number }
interface ItemInfo { item: SourceItem; ctx: number; q: number; gaps: GapCandidate[]; gapped: Bounds }
interface Frame extends Bounds { template: TemplateDef }

export interface PoolStats {
  /** Items left after removing the held-aside ones, and those eligible per kind. */
  eligible: Record<Task, { items: number; plain: number; clarify: number }>;
  excluded: number;
  fallbacks: number;
}

const DEN = 1_000_000;
const count = (text: string): number => tokenize(text).length;
const bounds = (lines: readonly string[]): Bounds => {
  const n = lines.map(count);
  return { low: Math.min(...n), high: Math.max(...n) };
};

export class PoolBuilder {
  readonly stats: PoolStats;
  private readonly rate: number;
  private readonly eligible = new Map<string, ItemInfo[]>();
  private readonly orders = new Map<string, ItemInfo[]>();
  private readonly combos = new Map<ItemInfo, Map<Kind, number[]>>();
  private readonly frames = new Map<string, Frame[]>();
  private readonly roleB: Bounds[];
  private readonly styleB: Bounds[];

  constructor(items: readonly SourceItem[], excluded: ReadonlySet<string>, private readonly pack: Pack,
    private readonly config: PoolConfig, private readonly rng: (seed: number) => Rng = createRng) {
    const weights = checkMix(config.mix);
    if (!(config.clarifyRate >= 0 && config.clarifyRate <= 1)) throw new RangeError(`pool.clarify_rate: expected a number in [0, 1], got ${config.clarifyRate}`);
    this.rate = Math.round(config.clarifyRate * DEN);
    this.roleB = pack.roles.map((r) => bounds(r.personas));
    this.styleB = pack.styles.map((s) => bounds(s.directives));
    const kept = items.filter((i) => !excluded.has(i.source_id)).sort(compareSourceItems);
    this.stats = { eligible: {} as PoolStats['eligible'], excluded: items.length - kept.length, fallbacks: 0 };
    for (const task of TASKS) {
      const infos = kept.filter((i) => i.task === task).map((item) => this.info(item));
      const active = weights[task] > 0;
      if (active) {
        for (const tool of scenarioTools(task)) {
          if (!config.tools.includes(tool)) throw new RangeError(`pool.tools: ${task} scenarios need the ${tool} tool, which pool.tools (${config.tools.join(', ')}) leaves out`);
        }
      }
      const plain = active ? infos.filter((i) => this.feasible(i, 'plain').length > 0) : [];
      const clarify = active && this.rate > 0 ? infos.filter((i) => i.gaps.length > 0 && this.feasible(i, 'clarify').length > 0) : [];
      this.eligible.set(`${task}:plain`, plain);
      this.eligible.set(`${task}:clarify`, clarify);
      this.stats.eligible[task] = { items: infos.length, plain: plain.length, clarify: clarify.length };
    }
  }

  private info(item: SourceItem): ItemInfo {
    const q = count(item.question);
    const gaps = findGaps(item);
    const fill = bounds(gaps.length ? gaps.flatMap((g) => this.pack.gaps[g.kind].fillers) : ['']);
    const detail = bounds(gaps.length ? gaps.map((g) => g.detail) : ['']);
    return { item, ctx: contextTokens(scenarioContext(item)), q, gaps, gapped: { low: q - detail.high - 1 + fill.low - 1, high: q - detail.low + fill.high } };
  }

  /** The templates a (task, kind) renders with that fit max_turns, with their prose token bounds. */
  private framesFor(task: Task, kind: Kind): Frame[] {
    const key = `${task}:${kind}`;
    let frames = this.frames.get(key);
    if (!frames) {
      const category = kind === 'clarify' ? this.pack.clarifyCategory : this.pack.categories[task];
      const hint = scenarioTools(task).map((t) => bounds(this.pack.toolHints[t])).reduce((a, b) => ({ low: a.low + b.low, high: a.high + b.high }), { low: 0, high: 0 });
      frames = (this.pack.templatesByCategory[category] ?? [])
        .filter((t) => t.turns.length + 1 + (kind === 'clarify' ? 2 : 0) <= this.config.maxTurns)
        .map((template) => {
          const prose = count(template.turns.join('\n').replace(/\{[^{}]*\}/g, ' '));
          const h = template.slots.includes('tool_hint') ? hint : { low: 0, high: 0 };
          return { template, low: prose + h.low, high: prose + h.high };
        });
      this.frames.set(key, frames);
    }
    return frames;
  }

  /** Feasible combo indices ((frame·R + role)·S + style), ascending. */
  private feasible(info: ItemInfo, kind: Kind): number[] {
    const frames = this.framesFor(info.item.task, kind);
    const q = kind === 'clarify' ? info.gapped : { low: info.q, high: info.q };
    const R = this.roleB.length;
    const S = this.styleB.length;
    const out: number[] = [];
    frames.forEach((f, fi) => {
      for (let ri = 0; ri < R; ri++) {
        for (let si = 0; si < S; si++) {
          const low = info.ctx + q.low + f.low + this.roleB[ri]!.low + this.styleB[si]!.low;
          const high = info.ctx + q.high + f.high + this.roleB[ri]!.high + this.styleB[si]!.high;
          if (low >= this.config.length.min && high <= this.config.length.max) out.push((fi * R + ri) * S + si);
        }
      }
    });
    return out;
  }

  private combosFor(info: ItemInfo, kind: Kind): number[] {
    let byKind = this.combos.get(info);
    if (!byKind) this.combos.set(info, (byKind = new Map()));
    let list = byKind.get(kind);
    if (!list) {
      list = this.rng(deriveSeed(this.config.seed, `combos:${info.item.task}/${info.item.source_id}:${kind}`)).shuffle(this.feasible(info, kind));
      byKind.set(kind, list);
    }
    return list;
  }

  private order(task: Task, kind: Kind, round: number): ItemInfo[] {
    const key = `${task}:${kind}:${round}`;
    let order = this.orders.get(key);
    if (!order) {
      order = this.rng(deriveSeed(this.config.seed, `order:${key}`)).shuffle(this.eligible.get(`${task}:${kind}`)!);
      this.orders.set(key, order);
    }
    return order;
  }

  /** Scenario k, given its task and its index j among the scenarios of that task. */
  scenario(k: number, task: Task, j: number): Scenario {
    const before = Math.floor((j * this.rate) / DEN);
    const kind: Kind = Math.floor(((j + 1) * this.rate) / DEN) > before ? 'clarify' : 'plain';
    const i = kind === 'clarify' ? before : j - before;
    const list = this.eligible.get(`${task}:${kind}`)!;
    if (list.length === 0) throw new RangeError(`pool: no ${task} item can be rendered as a ${kind} scenario (check the pack's templates, pool.max_turns and pool.length)`);
    const round = Math.floor(i / list.length);
    const order = this.order(task, kind, round);
    const id = `${this.config.idPrefix}-${String(k + 1).padStart(6, '0')}`;
    for (let attempt = 0; attempt < order.length; attempt++) {
      const info = order[(i % list.length + attempt) % order.length]!;
      const combos = this.combosFor(info, kind);
      const c = combos[round % combos.length]!;
      const R = this.pack.roles.length;
      const S = this.pack.styles.length;
      const frame = this.framesFor(task, kind)[Math.floor(c / (R * S))]!;
      const rng = this.rng(deriveSeed(this.config.seed, `scenario:${k}:${attempt}`));
      const gaps: (GapCandidate | null)[] = kind === 'clarify' ? rng.shuffle(info.gaps) : [null];
      for (const [g, gap] of gaps.entries()) {
        const render = renderScenario(this.pack, info.item, {
          id, template: frame.template, role: this.pack.roles[Math.floor(c / S) % R]!, style: this.pack.styles[c % S]!,
          tools: scenarioTools(task), gap, rng,
        });
        if (render) {
          if (attempt > 0 || g > 0) this.stats.fallbacks += 1;
          return buildScenario(info.item, render);
        }
      }
    }
    throw new Error(`internal error: pool: no ${task} item renders scenario ${id}; please report this`);
  }

  /** The first n scenarios, in order. */
  *scenarios(n: number): Generator<Scenario> {
    const seq = taskSequence(n, this.config.mix);
    for (let k = 0; k < n; k++) yield this.scenario(k, seq.tasks[k]!, seq.index[k]!);
  }
}
