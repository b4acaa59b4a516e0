// KL-controller A/B: runs the built-in PPO strategy from the SFT policy with several settings of
// the KL controller (train.ppo.kl_hold, kl_replay, kl_horizon, kl_coef_max, lr…) in one process,
// on the data of the last `npx rc1-build train` of this workspace, and prints per setting and
// seed what ppo_eval gates (the largest kl_rollout / target_kl over the steps) beside the mean,
// how far one batch reads above the 7 before it under the same policy, the final policy's KL on
// 30 fresh batches, updates per step and the batch success of the last 50 steps.
// It reads reports/config_effective.yaml (its first seed's document: the effective dev config;
// a train.ppo key it lacks comes from configs/train.yaml),
// data/rollouts/rc1_seed.balanced.jsonl, configs/weights.json and checkpoints/sft/, so build
// `train` first. With the settings of the workspace's config a row reproduces the train target's
// kl_rollout exactly (same RNG draws as the tfjs engine). docs/kl-control.md has its tables.
// Usage: node --import tsx bench/kl-control.ts '<JSON {name: {ppo: {...}, lr?}}>' [seeds,comma] [steps]
//   e.g. node --import tsx bench/kl-control.ts '{"hold 0.6":{},"hold 0.7":{"ppo":{"kl_hold":0.7}}}'
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { lrAt, trainConfigSchema, type TrainConfig } from '../lib/train/config.ts';
import { loadTrainingData } from '../lib/train/data.ts';
import { loadTf } from '../lib/train/engines/tfjs/backend.ts';
import { TfjsModelHandle } from '../lib/train/engines/tfjs/handle.ts';
import { TfModel } from '../lib/train/engines/tfjs/model.ts';
import { ScenarioSampler } from '../lib/train/env/sampler.ts';
import { cloneParams, initParams } from '../lib/train/mlp.ts';
import { loadPolicy } from '../lib/train/policy.ts';
import { TrainRng } from '../lib/train/rng.ts';
import { batchKl, type PpoBatch, PpoStrategy } from '../lib/train/strategies/ppo.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const need = (rel: string): string => {
  const p = path.join(ROOT, rel);
  if (!fs.existsSync(p)) throw new Error(`${rel} is missing: run \`npx rc1-build train\` first`);
  return p;
};

const docs = parseAllDocuments(fs.readFileSync(need('reports/config_effective.yaml'), 'utf8'));
// keys of configs/train.yaml's ppo section that the built run predates take their configured value
const built = (docs[0]!.toJS() as { train: { ppo: Record<string, unknown> } }).train;
const configured = (parse(fs.readFileSync(need('configs/train.yaml'), 'utf8')) as { train: { ppo: object } }).train.ppo;
const base = trainConfigSchema.parse({ ...built, ppo: { ...configured, ...built.ppo } });
const variants = JSON.parse(process.argv[2] ?? '{"configured":{}}') as Record<
  string,
  { ppo?: Partial<TrainConfig['ppo']>; lr?: number }
>;
const seeds = (process.argv[3] ?? '20250820,20250821,20250822').split(',').map(Number);
const steps = Number(process.argv[4] ?? base.steps);
const data = await loadTrainingData(
  base,
  { scenarios: [need('data/rollouts/rc1_seed.balanced.jsonl')], weights: [need('configs/weights.json')] },
  ROOT,
);
const sft = await loadPolicy(need('checkpoints/sft'));
const tfh = await loadTf(base.tfjs.backend === 'auto' ? 'wasm' : base.tfjs.backend);
const T = base.ppo.target_kl;
const mean = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0) / a.length;
const sorted = (a: readonly number[]): number[] => [...a].sort((x, y) => x - y);

for (const [name, over] of Object.entries(variants)) {
  const t0 = performance.now();
  const rows: string[] = [];
  let worst = 0;
  for (const seed of seeds) {
    const cfg: TrainConfig = { ...base, seed, steps, lr: over.lr ?? base.lr, ppo: { ...base.ppo, ...over.ppo } };
    // the tfjs engine's order of draws: the random init first (discarded when the SFT policy is the start)
    const rng = new TrainRng(seed);
    initParams(sft.shape, rng);
    const model = new TfModel(tfh.tf, sft.params.specs, cloneParams(sft.params), cfg.adam);
    const h = new TfjsModelHandle(tfh.tf, model, cloneParams(sft.params), sft.shape, new AbortController().signal);
    const strategy = new PpoStrategy(cfg, new ScenarioSampler(data.train, cfg.sampling), data.env, rng);
    const recent: PpoBatch[] = [];
    const ratio: number[] = [];
    const rollout: number[] = [];
    const updates: number[] = [];
    const success: number[] = [];
    for (let step = 0; step < steps; step++) {
      const b = strategy.collect(step, h);
      if (recent.length === 7) {
        let k = 0;
        let n = 0;
        for (const x of recent) {
          k += batchKl(h.params(), x) * x.n;
          n += x.n;
        }
        ratio.push(batchKl(h.params(), b) / (k / n));
      }
      recent.push(b);
      if (recent.length > 7) recent.shift();
      const s = strategy.update(step, h, b, lrAt(cfg, step));
      rollout.push(s.kl_rollout!);
      updates.push(s.updates);
      success.push(s.success ?? 0);
    }
    const probe = new PpoStrategy(cfg, new ScenarioSampler(data.train, cfg.sampling), data.env, new TrainRng(seed + 1));
    let kl = 0;
    let n = 0;
    for (let i = 0; i < 30; i++) {
      const b = probe.collect(steps, h);
      kl += batchKl(h.params(), b) * b.n;
      n += b.n;
    }
    model.dispose();
    const max = Math.max(...rollout);
    worst = Math.max(worst, max);
    const r = sorted(ratio);
    rows.push(
      `  seed ${seed}: kl_rollout/T max ${(max / T).toFixed(3)} (step ${rollout.indexOf(max) + 1}) mean ${(mean(rollout) / T).toFixed(3)}` +
        ` | one batch / 7 before: median ${r[r.length >> 1]!.toFixed(2)} p95 ${r[Math.floor(r.length * 0.95)]!.toFixed(2)} max ${r.at(-1)!.toFixed(2)}` +
        ` | final policy on 30 fresh batches KL/T ${(kl / n / T).toFixed(3)} | updates/step ${mean(updates).toFixed(2)}` +
        ` | success, last 50 steps ${mean(success.slice(-50)).toFixed(3)}`,
    );
  }
  console.log(
    `${name}: max kl_rollout / target_kl over seeds ${(worst / T).toFixed(3)} (${((performance.now() - t0) / 1000).toFixed(1)} s wall)`,
  );
  for (const r of rows) console.log(r);
}
