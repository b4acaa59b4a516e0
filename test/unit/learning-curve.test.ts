// The learning-curve picture's KL panel (lib/train/learning-curve.ts): it plots kl_rollout, the KL
// of the policy that generated each batch (what ppo_eval gates), every step, against the bound
// line — not the post-update KL — so a spike over the bound shows above the line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PNG } from 'pngjs';
import { drawLearningCurve, type CurvePoint } from '../../lib/train/learning-curve.ts';

const WIDTH = 960;
const KL_PANEL = { top: 80 + 30 + 300, bottom: 80 + 30 + 300 + 220 };
const DARK_RED = [190, 40, 40];

function pixels(png: Buffer) {
  const img = PNG.sync.read(png);
  const at = (x: number, y: number) =>
    Array.from(img.data.subarray((y * img.width + x) * 4, (y * img.width + x) * 4 + 3));
  return { img, at };
}

/** The KL panel's rows that hold a long black horizontal line (the bound), and the rows with the dark red series. */
function klPanel(png: Buffer): { boundRow: number; redRows: number[] } {
  const { at } = pixels(png);
  let boundRow = -1;
  const redRows: number[] = [];
  for (let y = KL_PANEL.top; y < KL_PANEL.bottom; y++) {
    let black = 0;
    let red = false;
    for (let x = 110; x < WIDTH - 30; x++) {
      const [r, g, b] = at(x, y);
      if (r === 20 && g === 20 && b === 20) black += 1;
      if (r === DARK_RED[0] && g === DARK_RED[1] && b === DARK_RED[2]) red = true;
    }
    if (black > 600 && boundRow < 0) boundRow = y;
    if (red) redRows.push(y);
  }
  return { boundRow, redRows };
}

const points = (spike: boolean): CurvePoint[] =>
  Array.from({ length: 50 }, (_, i) => ({
    step: i + 1,
    reward: 0.5,
    success: 0.5,
    kl: 0.09, // the post-update KL: far over the bound, and not what the panel shows
    kl_rollout: spike && i === 30 ? 0.09 : 0.01 + 0.0002 * i,
  }));

test('the KL panel draws kl_rollout of every step and the bound; a rollout KL within the bound stays below the line, a spike over it shows above it', async () => {
  const bound = { value: 0.045, label: 'BOUND 1.5 X TARGET KL 0.03' };
  const held = klPanel(await drawLearningCurve(points(false), 'T', bound));
  assert.ok(held.boundRow > 0, 'a bound line is drawn');
  assert.ok(held.redRows.length > 0, 'the series is drawn');
  assert.ok(
    held.redRows.every((y) => y > held.boundRow),
    `rollout KL within the bound is drawn below the line (row ${held.boundRow}), rows ${held.redRows[0]}..`,
  );
  const spiked = klPanel(await drawLearningCurve(points(true), 'T', bound));
  assert.ok(
    spiked.redRows.some((y) => y < spiked.boundRow),
    'one step over the bound is drawn above the line (no moving average hides it)',
  );
});

test('the same metrics give the same bytes', async () => {
  const bound = { value: 0.045, label: 'BOUND' };
  assert.deepEqual(
    await drawLearningCurve(points(true), 'T', bound),
    await drawLearningCurve(points(true), 'T', bound),
  );
});
