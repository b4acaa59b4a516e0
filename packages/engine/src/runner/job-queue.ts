// A rule worker's jobs, one at a time (runner/worker.ts). The pool (runner/worker-pool.ts) may
// hand a worker its next job while the current one still runs, so that the worker starts it the
// moment it ends the current one instead of waiting for the main thread to read the result and
// post another. Such a waiting job carries `claim`: the pool may still take it back and give it
// to a worker that went idle (a long rule must not hold a short one hostage). Who gets it is
// settled by one compare-and-swap on a cell both threads share, because a worker in the middle of
// a synchronous rule reads no message: the pool writes the job's id into a free cell when it posts
// the job; the worker swaps the id for 0 before it starts the job, the pool swaps it for 0 to take
// the job back; exactly one of the two swaps succeeds. A job the worker loses is dropped without a
// word (the pool already answers for it elsewhere). A worker has a few cells, not one: the pool
// may see a job end (and post the next) before the worker has claimed the job that waited
// behind it, so two claims can be open on one worker at once.

export interface QueuedJob<J extends { id: number }> {
  job: J;
  /** Posted behind a running job: the cell the pool may take it back on, until this worker claims it. */
  claim?: number;
}

/** Claims open on one worker at once, at most: the job that waits and the one posted behind it. */
const CELLS = 4;

/** The cells shared with one worker: each holds the id of a job it may still claim (0: free). */
export function claimCells(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(CELLS * Int32Array.BYTES_PER_ELEMENT));
}

/** The worker's side of the claim: true when the job is this worker's to run. */
export function claimJob(cells: Int32Array | null, cell: number, id: number): boolean {
  return cells === null || Atomics.compareExchange(cells, cell, id, 0) === id;
}

/** The pool's side: true when the job was taken back before the worker claimed it. */
export function takeBack(cells: Int32Array, cell: number, id: number): boolean {
  return Atomics.compareExchange(cells, cell, id, 0) === id;
}

/** The pool's side, when it posts a job behind a running one: the cell it is claimed on. */
export function offer(cells: Int32Array, id: number): number {
  for (let i = 0; i < cells.length; i++) if (Atomics.compareExchange(cells, i, 0, id) === 0) return i;
  throw new Error('internal error: no free claim cell on a rule worker; please report');
}

export class JobQueue<J extends { id: number }> {
  private readonly waiting: QueuedJob<J>[] = [];
  private running = false;
  private cells: Int32Array | null = null;

  constructor(private readonly run: (job: J) => Promise<void>) {}

  /** The cells shared with the pool (sent once, before the first job that may be taken back). */
  share(cells: Int32Array): void {
    this.cells = cells;
  }

  push(q: QueuedJob<J>): void {
    this.waiting.push(q);
    if (!this.running) void this.drain();
  }

  /** Drop a job that has not started (an abort): true when it was waiting here. */
  drop(id: number): boolean {
    const at = this.waiting.findIndex((q) => q.job.id === id);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    return true;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let q = this.waiting.shift(); q; q = this.waiting.shift()) {
        if (q.claim !== undefined && !claimJob(this.cells, q.claim, q.job.id)) continue; // taken back: another worker runs it
        await this.run(q.job);
      }
    } finally {
      this.running = false;
    }
  }
}
