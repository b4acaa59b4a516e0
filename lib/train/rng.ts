// The trainer's PRNG: mulberry32 (the same generator as rc1-build's createRng) with its 32-bit
// state readable and settable, so a checkpoint can carry it and a resumed run draws exactly the
// numbers a straight run would. Every random choice of the built-in engine (weight init, scenario
// sampling, action sampling, minibatch shuffles, the environment's guesses) comes from one of these.
export class TrainRng {
  private a: number;

  constructor(seed: number) {
    this.a = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal (Box-Muller, one draw per call: two uniforms). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** An index drawn from unnormalised non-negative weights (the last positive one on round-off). */
  pick(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i]!;
    let u = this.next() * total;
    let last = 0;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i]!;
      if (w <= 0) continue;
      last = i;
      if (u < w) return i;
      u -= w;
    }
    return last;
  }

  /** In-place Fisher-Yates shuffle. */
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }

  get state(): number {
    return this.a;
  }

  set state(s: number) {
    this.a = s >>> 0;
  }
}
