// The built-in callbacks and their composition:
//   logging     every step's MetricsLine appended to the metrics file (one JSON line, written
//               with one append), a progress line in train.log every `every` steps, and one
//               line per start, checkpoint, eval and end
//   held-out   every eval.every steps and at the last step: the checkpoint's policy played
//               greedily over the held-out scenarios (policy.ts evaluatePolicy); the result goes
//               to every callback's onEval; when the mean reward improves, best_<step>/ is written
//               and the `best` link moved to it (checkpoints.ts saveBest: nothing is rewritten)
//   checkpoint  after each complete step dir: `latest` swapped to it atomically, then keep_last
//               rotation (checkpoints.ts)
// The held-out eval runs BEFORE the checkpoint callback moves `latest`, so `latest` only ever names
// a step whose eval (and best copy) is done: a kill during the eval or the best copy leaves
// `latest` on the previous checkpoint, the step is recomputed on resume and evaluated then, and
// best_<step>/ comes out as in an uninterrupted run. An interrupt (SIGTERM) does not skip the eval
// of a checkpoint already written (an eval is a greedy pass over the held-out scenarios, in process):
// `latest` then moves to a step whose eval is done, and the resumed run goes on from there.
// compose() calls the callbacks in order, awaiting each.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Callback, CheckpointInfo, EvalResult, MetricsLine } from './api.ts';
import { rotate, saveBest, updateLatest } from './checkpoints.ts';

export type Callbacks = Required<Omit<Callback, 'name'>>;

export function composeCallbacks(list: readonly Callback[]): Callbacks {
  return {
    async onStart(i) {
      for (const c of list) await c.onStart?.(i);
    },
    async onStep(m) {
      for (const c of list) await c.onStep?.(m);
    },
    async onCheckpoint(i) {
      for (const c of list) await c.onCheckpoint?.(i);
    },
    async onEval(r) {
      for (const c of list) await c.onEval?.(r);
    },
    async onEnd(r) {
      for (const c of list) await c.onEnd?.(r);
    },
  };
}

const f = (x: number | null, d = 4): string => (x === null ? '-' : x.toFixed(d));

export function loggingCallback(o: { log: (line: string) => void; metricsFile: string; every: number }): Callback {
  return {
    name: 'logging',
    onStart(i) {
      o.log(
        `start: step ${i.startStep} of ${i.totalSteps}, engine ${i.engine}, strategy ${i.strategy}, backend ${i.backend}${i.resumedFrom ? `, resumed from ${i.resumedFrom}` : ''}`,
      );
    },
    onStep(m: MetricsLine) {
      appendFileSync(o.metricsFile, `${JSON.stringify(m)}\n`);
      if (m.step % o.every === 0 || m.step === 1) {
        o.log(
          `step ${m.step}: reward ${f(m.reward)} success ${f(m.success, 3)} len ${f(m.episode_len, 2)} loss ${f(m.loss.total)} kl ${f(m.kl, 5)} β ${f(m.kl_coef, 5)} entropy ${f(m.entropy, 3)} lr ${m.lr.toExponential(2)} ${m.throughput.toFixed(0)} env steps/s [${m.env}, ${m.backend}]`,
        );
      }
    },
    onCheckpoint(i: CheckpointInfo) {
      o.log(
        `checkpoint ${basename(i.dir)} (${Object.keys(i.meta.files).length} files, config ${i.meta.config_hash.slice(0, 12)})`,
      );
    },
    onEval(r: EvalResult) {
      o.log(
        `held-out eval @ step ${r.step}: reward ${f(r.reward)} success ${f(r.success, 3)} over-clarification ${f(r.overclar_rate, 3)} turns ${f(r.avg_turns, 2)} (${r.episodes} held-out episodes)`,
      );
    },
    onEnd(r) {
      o.log(
        `end: step ${r.finalStep}${r.interrupted ? ' (interrupted)' : ''}, ${r.metricsLines} metrics lines this run, backend ${r.backend}`,
      );
    },
  };
}

export function checkpointCallback(o: {
  checkpointDir: string;
  keepLast: number;
  log: (line: string) => void;
}): Callback {
  return {
    name: 'checkpoint',
    async onCheckpoint(i) {
      await updateLatest(o.checkpointDir, basename(i.dir));
      const removed = await rotate(o.checkpointDir, o.keepLast);
      if (removed.length > 0) o.log(`rotation (keep_last ${o.keepLast}): removed ${removed.join(', ')}`);
    },
  };
}

/** The best eval recorded in best/eval.json (a resumed run continues from it), or null. */
export function readBestEval(checkpointDir: string): EvalResult | null {
  const p = join(checkpointDir, 'best', 'eval.json');
  if (!existsSync(p)) return null;
  try {
    return (JSON.parse(readFileSync(p, 'utf8')) as { result: EvalResult }).result;
  } catch {
    return null;
  }
}

export interface ShadowEvalCallback extends Callback {
  best(): EvalResult | null;
}

export function shadowEvalCallback(o: {
  every: number;
  totalSteps: number;
  checkpointDir: string;
  evaluate: (dir: string, step: number) => Promise<EvalResult & { details: unknown }>;
  emit: (r: EvalResult) => Promise<void> | void;
  log: (line: string) => void;
}): ShadowEvalCallback {
  let best = readBestEval(o.checkpointDir);
  return {
    name: 'shadow-eval',
    best: () => best,
    async onCheckpoint(i) {
      // Not skipped when interrupted: the checkpoint becomes `latest` right after (see above).
      if (i.step % o.every !== 0 && i.step !== o.totalSteps) return;
      const { details, ...result } = await o.evaluate(i.dir, i.step);
      await o.emit(result);
      if (!best || result.reward > best.reward) {
        // eval.json names the step dir relative to the checkpoint dir: an absolute path would make
        // the checkpoint output differ per workspace location (it is hashed and cached).
        const name = await saveBest(
          o.checkpointDir,
          i.dir,
          { result: { ...result, dir: relative(o.checkpointDir, result.dir) || '.' }, details },
          i.step,
        );
        o.log(
          `best → ${name} (a copy of ${basename(i.dir)}; held-out eval reward ${result.reward.toFixed(4)}${best ? `, was ${best.reward.toFixed(4)} at step ${best.step}` : ''})`,
        );
        best = result;
      }
    },
  };
}
