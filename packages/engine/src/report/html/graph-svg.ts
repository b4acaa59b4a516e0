// The target graph as an SVG drawing for the report, each target coloured by its state
// (up-to-date, stale, missing, failed). A layered layout, top to bottom: a target's layer is
// the length of the longest dependency chain below it; within a layer, targets are ordered by
// the mean position of their neighbours (a few sweeps each way, which removes most crossings in a
// pipeline-shaped graph). Deterministic: the same graph and states give the same markup.
import { escapeHtml } from './escape-html.ts';

export type NodeState = 'up-to-date' | 'stale' | 'missing' | 'failed';

export interface GraphNode {
  name: string;
  deps: readonly string[];
  gate: boolean;
  state: NodeState;
  reasons: readonly string[];
}

export const STATE_COLOURS: Record<NodeState, { fill: string; stroke: string; text: string }> = {
  'up-to-date': { fill: '#e3f4e4', stroke: '#2e7d32', text: '#1b4d1e' },
  stale: { fill: '#fff2cc', stroke: '#b8860b', text: '#5c4300' },
  missing: { fill: '#eeeeee', stroke: '#8a8a8a', text: '#444444' },
  failed: { fill: '#fde0dc', stroke: '#c62828', text: '#7f1414' },
};

const ROW_H = 26;
const LAYER_GAP = 34;
const COL_GAP = 16;
const CHAR_W = 7;
const PAD = 12;

/** Column of every node: 0 for a node without dependencies, else one more than its deepest dependency. */
function layers(nodes: readonly GraphNode[]): Map<string, number> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const layer = new Map<string, number>();
  const visit = (n: string): number => {
    const known = layer.get(n);
    if (known !== undefined) return known;
    layer.set(n, 0); // the graph is acyclic (checked when the pipeline loads); this only guards the recursion
    const deps = byName.get(n)?.deps.filter((d) => byName.has(d)) ?? [];
    const l = deps.length ? 1 + Math.max(...deps.map(visit)) : 0;
    layer.set(n, l);
    return l;
  };
  for (const n of nodes) visit(n.name);
  return layer;
}

export function graphSvg(nodes: readonly GraphNode[]): string {
  if (nodes.length === 0) return '<p>The pipeline declares no targets.</p>';
  const layer = layers(nodes);
  const nCols = Math.max(...layer.values()) + 1;
  const cols: string[][] = Array.from({ length: nCols }, () => []);
  for (const n of nodes) cols[layer.get(n.name)!]!.push(n.name);
  const dependents = new Map<string, string[]>();
  for (const n of nodes) for (const d of n.deps) (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(n.name);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const pos = new Map<string, number>();
  const setPos = (): void => cols.forEach((c) => c.forEach((n, i) => pos.set(n, i)));
  setPos();
  const sortBy = (c: string[], neighbours: (n: string) => readonly string[]): void => {
    const key = new Map(
      c.map((n, i) => {
        const ps = neighbours(n)
          .map((m) => pos.get(m))
          .filter((p): p is number => p !== undefined);
        return [n, ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : i] as const;
      }),
    );
    c.sort((a, b) => key.get(a)! - key.get(b)! || pos.get(a)! - pos.get(b)!);
  };
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let i = 1; i < nCols; i++) {
      sortBy(cols[i]!, (n) => byName.get(n)!.deps);
      setPos();
    }
    for (let i = nCols - 2; i >= 0; i--) {
      sortBy(cols[i]!, (n) => dependents.get(n) ?? []);
      setPos();
    }
  }
  // Layers run top to bottom (a pipeline is deep and narrow: rows fit a page, columns would not);
  // each target's box is as wide as its name, a layer's boxes side by side, centred.
  const widthOf = (n: string): number => n.length * CHAR_W + 2 * PAD;
  const rowW = cols.map((c) => c.reduce((sum, n) => sum + widthOf(n), 0) + (c.length - 1) * COL_GAP);
  const width = Math.max(...rowW) + 2 * PAD;
  const height = PAD * 2 + nCols * (ROW_H + LAYER_GAP) - LAYER_GAP;
  const box = new Map<string, { x: number; y: number; w: number }>();
  cols.forEach((c, li) => {
    let x = PAD + (width - 2 * PAD - rowW[li]!) / 2;
    for (const n of c) {
      box.set(n, { x, y: PAD + li * (ROW_H + LAYER_GAP), w: widthOf(n) });
      x += widthOf(n) + COL_GAP;
    }
  });
  const edges: string[] = [];
  for (const n of nodes) {
    const b = box.get(n.name)!;
    for (const d of n.deps) {
      const a = box.get(d);
      if (!a) continue;
      const x1 = a.x + a.w / 2;
      const y1 = a.y + ROW_H;
      const x2 = b.x + b.w / 2;
      const y2 = b.y;
      const my = (y1 + y2) / 2;
      edges.push(
        `<path class="edge" d="M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2 - 4}" marker-end="url(#graph-arrow)"/>`,
      );
    }
  }
  const boxes: string[] = [];
  for (const n of nodes) {
    const b = box.get(n.name)!;
    const c = STATE_COLOURS[n.state];
    const tip = `${n.name}${n.gate ? ' (gate)' : ''}: ${n.state}${n.reasons.length ? ` — ${n.reasons.join('; ')}` : ''}`;
    boxes.push(
      `<g class="node state-${n.state}${n.gate ? ' gate' : ''}" data-target="${escapeHtml(n.name)}"><title>${escapeHtml(tip)}</title>` +
        `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${ROW_H}" rx="${n.gate ? 13 : 3}" fill="${c.fill}" stroke="${c.stroke}" stroke-width="${n.gate ? 2.5 : 1.2}"/>` +
        `<text x="${b.x + b.w / 2}" y="${b.y + ROW_H / 2 + 4}" text-anchor="middle" fill="${c.text}">${escapeHtml(n.name)}</text></g>`,
    );
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans Mono, Menlo, monospace" font-size="11.5">` +
    '<defs><marker id="graph-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#888"/></marker></defs>' +
    `<g fill="none" stroke="#9a9a9a" stroke-width="1">${edges.join('')}</g>${boxes.join('')}</svg>`
  );
}
