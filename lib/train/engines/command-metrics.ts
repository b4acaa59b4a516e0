// The metrics half of the `command` engine's contract: the external trainer appends one JSON object
// per optimisation step to $RC1_METRICS. MetricsTail reads the file incrementally (only whole lines;
// a line still being written waits for its newline), validates every line with zod and enforces
// that steps increase, start after the resume point and stay within train.steps. A broken line is a
// ContractViolation naming file:line and field:
//   .rc1/state/train/seed_7/command/metrics.jsonl:3: reward: expected a number, got "high"
// toMetricsLine turns a valid line into the trainer API's MetricsLine (fields the trainer does not
// report are null in the JSON: they are NaN here, which JSON.stringify writes as null).
import { closeSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';
import {
  describeValue,
  formatLocation,
  issueExpected,
  issueField,
  issuePath,
  valueAt,
  type Location,
} from '../../data/index.ts';
import type { MetricsLine } from '../api.ts';

/** The contract's metrics line: step, loss, reward, kl required; the rest optional; other keys are ignored. */
export const trainerMetricsSchema = z.object({
  step: z.number().int().positive(),
  loss: z.number(),
  reward: z.number(),
  kl: z.number(),
  entropy: z.number().optional(),
  lr: z.number().nonnegative().optional(),
  kl_coef: z.number().nonnegative().optional(),
  success: z.number().min(0).max(1).nullable().optional(),
  episode_len: z.number().nonnegative().nullable().optional(),
  throughput: z.number().nonnegative().optional(),
  updates_per_s: z.number().nonnegative().optional(),
  loss_terms: z
    .object({
      policy: z.number().optional(),
      value: z.number().optional(),
      entropy: z.number().optional(),
      kl: z.number().optional(),
    })
    .optional(),
  backend: z.string().min(1).optional(),
  env: z.string().min(1).optional(),
});
export type TrainerMetrics = z.infer<typeof trainerMetricsSchema>;

/** The external trainer broke the contract (rc1-build stops it and fails the target with this message). */
export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

/** Validates one parsed line; throws a ContractViolation at `at` for the first bad field. */
export function validateMetricsLine(value: unknown, at: Location): TrainerMetrics {
  const r = trainerMetricsSchema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issuePath(issue);
  throw new ContractViolation(
    `${formatLocation(at)}: ${issueField(path, '(line)')}: expected ${issueExpected(issue)}, got ${describeValue(valueAt(value, path))}`,
  );
}

export interface TailBounds {
  /** Steps must be greater than this (the resume point). */
  after: number;
  /** …and at most this (train.steps). */
  max: number;
}

/** Reads whole new lines of a growing metrics file; validates them in order. */
export class MetricsTail {
  private offset = 0;
  private lineNo = 0;
  private pending = Buffer.alloc(0);
  lastStep: number;
  lines = 0;

  constructor(
    private readonly file: string,
    private readonly shown: string,
    private readonly bounds: TailBounds,
  ) {
    this.lastStep = bounds.after;
  }

  /** New complete lines since the last call (validated); `final` treats a trailing partial line as a line. */
  poll(final = false): TrainerMetrics[] {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return [];
    }
    const chunks: Buffer[] = [this.pending];
    try {
      const buf = Buffer.alloc(1 << 16);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
        this.offset += n;
      }
    } finally {
      closeSync(fd);
    }
    const data = Buffer.concat(chunks);
    const end = final ? data.length : data.lastIndexOf(0x0a) + 1;
    this.pending = Buffer.from(data.subarray(end));
    const out: TrainerMetrics[] = [];
    if (end === 0) return out;
    const pieces = data.subarray(0, end).toString('utf8').split('\n');
    if (data[end - 1] === 0x0a) pieces.pop();
    for (const raw of pieces) {
      this.lineNo += 1;
      if (raw.trim() !== '') out.push(this.check(raw));
    }
    return out;
  }

  private check(raw: string): TrainerMetrics {
    const at: Location = { file: this.shown, line: this.lineNo, unit: 'line' };
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new ContractViolation(
        `${formatLocation(at)}: (json): expected one JSON object per line, got ${describeValue(raw)} (${(e as Error).message})`,
      );
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ContractViolation(`${formatLocation(at)}: (line): expected a JSON object, got ${describeValue(value)}`);
    }
    const m = validateMetricsLine(value, at);
    if (m.step <= this.lastStep) {
      const why =
        this.lines === 0 && this.bounds.after > 0
          ? `the run resumed from step ${this.bounds.after}`
          : `the previous line was step ${this.lastStep}`;
      throw new ContractViolation(
        `${formatLocation(at)}: step: expected a step greater than ${this.lastStep} (steps must increase; ${why}), got ${m.step}`,
      );
    }
    if (m.step > this.bounds.max) {
      throw new ContractViolation(
        `${formatLocation(at)}: step: expected at most ${this.bounds.max} (train.steps), got ${m.step}`,
      );
    }
    this.lastStep = m.step;
    this.lines += 1;
    return m;
  }
}

/** The trainer API's metrics line for a contract line; `stepSeconds` is the wall time since the previous line (null for the first). */
export function toMetricsLine(m: TrainerMetrics, stepSeconds: number | null, now: Date): MetricsLine {
  const t = m.loss_terms ?? {};
  const na = Number.NaN;
  return {
    step: m.step,
    loss: { policy: t.policy ?? na, value: t.value ?? na, entropy: t.entropy ?? na, kl: t.kl ?? na, total: m.loss },
    reward: m.reward,
    kl: m.kl,
    kl_rollout: null,
    kl_coef: m.kl_coef ?? na,
    kl_engaged: null,
    entropy: m.entropy ?? na,
    lr: m.lr ?? na,
    throughput: m.throughput ?? na,
    updates_per_s: m.updates_per_s ?? (stepSeconds !== null && stepSeconds > 0 ? 1 / stepSeconds : na),
    success: m.success ?? null,
    episode_len: m.episode_len ?? null,
    seed_ratio: null,
    backend: m.backend ?? 'external',
    engine: 'command',
    strategy: 'external',
    env: m.env ?? 'external-trainer',
    time: now.toISOString(),
  };
}
