// A counting semaphore: at most `free` holders at once, waiters served first come, first served.
// The scheduler's -j slots are one of these (the executor's decisions: executor/decision-queue.ts).

export class Semaphore {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiters.push(r));
  }

  release(): void {
    const w = this.waiters.shift();
    if (w) w();
    else this.free++;
  }
}
