// A rule job's stop request and its ctx.signal (runner/worker.ts). The AbortController is made
// only when the rule reads ctx.signal: most rules never do, and making one (an EventTarget with
// its signal) was ~12 µs of the worker a job, ~1 % of a build from clean of the 1 000-target graph.
/** Made when the job starts; abort() when the build stops it; `signal` for ctx.signal. */
export class JobAbort {
  private controller: AbortController | undefined;
  private asked = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.asked) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.asked = true;
    this.controller?.abort();
  }

  aborted(): boolean {
    return this.asked;
  }
}
