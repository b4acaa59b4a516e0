// The tfjs PPO loss (strategies/ppo-loss.ts) term by term against the engine-free formulas
// (ppo-math.ts clippedObjective, mlp.ts forwardNet / categoricalKl / entropyOf) on the same
// weights and minibatch, with ratios pushed into both clipped regimes; and the wasm backend is
// the single-threaded one (its multi-threaded build would not be bit-reproducible).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTf } from '../../lib/train/engines/tfjs/backend.ts';
import { TfModel } from '../../lib/train/engines/tfjs/model.ts';
import { categoricalKl, entropyOf, forwardNet, initParams, logSoftmax } from '../../lib/train/mlp.ts';
import { TrainRng } from '../../lib/train/rng.ts';
import { ppoLoss } from '../../lib/train/strategies/ppo-loss.ts';
import { clippedObjective } from '../../lib/train/strategies/ppo-math.ts';

const close = (a: number, b: number, eps = 1e-5): void => assert.ok(Math.abs(a - b) < eps, `${a} ≠ ${b}`);

test('wasm runs single-threaded and says it is bit-reproducible', async () => {
  const h = await loadTf('wasm');
  assert.equal(h.backend, 'wasm');
  assert.equal(h.tf.getBackend(), 'wasm');
  assert.equal(h.tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT'), false);
  assert.equal(h.deterministic, true);
});

test('the tfjs PPO loss equals the reference formulas term by term', async () => {
  const { tf } = await loadTf('wasm');
  const rng = new TrainRng(3);
  const shape = { obsDim: 5, hidden: [8], actions: 4 };
  const params = initParams(shape, rng);
  // a policy head far from uniform, so ratios leave [1 − ε, 1 + ε]
  params.data[2] = params.data[2]!.map(() => 2 * rng.next() - 1);
  const ref = initParams(shape, new TrainRng(9));
  const model = new TfModel(tf, params.specs, params, { beta1: 0.9, beta2: 0.999, eps: 1e-8 });
  const m = 6;
  const obs = Float32Array.from({ length: m * 5 }, () => rng.next());
  const acts = [0, 1, 2, 3, 1, 2];
  const adv = [1.5, -0.7, 0.3, -1.2, 2.0, -0.4];
  const ret = [0.2, 0.9, -0.1, 0.5, 1.1, 0.0];
  const c = { clip: 0.2, vf_coef: 0.5, ent_coef: 0.01, kl_coef: 0.05 };
  let pg = 0,
    vf = 0,
    ent = 0,
    kl = 0;
  const old: number[] = [];
  const refLp: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < m; i++) {
    const lp = logSoftmax(forwardNet(params, 'policy', obs, i * 5, 5));
    const rl = logSoftmax(forwardNet(ref, 'policy', obs, i * 5, 5));
    refLp.push(...rl);
    const o = lp[acts[i]!]! + [0.5, -0.5, 0.05, 0.4, -0.3, 0.0][i]!; // behaviour log-probs: ratios e^{∓0.5…}
    old.push(o);
    const ratio = Math.exp(lp[acts[i]!]! - o);
    ratios.push(ratio);
    pg -= clippedObjective(ratio, adv[i]!, c.clip) / m;
    vf += (0.5 * (forwardNet(params, 'value', obs, i * 5, 5)[0]! - ret[i]!) ** 2) / m;
    ent += entropyOf(lp) / m;
    kl += categoricalKl(lp, rl) / m;
  }
  assert.ok(ratios.some((r) => r > 1.2) && ratios.some((r) => r < 0.8), 'both clip regimes are exercised');
  const terms = tf.tidy(() => {
    const t = ppoLoss(
      tf,
      model,
      {
        obs: tf.tensor2d(obs, [m, 5]),
        actions: tf.oneHot(tf.tensor1d(acts, 'int32'), 4).toFloat() as never,
        oldLogp: tf.tensor1d(old),
        adv: tf.tensor1d(adv),
        returns: tf.tensor1d(ret),
        refLogp: tf.tensor2d(refLp, [m, 4]),
      },
      c,
    );
    return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.dataSync()[0]!])) as Record<string, number>;
  });
  close(terms.policy!, pg);
  close(terms.value!, vf);
  close(terms.entropy!, ent);
  close(terms.kl!, kl);
  close(terms.total!, pg + c.vf_coef * vf - c.ent_coef * ent + c.kl_coef * kl);
  model.dispose();
});
