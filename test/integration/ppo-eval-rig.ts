// A workspace for the ppo_eval and export_gguf integration tests: the project's rules, configs,
// raw data and template packs, and a pipeline of four targets:
//   data/raw/** --> shadow_set -------------------------------------------------------+
//   data/train_scenarios.jsonl, configs/weights.json, round2_pass --> sft --> train --+--> ppo_eval (gate)
//                                                                             train --+--> export_gguf
// The training scenarios are rendered by the seed pool's generator (shadow items excluded) and
// bucketed by the pool's band rules, as the balanced pool's are; the weights are equal. The run's
// size (ppo.steps, lr: laid over the dev profile) is the test's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { createRng } from '../../packages/engine/src/api/index.ts';
import { dataFileFormat, loadSources } from '../../lib/data/index.ts';
import { bandsSchema, bucketOf, dimensionsSchema, loadQwen3, MetricsComputer } from '../../lib/difficulty/index.ts';
import { PoolBuilder, PoolParamsSchema, poolConfig } from '../../lib/pool/index.ts';
import { loadPack } from '../../lib/templates/index.ts';
import { REPO, TestRig } from '../helpers/rig.ts';
import { sharedEntry } from '../helpers/shared-build.ts';
import { trainedKey } from '../helpers/trained-key.ts';
import { shadowSetJsonl } from '../helpers/shadow-fixture.ts';

const PIPELINE = `import { definePipeline, defineGate, defineTarget, target } from 'rc1-build';
const RAW = ['data/raw/gsm8k/*.jsonl', 'data/raw/hotpotqa/*.jsonl', 'data/raw/strategyqa/*.jsonl'];
export default definePipeline({
  profiles: ['dev', 'prod'], defaultProfile: 'dev',
  defaultTargets: ['ppo_eval', 'export_gguf'],
  // The workspace holds every shipped config; keys of the RC1 targets left out here are free-form.
  freeFormConfig: ['scale', 'difficulty.balance', 'difficulty.gate', 'reward', 'overclar.ablation', 'shadow_run', 'calibration', 'preflight', 'diversity', 'validation', 'rollouts', 'scoring', 'scoring_live', 'statistics'],
  targets: [
    defineTarget({ name: 'shadow_set', rule: 'rules/shadow_set.ts', inputs: { raw: RAW, v2: 'templates/pack_v2/*.json' },
      outputs: { scenarios: 'data/shadow_eval_245.jsonl', manifest: 'reports/rc1/sample_manifest.json' } }),
    defineTarget({ name: 'sft', rule: 'rules/sft.ts',
      inputs: { round2: 'reports/preflight/round2_pass.json', scenarios: 'data/train_scenarios.jsonl', weights: 'configs/weights.json' },
      outputs: { checkpoints: 'checkpoints/sft/', report: 'reports/sft.json' } }),
    defineTarget({ name: 'train', rule: 'rules/train.ts',
      inputs: { round2: 'reports/preflight/round2_pass.json', scenarios: 'data/train_scenarios.jsonl', weights: 'configs/weights.json', sft: target('sft', 'checkpoints') },
      outputs: { checkpoints: 'checkpoints/rc1/', metrics: 'reports/metrics.jsonl', config: 'reports/config_effective.yaml' } }),
    defineGate({ name: 'ppo_eval', rule: 'rules/ppo_eval.ts',
      inputs: { checkpoints: target('train', 'checkpoints'), sft: target('sft', 'checkpoints'), shadow: target('shadow_set', 'scenarios'), weights: 'configs/weights.json', raw: RAW, v2: 'templates/pack_v2/*.json' },
      outputs: { report: 'reports/ppo_eval.json', curve: 'reports/learning_curve.png' }, report: 'report' }),
    defineTarget({ name: 'export_gguf', rule: 'rules/export_gguf.ts', inputs: { checkpoints: target('train', 'checkpoints') }, outputs: { model: 'models/rc1-policy.gguf' } }),
  ],
});
`;

type Tree = Record<string, unknown>;

function readYaml(file: string): Tree {
  return parse(fs.readFileSync(file, 'utf8')) as Tree;
}

let scenarioCache: string | null = null;

/** n scenarios by the seed pool's generator over the raw data, shadow items excluded, with their buckets. */
async function trainingScenarios(n: number): Promise<string> {
  if (scenarioCache) return scenarioCache;
  const raw = ['gsm8k', 'hotpotqa', 'strategyqa']
    .flatMap((t) => fs.readdirSync(path.join(REPO, 'data/raw', t)).map((f) => path.join(REPO, 'data/raw', t, f)))
    .filter((f) => dataFileFormat(f) !== null)
    .sort();
  const { items } = await loadSources(raw, { onError: 'fail', root: REPO });
  const shadow = new Set(
    shadowSetJsonl()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { source_id: string }).source_id),
  );
  const pool = PoolParamsSchema.parse(readYaml(path.join(REPO, 'configs/pool.yaml')).pool);
  const packDir = path.join(REPO, 'templates/pack_v2');
  const pack = await loadPack(
    fs
      .readdirSync(packDir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(packDir, f)),
    REPO,
  );
  const builder = new PoolBuilder(items, shadow, pack, { ...poolConfig(pool), idPrefix: 'fixture' }, createRng);
  const d = readYaml(path.join(REPO, 'configs/difficulty.yaml')).difficulty as Tree;
  const bands = bandsSchema.parse(d.bands);
  const dims = dimensionsSchema.parse(d.dimensions);
  const metrics = new MetricsComputer(await loadQwen3(), {
    multiEntityMin: (d.metrics as Tree).multi_entity_min as number,
  });
  scenarioCache =
    [...builder.scenarios(n)]
      .map(({ hint: _hint, ...s }) =>
        JSON.stringify({ ...s, difficulty: bucketOf(bands, dims, metrics.compute(s)).bucket }),
      )
      .join('\n') + '\n';
  return scenarioCache;
}

/** ppo.steps and ppo.lr laid over the dev profile's (absent: the dev profile's own); the SFT run is short (one expert episode per scenario, sftEpochs epochs). */
export interface RunSize {
  steps?: number;
  lr?: number;
  scenarios?: number;
  sftEpochs?: number;
}

/** The size of the one trained policy the ppo_eval and export_gguf tests share (trainedPpoRig). */
export const SHARED_RUN = { steps: 12 } as const;

/** The workspace of a built-in tfjs PPO run of the given size. */
export async function ppoEvalRig(size: RunSize): Promise<TestRig> {
  const rig = new TestRig({ 'rc1.build.ts': PIPELINE });
  for (const p of ['rules', 'lib', 'configs', 'data/raw', 'templates'])
    fs.cpSync(path.join(REPO, p), path.join(rig.dir, p), { recursive: true });
  rig.write('data/train_scenarios.jsonl', await trainingScenarios(size.scenarios ?? 1200));
  const dev = readYaml(path.join(REPO, 'configs/profiles/dev.yaml'));
  const ppo = {
    ...(dev.ppo as Tree | undefined),
    ...(size.steps ? { steps: size.steps } : {}),
    ...(size.lr ? { lr: size.lr } : {}),
  };
  const train = {
    ...(dev.train as Tree | undefined),
    sft: { episodes: 1, epochs: size.sftEpochs ?? 3, lr: 0.003, batch: 512 },
  };
  rig.write('configs/profiles/dev.yaml', stringify({ ...dev, ppo, train }));
  rig.write(
    'configs/weights.json',
    `${JSON.stringify({ weights: { correctness: 1 / 7, reasoning: 1 / 7, clarity: 1 / 7, conciseness: 1 / 7, clarification: 1 / 7, tool_use: 1 / 7, format_safety: 1 / 7 } })}\n`,
  );
  rig.write('reports/preflight/round2_pass.json', '{"round": "round2", "pass": true}\n');
  return rig;
}

/**
 * A fresh copy of the ppo_eval rig of `size` in which `train` (and the `sft` it needs) is built and
 * up to date, copied from one shared build (test/helpers/shared-build.ts): the slow tests that only
 * need a trained policy share it instead of each training its own. The key (trainedKey,
 * test/helpers/trained-key.ts) covers every source the build can read and the size. The caller owns
 * the copy (rig.cleanup()).
 */
export async function trainedPpoRig(size: RunSize): Promise<TestRig> {
  const key = trainedKey(REPO, size);
  const entry = await sharedEntry(`trained-${key.slice(0, 24)}`, async (dir) => {
    const rig = await ppoEvalRig(size);
    try {
      const r = rig.run(['train']);
      if (r.code !== 0) throw new Error(`shared trained policy: train failed (exit ${r.code})\n${r.stdout}${r.stderr}`);
      fs.cpSync(rig.dir, dir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    } finally {
      rig.cleanup();
    }
  });
  const rig = new TestRig();
  fs.cpSync(entry, rig.dir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  const status = rig.run(['status', 'train']);
  if (!/^train\s+up-to-date/m.test(status.stdout)) {
    rig.cleanup();
    throw new Error(
      `shared trained policy: train is not up to date in the copy of ${entry}:\n${status.stdout}${status.stderr}`,
    );
  }
  return rig;
}
