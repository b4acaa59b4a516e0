// configs/weights.json: the calibrated reward weights that the weights gate writes and the
// shadow run, the ablation, the preflight and training read. Format (version 1):
//   { "version": 1, "dimensions": [7 names], "weights": { dim: w }, "old_weights": { dim: w },
//     "method": { …the calibration settings… }, "n_items": n, "sha256_of_inputs": { path: sha } }
// Only version, weights and (for validation) their 7 keys are required of a file written by
// hand. weightsChecks is the preflight's validation (docs/rc1.md, target preflight_checks): every one of the 7
// dimensions present and no other, each ≥ 0, the sum 1 ± tolerance, each ≤ the cap; the
// WEIGHTS_OK line carries the file's sha256.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { check, RuleError, type Check } from 'rc1-build';
import { DIMENSIONS } from '../scoring/types.ts';
import type { Weights } from './reward.ts';

export const WEIGHTS_FILE_VERSION = 1;

export interface WeightsFile {
  version: number;
  dimensions: string[];
  weights: Record<string, number>;
  old_weights: Record<string, number>;
  method: Record<string, unknown>;
  n_items: number;
  sha256_of_inputs: Record<string, string>;
}

export function sha256Of(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function sha256File(path: string): string {
  return sha256Of(readFileSync(path));
}

/** The file's text: keys in a fixed order, weights at full precision (rounding could break Σ = 1 ± 1e-6). */
export function formatWeightsFile(f: WeightsFile): string {
  const inDimOrder = (w: Record<string, number>): Record<string, number> =>
    Object.fromEntries(DIMENSIONS.map((d) => [d, w[d]!]));
  return `${JSON.stringify(
    {
      version: f.version,
      dimensions: f.dimensions,
      weights: inDimOrder(f.weights),
      old_weights: inDimOrder(f.old_weights),
      method: f.method,
      n_items: f.n_items,
      sha256_of_inputs: f.sha256_of_inputs,
    },
    null,
    2,
  )}\n`;
}

/** Parses a weights file's text; the reason as a string when it is not an object with a weights object. */
function parse(text: string): { weights: Record<string, unknown>; version: unknown } | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return `not JSON: ${(e as Error).message}`;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  const o = v as Record<string, unknown>;
  if (typeof o.weights !== 'object' || o.weights === null || Array.isArray(o.weights)) return 'no "weights" object';
  return { weights: o.weights as Record<string, unknown>, version: o.version };
}

export interface WeightsValidation {
  checks: Check[];
  /** Every check passed. */
  ok: boolean;
  sha256: string;
  weights: Record<string, unknown> | null;
}

/** The preflight's checks of a weights file (see the module comment). */
export function weightsChecks(bytes: Uint8Array, o: { sumTolerance: number; maxWeight: number }): WeightsValidation {
  const sha256 = sha256Of(bytes);
  const p = parse(Buffer.from(bytes).toString('utf8'));
  const w = typeof p === 'string' ? null : p.weights;
  const keys = w ? Object.keys(w) : [];
  const values = w
    ? DIMENSIONS.map((d) => w[d]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x))
    : [];
  const complete = w !== null && values.length === DIMENSIONS.length;
  const sum = complete ? values.reduce((a, b) => a + b, 0) : null;
  const fix = 'rebuild the weights target (rc1-build weights); never edit configs/weights.json by hand';
  const checks = [
    check(
      'weights.file_parses',
      typeof p === 'string' ? p : 'ok',
      '==',
      'ok',
      'configs/weights.json must be a JSON object with a "weights" object',
    ),
    check('weights.version', typeof p === 'string' ? null : p.version, '==', WEIGHTS_FILE_VERSION, fix),
    check(
      'weights.missing_dimensions',
      w ? DIMENSIONS.filter((d) => typeof w[d] !== 'number' || !Number.isFinite(w[d])) : [...DIMENSIONS],
      '==',
      [],
      `all 7 dimensions need a numeric weight: ${fix}`,
    ),
    check(
      'weights.unknown_dimensions',
      keys.filter((k) => !(DIMENSIONS as readonly string[]).includes(k)),
      '==',
      [],
      `only the 7 rubric dimensions may be weighted: ${fix}`,
    ),
    check(
      'weights.min',
      complete ? Math.min(...values) : null,
      '>=',
      0,
      `a negative weight rewards doing worse on its dimension: ${fix}`,
    ),
    check(
      'weights.sum',
      sum,
      'in',
      [1 - o.sumTolerance, 1 + o.sumTolerance],
      `the weights must sum to 1 (±${o.sumTolerance}): ${fix}`,
    ),
    check(
      'weights.max',
      complete ? Math.max(...values) : null,
      '<=',
      o.maxWeight,
      `no dimension may carry more than ${o.maxWeight}: ${fix}`,
    ),
  ];
  return { checks, ok: checks.every((c) => c.pass), sha256, weights: w };
}

/** The weights of a valid file, for computing rewards; RuleError naming the problem otherwise. */
export function readWeights(path: string, display: string): Weights {
  const p = parse(readFileSync(path, 'utf8'));
  if (typeof p === 'string') throw new RuleError(`${display}: ${p}`);
  const out: Record<string, number> = {};
  for (const d of DIMENSIONS) {
    const v = p.weights[d];
    if (typeof v !== 'number' || !(v >= 0))
      throw new RuleError(`${display}: weights.${d} must be a number ≥ 0, got ${JSON.stringify(v)}`);
    out[d] = v;
  }
  return out as Weights;
}
