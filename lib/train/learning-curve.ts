// The learning-curve picture (reports/learning_curve.png): reward, KL and success against step,
// read from reports/metrics.jsonl, one panel each, drawn into an RGB raster and encoded with pngjs.
// Every panel has axes, gridlines at "nice" ticks (1, 2, 5 × 10^k), tick labels, a title and the
// x-axis label, in the built-in bitmap font; the raw series is drawn light and its moving average
// (window ⌈n/25⌉) dark. The KL panel plots `kl_rollout` — the KL to the reference of the policy
// that generated each step's batch, the one ppo_eval gates by its maximum — every step in the dark
// colour (no average: a spike is what the gate sees) and, given, the bound as a horizontal black
// line. No clock, no randomness: the same metrics give the same bytes.
import { readFileSync } from 'node:fs';
import { drawText, GLYPH_H, textWidth } from './bitmap-font.ts';

export interface CurvePoint {
  step: number;
  reward: number | null;
  kl: number | null;
  kl_rollout: number | null;
  success: number | null;
}

type Rgb = readonly [number, number, number];
const _WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [20, 20, 20];
const GRID: Rgb = [225, 225, 225];
const SERIES: Record<'reward' | 'kl_rollout' | 'success', { dark: Rgb; light: Rgb; title: string }> = {
  reward: { dark: [31, 90, 180], light: [170, 196, 235], title: 'MEAN EPISODE REWARD' },
  kl_rollout: {
    dark: [190, 40, 40],
    light: [240, 180, 180],
    title: 'KL(ROLLOUT POLICY || REF), EACH STEP',
  },
  success: { dark: [30, 140, 60], light: [170, 220, 180], title: 'TASK SUCCESS RATE' },
};

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The points of a metrics.jsonl (lines without a numeric step are skipped; missing values are null). */
export function readCurve(file: string): CurvePoint[] {
  const out: CurvePoint[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const m = JSON.parse(line) as Record<string, unknown>;
    const step = num(m.step);
    if (step === null) continue;
    out.push({ step, reward: num(m.reward), kl: num(m.kl), kl_rollout: num(m.kl_rollout), success: num(m.success) });
  }
  return out.sort((a, b) => a.step - b.step);
}

/** Tick values covering [lo, hi] at a step of 1, 2 or 5 × 10^k, about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  const span = hi - lo;
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++)
    ticks.push(k === 0 ? 0 : Number((k * step).toPrecision(12)));
  return ticks;
}

/** A short tick label: at most 4 significant digits, no trailing zeros. */
export function tickLabel(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1).replace('e', 'E').replace('+', '');
  return String(Number(v.toPrecision(4)));
}

class Raster {
  readonly data: Buffer;
  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.data = Buffer.alloc(width * height * 4, 255);
  }
  set(x: number, y: number, c: Rgb): void {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (y * this.width + x) * 4;
    this.data[i] = c[0];
    this.data[i + 1] = c[1];
    this.data[i + 2] = c[2];
    this.data[i + 3] = 255;
  }
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, thick = 1): void {
    const n = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    for (let i = 0; i <= n; i++) {
      const x = x0 + ((x1 - x0) * i) / n;
      const y = y0 + ((y1 - y0) * i) / n;
      for (let d = 0; d < thick; d++) {
        this.set(x, y + d, c);
        this.set(x + d, y, c);
      }
    }
  }
  text(s: string, x: number, y: number, c: Rgb, scale = 2): void {
    drawText(s, Math.round(x), Math.round(y), scale, (px, py) => this.set(px, py, c));
  }
}

function movingAverage(ys: readonly (number | null)[], window: number): (number | null)[] {
  return ys.map((_, i) => {
    const xs = ys.slice(Math.max(0, i - window + 1), i + 1).filter((v): v is number => v !== null);
    return xs.length && ys[i] !== null ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  });
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

function panel(
  r: Raster,
  box: Box,
  pts: readonly CurvePoint[],
  key: 'reward' | 'kl_rollout' | 'success',
  steps: [number, number],
  bound: { value: number; label: string } | null = null,
): void {
  const s = SERIES[key];
  r.text(bound ? `${s.title}    BLACK: ${bound.label}` : s.title, box.x, box.y - 24, BLACK);
  const plot: Box = { x: box.x + 80, y: box.y, w: box.w - 90, h: box.h - 40 };
  const ys = pts.map((p) => p[key]);
  const vals = ys.filter((v): v is number => v !== null);
  r.line(plot.x, plot.y, plot.x, plot.y + plot.h, BLACK, 2);
  r.line(plot.x, plot.y + plot.h, plot.x + plot.w, plot.y + plot.h, BLACK, 2);
  const [x0, x1] = steps;
  const sx = (step: number): number => plot.x + (x1 === x0 ? plot.w / 2 : ((step - x0) / (x1 - x0)) * plot.w);
  const xt = niceTicks(x0, x1 === x0 ? x0 + 1 : x1, 6).filter((t) => t >= x0 && t <= Math.max(x1, x0));
  for (const t of xt) {
    r.line(sx(t), plot.y + plot.h, sx(t), plot.y + plot.h + 5, BLACK);
    const label = tickLabel(t);
    r.text(label, sx(t) - textWidth(label, 2) / 2, plot.y + plot.h + 9, BLACK);
  }
  r.text('STEP', plot.x + plot.w - textWidth('STEP', 2), plot.y + plot.h + 9 + GLYPH_H * 2 + 6, BLACK);
  if (vals.length === 0) {
    r.text(`NO ${key.toUpperCase()} VALUES IN METRICS.JSONL`, plot.x + 20, plot.y + plot.h / 2 - 7, BLACK);
    return;
  }
  let lo = Math.min(...vals, ...(bound ? [0] : []));
  let hi = Math.max(...vals, ...(bound ? [bound.value] : []));
  if (hi - lo < 1e-12) {
    const pad = Math.abs(lo) * 0.1 || 0.5;
    lo -= pad;
    hi += pad;
  }
  const pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  const sy = (v: number): number => plot.y + plot.h - ((v - lo) / (hi - lo)) * plot.h;
  for (const t of niceTicks(lo, hi, 5)) {
    r.line(plot.x + 2, sy(t), plot.x + plot.w, sy(t), GRID);
    r.line(plot.x - 5, sy(t), plot.x, sy(t), BLACK);
    const label = tickLabel(t);
    r.text(label, plot.x - 8 - textWidth(label, 2), sy(t) - GLYPH_H, BLACK);
  }
  const draw = (series: readonly (number | null)[], c: Rgb, thick: number): void => {
    let prev: [number, number] | null = null;
    series.forEach((v, i) => {
      if (v === null) {
        prev = null;
        return;
      }
      const p: [number, number] = [sx(pts[i]!.step), sy(v)];
      if (prev) r.line(prev[0], prev[1], p[0], p[1], c, thick);
      else r.set(p[0], p[1], c);
      prev = p;
    });
  };
  if (bound) {
    draw(ys, s.dark, 1);
    r.line(plot.x + 2, sy(bound.value), plot.x + plot.w, sy(bound.value), BLACK, 2);
    return;
  }
  draw(ys, s.light, 1);
  draw(movingAverage(ys, Math.max(1, Math.ceil(pts.length / 25))), s.dark, 2);
}

/**
 * The picture's PNG bytes (RGB, 8 bit); `klBound`: the KL bound (kl_stop × target_kl) drawn in the KL panel.
 * Async: pngjs is imported here, where it is used, so importing a rule that reaches this module does not load it.
 */
export async function drawLearningCurve(
  points: readonly CurvePoint[],
  title: string,
  klBound: { value: number; label: string } | null = null,
): Promise<Buffer> {
  const { PNG } = await import('pngjs');
  const width = 960;
  const panelH = 260;
  const top = 80;
  const height = top + 3 * (panelH + 40);
  const r = new Raster(width, height);
  r.text(title, 20, 14, BLACK, textWidth(title, 3) <= width - 40 ? 3 : 2);
  const steps: [number, number] = points.length ? [points[0]!.step, points[points.length - 1]!.step] : [0, 1];
  r.text(
    `LIGHT: EACH STEP    DARK: MOVING AVERAGE OF ${Math.max(1, Math.ceil(points.length / 25))} STEPS`,
    20,
    46,
    BLACK,
    2,
  );
  (['reward', 'kl_rollout', 'success'] as const).forEach((key, i) => {
    panel(
      r,
      { x: 20, y: top + 30 + i * (panelH + 40), w: width - 40, h: panelH },
      points,
      key,
      steps,
      key === 'kl_rollout' ? klBound : null,
    );
  });
  const png = new PNG({ width, height, colorType: 2, inputColorType: 6, bitDepth: 8 });
  r.data.copy(png.data);
  return PNG.sync.write(png, { colorType: 2, inputColorType: 6, deflateLevel: 9 });
}
