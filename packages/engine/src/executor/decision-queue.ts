// The executor's decisions, one at a time (they are quick: stat calls and hashing from the stat
// cache), in a fixed order, without starving the event loop.
//
// A build whose plan is mostly up to date (a one-leaf change: 34 targets to run among 1 000)
// decides every other target in one run of promise continuations: no worker's message, no
// signal is handled until all of them are decided, so the first rule's result waits behind
// hundreds of "up to date" decisions and the chain of changed targets behind it stalls. The queue
// therefore gives the event loop a turn (setImmediate: the poll phase that delivers a worker's
// message, a signal) once a decision ends more than `sliceMs` after the last turn, and lets a
// target that follows work done in this build (a dependency ran or was restored, so it likely
// runs too) be decided before targets that were merely ready earlier. Waiters of one lane are
// served first come, first served; which lane a target takes depends only on what this build
// committed, so a build without runs decides in exactly the order it did before.

/** How long decisions may run back to back before the event loop gets a turn. */
export const DECISION_SLICE_MS = 2;

export class DecisionQueue {
  private busy = false;
  private readonly first: (() => void)[] = [];
  private readonly rest: (() => void)[] = [];
  private lastTurn: number;

  constructor(
    private readonly sliceMs = DECISION_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
    private readonly turn: () => Promise<void> = () => new Promise<void>((r) => setImmediate(r)),
  ) {
    this.lastTurn = now();
  }

  /** Wait for this caller's turn to decide; `urgent` callers go before every other waiter. */
  async acquire(urgent: boolean): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return;
    }
    await new Promise<void>((r) => (urgent ? this.first : this.rest).push(r));
  }

  /** The decision ended: give the event loop a turn when the slice is used up, then the next waiter. */
  async release(): Promise<void> {
    if (this.now() - this.lastTurn >= this.sliceMs) {
      await this.turn();
      this.lastTurn = this.now();
    }
    const next = this.first.shift() ?? this.rest.shift();
    if (next) next();
    else this.busy = false;
  }
}
