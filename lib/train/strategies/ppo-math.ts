// The PPO formulas, engine-free, so the unit tests can check them against hand computations and
// the tfjs loss (ppo.ts) can be checked against them:
//   GAE(λ)       δ_t = r_t + γ (1 − d_t) V_{t+1} − V_t;  A_t = δ_t + γ λ (1 − d_t) A_{t+1};
//                returns R_t = A_t + V_t (d_t = 1 on an episode's last transition: no bootstrap)
//   clipped      L_t = min(ρ_t A_t, clip(ρ_t, 1 − ε, 1 + ε) A_t), ρ_t = π(a_t|s_t) / π_old(a_t|s_t);
//   surrogate    the policy loss is −mean_t L_t
//   adaptive KL  (Ziegler et al. 2019) e = clip(KL / target − 1, −0.2, 0.2),
//                β ← min(β_max, β (1 + e · n / horizon)), n = transitions since the last update
export interface GaeResult {
  advantages: Float64Array;
  returns: Float64Array;
}

export function gae(
  rewards: ArrayLike<number>,
  values: ArrayLike<number>,
  dones: ArrayLike<boolean | number>,
  gamma: number,
  lam: number,
): GaeResult {
  const n = rewards.length;
  const advantages = new Float64Array(n);
  const returns = new Float64Array(n);
  let next = 0;
  let nextValue = 0;
  for (let t = n - 1; t >= 0; t--) {
    const notDone = dones[t] ? 0 : 1;
    const delta = rewards[t]! + gamma * notDone * nextValue - values[t]!;
    next = delta + gamma * lam * notDone * next;
    advantages[t] = next;
    returns[t] = next + values[t]!;
    nextValue = values[t]!;
  }
  return { advantages, returns };
}

/** Per-transition clipped surrogate objective min(ρA, clip(ρ, 1 − ε, 1 + ε)A). */
export function clippedObjective(ratio: number, advantage: number, clip: number): number {
  const clipped = Math.min(Math.max(ratio, 1 - clip), 1 + clip);
  return Math.min(ratio * advantage, clipped * advantage);
}

/** Advantages scaled to mean 0, standard deviation 1 (population), as PPO implementations do per batch. */
export function normalize(xs: Float64Array): Float64Array {
  const n = xs.length;
  if (n === 0) return xs;
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= n;
  let v = 0;
  for (const x of xs) v += (x - mean) ** 2;
  const sd = Math.sqrt(v / n);
  return xs.map((x) => (x - mean) / (sd + 1e-8));
}

/** The adaptive KL coefficient after an update that measured `kl` over `n` transitions, capped at `max` (no wind-up). */
export function adaptKlCoef(
  coef: number,
  kl: number,
  target: number,
  n: number,
  horizon: number,
  max = Number.POSITIVE_INFINITY,
): number {
  const e = Math.min(Math.max(kl / target - 1, -0.2), 0.2);
  return Math.min(max, coef * (1 + (e * n) / horizon));
}
