// Training benchmark: the built-in engine's environment steps/s and PPO updates/s per tfjs backend
// available here, with peak memory, through lib/train benchmarkTraining (the real PPO strategy,
// sampler, simulated dialogue, heuristic scoring and RC1 reward; no checkpoints, no files).
//   scenarios  600 scenarios rendered by the seed pool's generator (dev pool params, shadow items
//              excluded) with difficulty buckets by the pool's band rules; equal reward weights
//   config     the effective train config of configs/*.yaml with the dev profile laid over them
//   backends   wasm (the default) and cpu (pure JS, the comparison); tfjs-node / tfjs-node-gpu
//              when importable (their npm install downloads libtensorflow from
//              storage.googleapis.com: not reachable from this machine, so not installable here)
//   baseline   measured in the same run: a uniformly random policy playing the same environment
//              (no network at all): the ceiling the env + scoring put on env steps/s
// Each backend runs in its own Node process, so its peak RSS is its own.
// Usage: node --import tsx bench/train.ts [--quick]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createRng } from 'rc1-build';
import { loadSources, dataFileFormat } from '../lib/data/index.ts';
import { bucketOf, bandsSchema, dimensionsSchema, loadQwen3, MetricsComputer } from '../lib/difficulty/index.ts';
import { PoolBuilder, PoolParamsSchema, poolConfig } from '../lib/pool/index.ts';
import type { RolloutScenario } from '../lib/rollouts/index.ts';
import { loadPack } from '../lib/templates/index.ts';
import { ppoSchema } from '../lib/evaluation/config.ts';
import { benchmarkTraining, resolveTrainConfig, trainSectionSchema, type TrainConfig } from '../lib/train/index.ts';
import { ACTIONS, newState, stepEnv } from '../lib/train/env/dialogue-env.ts';
import { scenarioSpecs } from '../lib/train/env/scenario-spec.ts';
import { TrainRng } from '../lib/train/rng.ts';
import { DIMENSIONS } from '../lib/scoring/types.ts';
import { fmtInt, hasFlag, machineReport, table } from './util.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = hasFlag('--quick');
const STEPS = quick ? 3 : 8;
const N_SCENARIOS = 600;
const WEIGHTS = Object.fromEntries(DIMENSIONS.map((d) => [d, 1 / DIMENSIONS.length])) as Record<
  (typeof DIMENSIONS)[number],
  number
>;

type Tree = Record<string, unknown>;

/** configs/*.yaml merged, configs/profiles/dev.yaml laid over them (as the engine does). */
function devConfig(): Tree {
  const merge = (a: Tree, b: Tree): Tree => {
    const out: Tree = { ...a };
    for (const [k, v] of Object.entries(b)) {
      const cur = out[k];
      out[k] =
        cur && v && typeof cur === 'object' && typeof v === 'object' && !Array.isArray(v)
          ? merge(cur as Tree, v as Tree)
          : v;
    }
    return out;
  };
  let tree: Tree = {};
  for (const f of fs
    .readdirSync(path.join(ROOT, 'configs'))
    .filter((n) => n.endsWith('.yaml'))
    .sort())
    tree = merge(tree, parse(fs.readFileSync(path.join(ROOT, 'configs', f), 'utf8')) as Tree);
  return merge(tree, parse(fs.readFileSync(path.join(ROOT, 'configs/profiles/dev.yaml'), 'utf8')) as Tree);
}

async function makeScenarios(cfg: Tree, file: string): Promise<void> {
  const raw = ['gsm8k', 'hotpotqa', 'strategyqa']
    .flatMap((t) => fs.readdirSync(path.join(ROOT, 'data/raw', t)).map((f) => path.join(ROOT, 'data/raw', t, f)))
    .filter((f) => dataFileFormat(f) !== null)
    .sort();
  const { items } = await loadSources(raw, { onError: 'fail', root: ROOT });
  const shadowFile = path.join(ROOT, 'data/shadow_eval_245.jsonl');
  const held = new Set(
    fs.existsSync(shadowFile)
      ? fs
          .readFileSync(shadowFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { source_id: string }).source_id)
      : [],
  );
  const pool = PoolParamsSchema.parse(cfg.pool);
  const pack = await loadPack(
    fs
      .readdirSync(path.join(ROOT, 'templates/pack_v2'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(ROOT, 'templates/pack_v2', f)),
    ROOT,
  );
  const builder = new PoolBuilder(items, held, pack, { ...poolConfig(pool), idPrefix: 'bench' }, createRng);
  const d = cfg.difficulty as Tree;
  const bands = bandsSchema.parse(d.bands);
  const dims = dimensionsSchema.parse(d.dimensions);
  const metrics = new MetricsComputer(await loadQwen3(), {
    multiEntityMin: (d.metrics as Tree).multi_entity_min as number,
  });
  const lines = [...builder.scenarios(N_SCENARIOS)].map((s) =>
    JSON.stringify({ ...s, difficulty: bucketOf(bands, dims, metrics.compute(s)).bucket }),
  );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

/** Child: one backend, or the random-policy baseline; prints one JSON line. */
async function child(which: string, scenarioFile: string): Promise<void> {
  const tree = devConfig() as { train: unknown; ppo: unknown; overclar: { alpha: number; cap: number } };
  const config: TrainConfig = resolveTrainConfig({
    train: trainSectionSchema.parse(tree.train),
    ppo: ppoSchema.parse(tree.ppo),
    overclar: { alpha: tree.overclar.alpha, cap: tree.overclar.cap },
  });
  const scenarios = fs
    .readFileSync(scenarioFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RolloutScenario);
  if (which === 'random') {
    const specs = scenarioSpecs(scenarios);
    const rng = new TrainRng(config.seed);
    const env = {
      maxTurns: config.env.max_turns,
      weights: WEIGHTS,
      reward: { ...config.reward },
      noise: { ...config.env.noise },
    };
    let steps = 0;
    let peak = process.memoryUsage().rss;
    const t0 = performance.now();
    const budget = quick ? 1500 : 4000;
    for (let e = 0; performance.now() - t0 < budget; e++) {
      const spec = specs[e % specs.length]!;
      const st = newState();
      while (!stepEnv(spec, st, rng.int(ACTIONS.length), rng, env)) steps += 1;
      steps += 1;
      if (e % 100 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    const s = (performance.now() - t0) / 1000;
    console.log(
      JSON.stringify({
        backend: 'random policy (baseline)',
        detail: 'uniform actions, no network: env + scoring + reward only',
        env_steps_per_s: steps / s,
        updates_per_s: null,
        step_ms: null,
        peak_rss_mb: peak / 2 ** 20,
      }),
    );
    return;
  }
  const [row] = await benchmarkTraining({
    scenarios,
    weights: WEIGHTS,
    config,
    backends: [which as 'wasm'],
    steps: STEPS,
    warmup: 1,
  });
  console.log(JSON.stringify(row));
}

function canImport(pkg: string): boolean {
  return (
    spawnSync(
      process.execPath,
      ['-e', `import(${JSON.stringify(pkg)}).then(() => process.exit(0), () => process.exit(1))`],
      { cwd: ROOT },
    ).status === 0
  );
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--child');
  if (i >= 0) return child(process.argv[i + 1]!, process.argv[i + 2]!);
  console.log('## Training: environment steps/s and PPO updates/s per tfjs backend (built-in engine, dev config)\n');
  console.log(machineReport());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-bench-train-'));
  try {
    const cfg = devConfig();
    const file = path.join(dir, 'scenarios.jsonl');
    await makeScenarios(cfg, file);
    const train = cfg.train as Tree;
    const ppo = { ...(cfg.ppo as Tree), ...(train.ppo as Tree) };
    console.log(
      `scenarios: ${N_SCENARIOS} from the seed pool generator, buckets by the pool's band rules; equal reward weights`,
    );
    console.log(
      `PPO: rollout_len ${String(ppo.rollout_len)}, batch ${String(ppo.batch)}, epochs ${String(ppo.epochs)}, hidden ${JSON.stringify((train.model as Tree).hidden)}, max_turns ${String((train.env as Tree).max_turns)}; ${STEPS} measured iterations after 1 warm-up\n`,
    );
    const rows: string[][] = [];
    const notes: string[] = [];
    for (const which of ['random', 'cpu', 'wasm', 'tfjs-node', 'tfjs-node-gpu']) {
      if (which.startsWith('tfjs-node') && !canImport(`@tensorflow/${which}`)) {
        rows.push([
          which,
          'not installable here',
          '-',
          '-',
          '-',
          `@tensorflow/${which} downloads libtensorflow from storage.googleapis.com at install (unreachable)`,
        ]);
        continue;
      }
      const r = spawnSync(
        process.execPath,
        [...process.execArgv, fileURLToPath(import.meta.url), '--child', which, file, ...(quick ? ['--quick'] : [])],
        { encoding: 'utf8', cwd: ROOT },
      );
      const line = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .at(-1);
      if (r.status !== 0 || !line) {
        rows.push([which, 'failed', '-', '-', '-', (r.stderr.trim().split('\n').at(-1) ?? '').slice(0, 100)]);
        continue;
      }
      const x = JSON.parse(line) as {
        backend: string;
        detail: string;
        env_steps_per_s: number;
        updates_per_s: number | null;
        step_ms: number | null;
        peak_rss_mb: number;
      };
      rows.push([
        x.backend,
        fmtInt(x.env_steps_per_s),
        x.updates_per_s === null ? '-' : x.updates_per_s.toFixed(1),
        x.step_ms === null ? '-' : fmtInt(x.step_ms),
        fmtInt(x.peak_rss_mb),
        x.detail,
      ]);
    }
    console.log(table(['backend', 'env steps/s', 'PPO updates/s', 'ms / iteration', 'peak RSS MB', 'detail'], rows));
    if (notes.length) console.log(notes.join('\n'));
    console.log(
      '\nenv steps/s: collection phase only (policy forward in JS + simulated dialogue + heuristic scoring + reward); PPO updates/s: minibatch gradient steps of the update phase (forward + backward + Adam + the KL controller check on its replay of recent states; a step its early stop undid counts).',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
