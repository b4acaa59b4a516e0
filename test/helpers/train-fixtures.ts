// Fixtures for the train tests: small, well-formed scenarios of the three tasks written in code
// (a seeded generator, not real dataset items: the tests check the trainer's mechanics, not the
// data), the calibrated-weights file, round-2 tickets, the effective config resolved from the
// repository's configs with small sizes, a TestRig workspace that declares only `train`, and a
// temp workspace plus one runTraining call for the tests that drive the trainer API directly.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { ppoSchema } from '../../lib/evaluation/config.ts';
import type { RolloutScenario } from '../../lib/rollouts/index.ts';
import { resolveTrainConfig, runTraining, trainSectionSchema, type TrainConfig } from '../../lib/train/index.ts';
import { REPO, TestRig } from './rig.ts';

const NAMES = [
  'Ada Lovelace',
  'Alan Turing',
  'Grace Hopper',
  'Edsger Dijkstra',
  'Barbara Liskov',
  'Donald Knuth',
  'Ken Thompson',
  'Frances Allen',
];
const CITIES = ['Lisbon', 'Oslo', 'Quito', 'Hanoi', 'Nairobi', 'Perth', 'Tbilisi', 'Lima'];

/** n scenarios cycling hotpotqa / strategyqa / gsm8k, every third one under-specified (a placeholder phrase, revealed when asked). */
export function makeScenarios(n: number): RolloutScenario[] {
  const diffs = ['easy', 'medium', 'hard'] as const;
  return Array.from({ length: n }, (_, i) => {
    const task = (['hotpotqa', 'strategyqa', 'gsm8k'] as const)[i % 3]!;
    const needs = i % 3 === Math.floor(i / 3) % 3;
    const person = NAMES[i % NAMES.length]!;
    const city = CITIES[(i * 3) % CITIES.length]!;
    const id = `fx-${String(i).padStart(4, '0')}`;
    const base = {
      id,
      task,
      source_id: `src-${i}`,
      role: 'student',
      style: 'plain',
      template_id: 'fixture',
      tools: [task === 'gsm8k' ? 'calc' : 'wiki'] as ('calc' | 'wiki')[],
      difficulty: diffs[Math.floor(i / 9) % 3]!,
    };
    if (task === 'gsm8k') {
      const a = 3 + (i % 7);
      const b = 4 + (i % 5);
      const text = needs
        ? `Sam buys a certain number of boxes with ${b} pens each, then gives away 2 pens. How many pens are left?`
        : `Sam buys ${a} boxes with ${b} pens each, then gives away 2 pens. How many pens are left?`;
      const steps = [
        ...(needs ? [{ type: 'clarify' as const, ask: 'How many boxes exactly?', reply: `It is ${a}.` }] : []),
        { type: 'tool_call' as const, tool: 'calc' as const, input: `${a}*${b}`, output: String(a * b) },
        { type: 'thought' as const, text: `${a} boxes of ${b} pens make ${a * b} pens.` },
        { type: 'tool_call' as const, tool: 'calc' as const, input: `${a * b}-2`, output: String(a * b - 2) },
        { type: 'thought' as const, text: `After giving away 2, ${a * b - 2} remain.` },
      ];
      return {
        ...base,
        messages: [{ role: 'user' as const, content: text }],
        context: [],
        gold_answer: String(a * b - 2),
        needs_clarification: needs,
        clarification: needs ? `It is ${a}.` : null,
        reference: { steps, final_answer: String(a * b - 2) },
      };
    }
    const docA = { id: 'p1', title: person, text: `${person} was born in ${city}.`, supporting: true };
    const docB = { id: 'p2', title: city, text: `${city} lies on a river and has a famous harbour.`, supporting: true };
    const noise = {
      id: 'p3',
      title: 'Unrelated Place',
      text: 'Unrelated Place is a village with a mill.',
      supporting: false,
    };
    if (task === 'hotpotqa') {
      const q = needs
        ? 'Which river city was the one my friend mentioned born in?'
        : `Which river city was ${person} born in?`;
      const steps = [
        ...(needs ? [{ type: 'clarify' as const, ask: 'Whom do you mean?', reply: `I mean ${person}.` }] : []),
        { type: 'tool_call' as const, tool: 'wiki' as const, input: person, output: docA.text },
        { type: 'tool_call' as const, tool: 'wiki' as const, input: city, output: docB.text },
      ];
      return {
        ...base,
        messages: [{ role: 'user' as const, content: q }],
        context: [docA, docB, noise],
        gold_answer: city,
        needs_clarification: needs,
        clarification: needs ? `I mean ${person}.` : null,
        reference: { steps, final_answer: city },
      };
    }
    const yes = i % 2 === 0;
    const fact = {
      id: 'fact1',
      title: person,
      text: `${person} ${yes ? 'did' : 'did not'} write software.`,
      supporting: true,
    };
    const q = needs ? 'Did that thing we talked about write software?' : `Did ${person} write software?`;
    const steps = [
      ...(needs
        ? [{ type: 'clarify' as const, ask: 'Who do you mean?', reply: `I was talking about ${person}.` }]
        : []),
      { type: 'thought' as const, text: `Did ${person} write software?` },
    ];
    return {
      ...base,
      messages: [{ role: 'user' as const, content: q }],
      context: [fact],
      gold_answer: yes ? 'yes' : 'no',
      needs_clarification: needs,
      clarification: needs ? `I was talking about ${person}.` : null,
      reference: { steps, final_answer: yes ? 'yes' : 'no' },
    };
  });
}

export const WEIGHTS_JSON = `${JSON.stringify({ version: 1, weights: { correctness: 0.3, reasoning: 0.15, clarity: 0.1, conciseness: 0.1, clarification: 0.15, tool_use: 0.1, format_safety: 0.1 } }, null, 2)}\n`;
export const ROUND2_PASS = `${JSON.stringify({ round: 'round2', pass: true, checks: [] }, null, 2)}\n`;
export const ROUND2_FAIL = `${JSON.stringify({ round: 'round2', pass: false, checks: [{ name: 'not_simulated.cache_hit_rate', pass: false, status: 'fail' }] }, null, 2)}\n`;

function merge(a: unknown, b: unknown): unknown {
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const o: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) o[k] = merge((a as Record<string, unknown> | undefined)?.[k], v);
    return o;
  }
  return b === undefined ? a : b;
}

/** Small sizes for tests, laid over the repository's configs/train.yaml and configs/ppo_scale.yaml. */
export const SMALL = {
  ppo: { steps: 6, lr: 0.001, batch: 16, rollout_len: 32, seeds: [11] },
  train: {
    checkpoint: { every: 2, keep_last: 2 },
    eval: { every: 2, max_episodes: 50 },
    env: { max_turns: 8, holdout: 0.2 },
    model: { hidden: [16, 16] },
    tfjs: { backend: 'wasm' },
    sft: { episodes: 1, epochs: 2, lr: 0.003, batch: 64 },
  },
};

export function smallConfig(over: { ppo?: object; train?: object } = {}): TrainConfig {
  const train = trainSectionSchema.parse(
    merge(merge(parse(fs.readFileSync(path.join(REPO, 'configs/train.yaml'), 'utf8')).train, SMALL.train), over.train),
  );
  const ppo = ppoSchema.parse(
    merge(merge(parse(fs.readFileSync(path.join(REPO, 'configs/ppo_scale.yaml'), 'utf8')).ppo, SMALL.ppo), over.ppo),
  );
  return resolveTrainConfig({ train, ppo, overclar: { alpha: 0.07, cap: 3 } });
}

/** A workspace that declares only `train` (plain-file inputs), with the repository's rule and configs and small dev sizes. */
export function trainWorkspace(round2: string | null = ROUND2_PASS): TestRig {
  const rig = new TestRig();
  fs.cpSync(path.join(REPO, 'configs'), path.join(rig.dir, 'configs'), { recursive: true });
  fs.cpSync(path.join(REPO, 'rules/train.ts'), path.join(rig.dir, 'rules/train.ts'));
  fs.cpSync(path.join(REPO, 'lib'), path.join(rig.dir, 'lib'), { recursive: true });
  rig.write('configs/profiles/dev.yaml', `${JSON.stringify(SMALL)}\n`);
  rig.write(
    'data/rollouts/rc1_seed.balanced.jsonl',
    makeScenarios(60)
      .map((s) => JSON.stringify(s))
      .join('\n') + '\n',
  );
  rig.write('configs/weights.json', WEIGHTS_JSON);
  if (round2 !== null) rig.write('reports/preflight/round2_pass.json', round2);
  rig.write(
    'rc1.build.ts',
    `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  profiles: ['dev', 'prod'], defaultProfile: 'dev',
  defaultTargets: ['train'],
  // The workspace holds every shipped config; keys of the RC1 targets left out here are free-form.
  freeFormConfig: ['data', 'shadow', 'scale', 'difficulty', 'reward', 'overclar.ablation', 'shadow_run', 'calibration', 'preflight', 'templates', 'diversity', 'pool', 'validation', 'ppo_eval', 'rollouts', 'scoring', 'scoring_live', 'statistics'],
  targets: [
    defineTarget({
      name: 'train',
      rule: 'rules/train.ts',
      inputs: { round2: 'reports/preflight/round2_pass.json', scenarios: 'data/rollouts/rc1_seed.balanced.jsonl', weights: 'configs/weights.json' },
      outputs: { checkpoints: 'checkpoints/rc1/', metrics: 'reports/metrics.jsonl', config: 'reports/config_effective.yaml' },
      secrets: ['TRAIN_SECRET_TOKEN'],
    }),
  ],
});
`,
  );
  return rig;
}

/** A temp workspace with data/scenarios.jsonl (`n` makeScenarios) and data/weights.json. */
export function trainDataWorkspace(prefix: string, n = 45): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.mkdirSync(path.join(root, 'data'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'data/scenarios.jsonl'),
    makeScenarios(n)
      .map((s) => JSON.stringify(s))
      .join('\n') + '\n',
  );
  fs.writeFileSync(path.join(root, 'data/weights.json'), WEIGHTS_JSON);
  return root;
}

export interface TrainInOptions {
  /** Input groups, paths relative to the workspace (default: data/scenarios.jsonl and data/weights.json). */
  inputs?: Record<string, string[]>;
  forced?: boolean;
  codeHash?: string;
  resumeAcrossCodeChange?: boolean;
  /** Sees every log line; may abort the run (an interrupt) or throw (as a kill would end it). */
  onLine?: (line: string, abort: () => void) => void;
}

/** `onLine` that interrupts the run once step `step` is logged. */
export const abortAfterStep =
  (step: number) =>
  (line: string, abort: () => void): void => {
    if (line.startsWith(`step ${step}:`)) abort();
  };

/** One runTraining call in `root` (profile dev, work dir .rc1/state/train), its outputs in a fresh out-* dir. */
export async function trainIn(root: string, config: TrainConfig, o: TrainInOptions = {}) {
  const out = fs.mkdtempSync(path.join(root, 'out-'));
  fs.mkdirSync(path.join(out, 'ck'));
  const ac = new AbortController();
  const lines: string[] = [];
  const groups = o.inputs ?? { scenarios: ['data/scenarios.jsonl'], weights: ['data/weights.json'] };
  const res = await runTraining({
    root,
    workDir: path.join(root, '.rc1/state/train'),
    profile: 'dev',
    config,
    env: {},
    forced: o.forced ?? false,
    codeHash: o.codeHash ?? 'c0de',
    ...(o.resumeAcrossCodeChange === undefined ? {} : { resumeAcrossCodeChange: o.resumeAcrossCodeChange }),
    signal: ac.signal,
    inputs: Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, v.map((f) => path.join(root, f))])),
    log: (l) => {
      lines.push(l);
      o.onLine?.(l, () => ac.abort());
    },
    progress: () => {},
    outputs: {
      checkpoints: path.join(out, 'ck'),
      log: path.join(out, 'train.log'),
      metrics: path.join(out, 'metrics.jsonl'),
      effectiveConfig: path.join(out, 'cfg.yaml'),
    },
  });
  return { ...res, lines, out };
}
