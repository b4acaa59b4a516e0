// Decides WHEN targets run (Shake's scheduler; ninja's Builder over its CommandRunner): a target
// starts once all its dependencies have finished up to date, restored or built; at most -j rules
// run at once (the executor takes a slot around handing the rule to its runner, so up-to-date
// checks and restores never wait behind running rules; the worker pool takes two jobs per slot,
// one running and one waiting behind it on the same worker, and still runs at most -j); after a
// failure nothing new starts unless -k, in which case only the failed target's dependents are
// blocked. What happens to one target (decide → restore or run → commit → cache) is the
// executor's (executor/target-executor.ts); the scheduler knows only names, their dependencies
// and the TargetExecutor interface, so it is tested in memory with a fake executor
// (test/unit/scheduler.test.ts).
import { Semaphore } from '../util/semaphore.ts';

/** How one target ended. */
export type Outcome = 'up-to-date' | 'ran' | 'restored' | 'failed' | 'gate-failed' | 'blocked';

/** Outcomes a dependent may build on. */
export function succeeded(o: Outcome | undefined): boolean {
  return o === 'up-to-date' || o === 'ran' || o === 'restored';
}

/** The -j slots: take one around running a rule, give it back when the rule returns. */
export interface Slots {
  acquire(): Promise<void>;
  release(): void;
}

/** Whether the build is still going (read after every wait: a slot, a rule). */
export interface BuildState {
  /** SIGINT/SIGTERM: nothing new starts, running work is cancelled, nothing more is committed. */
  readonly interrupted: boolean;
  /** An executor threw (an engine write error): the build stops, its first error is reported. */
  readonly halted: boolean;
}

/** Carries out one target; the scheduler's only collaborator (executor/target-executor.ts). */
export interface TargetExecutor {
  /**
   * Bring one target up to date and say how it ended. A failure of the target is an outcome;
   * throwing halts the whole build (the error is the build's error).
   */
  execute(name: string, slots: Slots, state: BuildState): Promise<Outcome>;
  /** Stop the work in progress (running rules): called once on interruption or a halt. */
  cancel(): Promise<void>;
}

export interface SchedulerGraph {
  /** The targets to bring up to date, dependencies first (graph/resolved.ts closureOf). */
  plan: readonly string[];
  /** A target's dependencies; those outside the plan are not waited for. */
  deps(name: string): readonly string[];
}

export interface SchedulerOptions {
  jobs: number;
  /**
   * Rules handed to local runners at once (default `jobs`): more than -j when the runner queues
   * a job behind a running rule (the worker pool: 2 × -j), which still runs at most -j at once.
   */
  handOff?: number;
  keepGoing: boolean;
  /** A target that will not run because `by` failed or was blocked (or the build stopped). */
  onBlocked(name: string, by: string): void;
}

export interface ScheduleResult {
  outcomes: ReadonlyMap<string, Outcome>;
  interrupted: boolean;
  /** What an executor threw, when one did (the first). */
  halted: { error: unknown } | null;
}

export const STOPPED_AFTER_FAILURE = 'nothing: the build stopped after a failure (-k keeps going)';

/**
 * Targets handed to the executor between two turns of the event loop. An up-to-date target's
 * decision settles in promise callbacks alone, so without a turn a no-op-like build would decide
 * every target of the plan before the main thread reads a single message: a rule's result that
 * arrives meanwhile (the one changed target of a 1 000-target build) would wait behind ~1 000
 * decisions, and its dependents with it. A turn every YIELD_EVERY dispatches (~1 ms of decisions)
 * lets results and commits interleave with the decisions. Targets are handed out in batches (what
 * is ready when a batch starts, all of it, then a turn before the next), so a failure stops the
 * batches after the one it settles in, as when no turn was taken: a build that runs no rule ends
 * with the same outcomes; only when a running rule's result is read changes.
 */
export const YIELD_EVERY = 32;
const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export class Scheduler implements BuildState {
  interrupted = false;
  private haltedBy: { error: unknown } | null = null;
  private cancelling: Promise<void> | null = null;

  constructor(
    private readonly graph: SchedulerGraph,
    private readonly executor: TargetExecutor,
    private readonly opts: SchedulerOptions,
  ) {}

  get halted(): boolean {
    return this.haltedBy !== null;
  }

  async run(): Promise<ScheduleResult> {
    const { graph, opts } = this;
    const outcome = new Map<string, Outcome>();
    const slots = new Semaphore(opts.handOff ?? opts.jobs);
    let stop = false;
    // Ready queue by remaining-dependency counts: O(targets + edges), not a rescan per event.
    const inPlan = new Set(graph.plan);
    const waiting = new Map<string, number>();
    const dependents = new Map<string, string[]>();
    let ready: string[] = [];
    /** Dependents of a target that ran, ready: started at the next dispatch, ahead of the batch's rest. */
    let urgent: string[] = [];
    for (const n of graph.plan) {
      const deps = graph.deps(n).filter((d) => inPlan.has(d));
      waiting.set(n, deps.length);
      for (const d of deps) (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(n);
      if (deps.length === 0) ready.push(n);
    }
    const pending = new Set(graph.plan);
    let inFlight = 0;
    let wake: (() => void) | null = null;
    const settle = (n: string, o: Outcome): void => {
      outcome.set(n, o);
      if ((o === 'failed' || o === 'gate-failed') && !opts.keepGoing) stop = true;
      // The dependents of a target that ran go first (in plan order): an input of theirs changed,
      // so they will most likely run too, and a chain of such targets (one edited source under a
      // large graph) advances at every turn instead of after the up-to-date decisions queued before it.
      for (const r of dependents.get(n) ?? []) {
        const left = waiting.get(r)! - 1;
        waiting.set(r, left);
        if (left === 0) (o === 'ran' ? urgent : ready).push(r);
      }
    };
    /** Starts the urgent targets (none after a stop: they wait, as the next batch would). */
    const startUrgent = (): void => {
      if (stop || urgent.length === 0) return;
      const now = urgent;
      urgent = [];
      for (const n of now) start(n);
    };
    const start = (n: string): void => {
      pending.delete(n);
      const bad = graph.deps(n).find((d) => !succeeded(outcome.get(d)));
      if (bad) {
        opts.onBlocked(n, bad);
        settle(n, 'blocked');
        return;
      }
      inFlight++;
      void this.executor.execute(n, slots, this).then(
        (o) => {
          inFlight--;
          settle(n, o);
          wake?.();
        },
        (e: unknown) => {
          inFlight--;
          stop = true;
          this.halt(e);
          settle(n, 'failed');
          wake?.();
        },
      );
    };
    let sinceTurn = 0;
    outer: while (!this.interrupted) {
      startUrgent();
      while (!stop && ready.length > 0) {
        // One batch: the targets ready now, all handed out, as when no turn was taken (a failure
        // that settles during the batch's turns stops the batches after it, not the rest of this
        // one: which targets a stop leaves blocked does not depend on when a turn falls). The
        // dependents of a target that ran during the batch's turns start at the next dispatch:
        // only a rule's result makes them ready, so a build that runs no rule hands out the same
        // batches, and a stop still keeps them from starting.
        const batch = ready;
        ready = [];
        for (const n of batch) {
          if (++sinceTurn > YIELD_EVERY) {
            sinceTurn = 0;
            await nextTurn();
            if (this.interrupted) break outer; // the rest stays pending, neither started nor blocked
          }
          startUrgent();
          start(n);
        }
        startUrgent();
        // Before the next batch, every decision of this one settles (as when the loop waited for
        // the first result): a failure among them stops the build before its dependents' batch.
        if (ready.length > 0) {
          sinceTurn = 0;
          await nextTurn();
          if (this.interrupted) break outer;
        }
      }
      if (!stop && urgent.length > 0) continue;
      if (inFlight === 0) break;
      await new Promise<void>((r) => {
        wake = r;
      });
      wake = null;
    }
    if (!this.interrupted && !this.haltedBy) {
      for (const n of graph.plan) {
        if (!pending.has(n)) continue;
        const by = graph.deps(n).find((d) => {
          const o = outcome.get(d);
          return o === 'failed' || o === 'gate-failed' || o === 'blocked';
        });
        outcome.set(n, 'blocked');
        opts.onBlocked(n, by ?? STOPPED_AFTER_FAILURE);
      }
    }
    return { outcomes: outcome, interrupted: this.interrupted, halted: this.haltedBy };
  }

  /** SIGINT/SIGTERM: start nothing more and cancel what runs; resolves once it is cancelled. */
  async interrupt(): Promise<void> {
    this.interrupted = true;
    await this.cancel();
  }

  private halt(e: unknown): void {
    if (this.haltedBy) return;
    this.haltedBy = { error: e };
    void this.cancel();
  }

  private cancel(): Promise<void> {
    return (this.cancelling ??= this.executor.cancel());
  }
}
