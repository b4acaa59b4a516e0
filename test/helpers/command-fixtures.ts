// Fixtures for the `command` engine: the rc1.build.ts of a workspace whose only target is RC1's
// train rule (for CLI tests), the effective config of the repository's configs switched to the
// command engine, and a TrainContext over a temp work dir whose callbacks record what the engine
// reports (for driving the engine directly, no build).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { ppoSchema } from '../../lib/evaluation/config.ts';
import type { CheckpointInfo, MetricsLine, TrainContext } from '../../lib/train/api.ts';
import { updateLatest } from '../../lib/train/checkpoints.ts';
import {
  configHash,
  resolveTrainConfig,
  trainConfigSchema,
  trainSectionSchema,
  type TrainConfig,
} from '../../lib/train/config.ts';
import { stringify } from 'yaml';
import { REPO, type TestRig } from './rig.ts';

/** rc1.build.ts of a workspace whose one target is RC1's train rule, with `extra` target fields (e.g. `secrets: ['X'],`). */
export function trainPipeline(extra = ''): string {
  return `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  profiles: ['dev', 'prod'], defaultProfile: 'dev',
  defaultTargets: ['train'],
  targets: [
    defineTarget({
      name: 'train', rule: 'rules/train.ts',
      inputs: { round2: 'reports/preflight/round2_pass.json', scenarios: 'data/scenarios.jsonl', weights: 'configs/weights.json' },
      outputs: { checkpoints: 'checkpoints/rc1/', metrics: 'reports/metrics.jsonl', config: 'reports/config_effective.yaml' },
      ${extra ?? ''}
    }),
  ],
});
`;
}

/** The effective config of the repo's configs (so the test follows the schema), switched to the command engine. */
export function trainConfig(steps: number, argv: string[], every = 2): TrainConfig {
  const read = (f: string): Record<string, unknown> =>
    parse(fs.readFileSync(path.join(REPO, 'configs', f), 'utf8')) as Record<string, unknown>;
  const train = trainSectionSchema.parse(read('train.yaml').train);
  const ppo = ppoSchema.parse(read('ppo_scale.yaml').ppo);
  const overclar = read('evaluation.yaml').overclar as { alpha: number; cap: number };
  const base = resolveTrainConfig({
    train,
    ppo: { ...ppo, steps, batch: 16, seeds: [7] },
    overclar: { alpha: overclar.alpha, cap: overclar.cap },
  });
  return trainConfigSchema.parse({
    ...base,
    engine: 'command',
    checkpoint: { every, keep_last: 10 },
    command: { argv, cwd: '.', env: {}, grace_s: 5, poll_ms: 20 },
  });
}

export interface Run {
  ctx: TrainContext;
  steps: MetricsLine[];
  checkpoints: CheckpointInfo[];
  log: string[];
  abort: AbortController;
}

/** A TrainContext over a temp work dir whose callbacks record what the engine reports. */
export function makeContext(
  root: string,
  config: TrainConfig,
  resume: { step: number; dir: string } | null = null,
): Run {
  const workDir = path.join(root, '.rc1/state/train');
  const checkpointDir = path.join(workDir, 'checkpoints/rc1');
  fs.mkdirSync(checkpointDir, { recursive: true });
  const scenarios = path.join(root, 'scenarios.jsonl');
  if (!fs.existsSync(scenarios)) {
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        id: `s${i}`,
        needs_clarification: i % 3 === 0,
        messages: [
          {
            role: 'user',
            content:
              i % 3 === 0
                ? `How much did a certain friend of mine pay for item ${i}?`
                : `Alice paid ${i} dollars for ${i} apples: what is one apple?`,
          },
        ],
      }),
    );
    fs.writeFileSync(scenarios, `${lines.join('\n')}\n`);
  }
  fs.writeFileSync(path.join(root, 'config_effective.yaml'), 'train: {}\n');
  const steps: MetricsLine[] = [];
  const checkpoints: CheckpointInfo[] = [];
  const log: string[] = [];
  const abort = new AbortController();
  const ctx: TrainContext = {
    config,
    configHash: configHash(config),
    profile: 'dev',
    seed: config.seed,
    startStep: resume?.step ?? 0,
    env: {},
    signal: abort.signal,
    inputs: { scenarios: [scenarios] },
    paths: {
      root,
      workDir,
      checkpointDir,
      resumeFrom: resume?.dir ?? null,
      metricsFile: path.join(workDir, 'metrics.jsonl'),
      logFile: path.join(workDir, 'train.log'),
      effectiveConfig: path.join(root, 'config_effective.yaml'),
    },
    progress: () => undefined,
    log: (l) => {
      log.push(l);
    },
    callbacks: {
      onStart: () => undefined,
      onStep: (m) => {
        steps.push(m);
      },
      onCheckpoint: async (c) => {
        checkpoints.push(c);
        await updateLatest(checkpointDir, path.basename(c.dir));
      },
      onEval: () => undefined,
      onEnd: () => undefined,
    },
  };
  return { ctx, steps, checkpoints, log, abort };
}

/**
 * The files a train-only workspace needs besides its train config: the over-clarification penalty,
 * reward weights, the round-2 ticket, 40 scenarios (every third under-specified) and the toy
 * trainer (examples/trainers/toy_trainer.py).
 */
export function writeToyTrainerFiles(rig: TestRig): void {
  rig.write('configs/evaluation.yaml', stringify({ overclar: { alpha: 0.07, cap: 3 } }));
  rig.write(
    'configs/weights.json',
    `${JSON.stringify({ weights: { correctness: 0.3, reasoning: 0.2, clarity: 0.1, conciseness: 0.1, clarification: 0.1, tool_use: 0.1, format_safety: 0.1 } })}\n`,
  );
  rig.write('reports/preflight/round2_pass.json', '{"round": "round2", "pass": true}\n');
  rig.write(
    'data/scenarios.jsonl',
    `${Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        id: `s${i}`,
        needs_clarification: i % 3 === 0,
        messages: [
          {
            role: 'user',
            content:
              i % 3 === 0
                ? `How much did a certain friend of mine pay for item ${i}?`
                : `Alice paid ${i} dollars for ${i} apples: what is one apple?`,
          },
        ],
      }),
    ).join('\n')}\n`,
  );
  rig.write(
    'examples/trainers/toy_trainer.py',
    fs.readFileSync(path.join(REPO, 'examples/trainers/toy_trainer.py'), 'utf8'),
  );
}
