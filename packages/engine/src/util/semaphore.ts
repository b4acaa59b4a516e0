// A counting semaphore: at most `free` holders at once, waiters served first come, first served.
// The scheduler's -j slots and the executor's one-at-a-time decisions are both one of these.

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
