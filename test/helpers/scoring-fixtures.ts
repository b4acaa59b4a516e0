// Scenario and rollout fixtures for the rollout and scoring tests, built from the committed raw
// datasets (data/raw) with the data layer's own scenario builder: the first `perTask` items of
// each task in (task, source_id) order; every third one rendered as needing a clarification (a
// test rendering: the user's turn is the question, the reveal a fixed sentence), so the
// clarification error modes have eligible scenarios.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, TestRig } from './rig.ts';
import {
  TASKS,
  buildScenario,
  compareSourceItems,
  loadSources,
  plainRender,
  type Scenario,
  type SourceItem,
} from '../../lib/data/index.ts';
import { syntheticRollouts, type ErrorRates, type Rollout } from '../../lib/rollouts/index.ts';

export const RATES: ErrorRates = {
  wrong_answer: 0.25,
  missing_tool_call: 0.2,
  unnecessary_clarification: 0.15,
  skipped_clarification: 0.3,
  verbosity: 0.2,
};

let items: SourceItem[] | null = null;

async function rawItems(): Promise<SourceItem[]> {
  if (items) return items;
  const dirs = ['gsm8k', 'hotpotqa', 'strategyqa'].map((d) => path.join(REPO, 'data/raw', d));
  const files = dirs
    .flatMap((d) =>
      fs
        .readdirSync(d)
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => path.join(d, f)),
    )
    .sort();
  items = [...(await loadSources(files, { onError: 'fail', root: REPO })).items].sort(compareSourceItems);
  return items;
}

export async function fixtureScenarios(perTask: number): Promise<Scenario[]> {
  const all = await rawItems();
  const out: Scenario[] = [];
  for (const task of TASKS) {
    all
      .filter((i) => i.task === task)
      .slice(0, perTask)
      .forEach((item, n) => {
        const id = `fx-${task}-${item.source_id}`;
        const plain = plainRender(item, id);
        out.push(
          buildScenario(
            item,
            n % 3 === 2
              ? {
                  ...plain,
                  template_id: 'fixture_clarify',
                  needs_clarification: true,
                  clarification: 'I mean the question exactly as written, in its usual sense.',
                  clarifying_question: 'Which reading of the question do you mean?',
                }
              : plain,
          ),
        );
      });
  }
  return out;
}

export async function fixtureRollouts(perTask: number, candidates = 4, seed = 11): Promise<Rollout[]> {
  return syntheticRollouts(await fixtureScenarios(perTask), {
    seed,
    candidates,
    policy: 'reference-perturbed-v1',
    rates: RATES,
  });
}

export function toJsonlText(records: readonly unknown[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join('');
}

// ---------------------------------------------------------------- CLI workspaces for the scoring targets

const SCORES_OUT =
  "{ scores: 'data/scores/scores.jsonl', unstable: 'reports/unstable_samples.jsonl', metrics: 'reports/scorer_metrics.json' }";
const SCORING_PARAMS = "['scoring.judge', 'scoring.aggregate', 'scoring.heuristic', 'scoring_live']";

/**
 *   fixtures/scenarios.jsonl --> rollouts_shadow --> scores --> not_simulated_round1 / _round2
 *                                       \\--> probe_scorer
 *   fixtures/runs.jsonl ------> rollouts_file   (the file source)
 *   fixtures/rollouts.jsonl --> probe_prod, scores_prod;  fixtures/scores.jsonl --> not_simulated_prod
 * The *_prod targets read fixture copies of dev outputs, so only the target under test runs in prod.
 */
export const SCORING_PIPELINE = `import { definePipeline, defineTarget, defineGate, target } from 'rc1-build';
export default definePipeline({
  profiles: ['dev', 'prod'], defaultProfile: 'dev',
  defaultTargets: ['not_simulated_round1', 'not_simulated_round2', 'probe_scorer'], freeFormConfig: ['scoring.stability'], // no stability gate here
  targets: [
    defineTarget({ name: 'rollouts_shadow', rule: 'rules/rollouts.ts', inputs: { scenarios: 'fixtures/scenarios.jsonl' },
      outputs: { rollouts: 'data/rollouts/shadow_rollouts.jsonl' }, params: ['rollouts'], secrets: ['POLICY_API_KEY'] }),
    defineTarget({ name: 'rollouts_file', rule: 'rules/rollouts.ts', inputs: { scenarios: 'fixtures/scenarios.jsonl', runs: 'fixtures/runs.jsonl' },
      outputs: { rollouts: 'data/rollouts/file_rollouts.jsonl' }, params: ['rollouts'] }),
    defineTarget({ name: 'scores', rule: 'rules/scores.ts', inputs: { rollouts: target('rollouts_shadow') }, outputs: ${SCORES_OUT},
      params: ${SCORING_PARAMS}, env: ['REWARD_LIVE_MODE', 'RUN_MODE'], secrets: ['JUDGE_KEY'], state: [{ path: '.rc1/scorecache.sqlite', cache: true }] }),
    defineGate({ name: 'probe_scorer', rule: 'rules/probe_scorer.ts', inputs: { rollouts: target('rollouts_shadow') },
      outputs: ['reports/preflight/scorer_probe.json'], report: 'reports/preflight/scorer_probe.json',
      params: ['scoring.probe', 'scoring.judge', 'scoring.heuristic', 'scoring_live'], env: ['REWARD_LIVE_MODE', 'RUN_MODE'], secrets: ['JUDGE_KEY'] }),
    defineGate({ name: 'probe_prod', rule: 'rules/probe_scorer.ts', inputs: { rollouts: 'fixtures/rollouts.jsonl' },
      outputs: ['reports/preflight/probe_prod.json'], report: 'reports/preflight/probe_prod.json',
      params: ['scoring.probe', 'scoring.judge', 'scoring.heuristic', 'scoring_live'], env: ['REWARD_LIVE_MODE', 'RUN_MODE'], secrets: ['JUDGE_KEY'] }),
    defineTarget({ name: 'scores_prod', rule: 'rules/scores.ts', inputs: { rollouts: 'fixtures/rollouts.jsonl' },
      outputs: { scores: 'prod/scores.jsonl', unstable: 'prod/unstable_samples.jsonl', metrics: 'prod/scorer_metrics.json' },
      params: ${SCORING_PARAMS}, env: ['REWARD_LIVE_MODE', 'RUN_MODE'], secrets: ['JUDGE_KEY'], state: [{ path: '.rc1/scorecache.sqlite', cache: true }] }),
    ...[1, 2].map((round) => defineGate({ name: 'not_simulated_round' + round, rule: 'rules/not_simulated.ts', inputs: { scores: target('scores', 'scores') },
      outputs: ['reports/preflight/not_simulated_round' + round + '.json'], report: 'reports/preflight/not_simulated_round' + round + '.json',
      params: ['scoring.not_simulated'], args: { round } })),
    defineGate({ name: 'not_simulated_prod', rule: 'rules/not_simulated.ts', inputs: { scores: 'fixtures/scores.jsonl' },
      outputs: ['reports/preflight/not_simulated_prod.json'], report: 'reports/preflight/not_simulated_prod.json',
      params: ['scoring.not_simulated'], args: { round: 1 } }),
  ],
});
`;

/** configs/scoring_live.yaml with the openai preset pointed at baseUrl and its key in JUDGE_KEY. */
export const LIVE_YAML = (baseUrl: string) =>
  fs
    .readFileSync(path.join(REPO, 'configs/scoring_live.yaml'), 'utf8')
    .replace(/preset: \w+/, 'preset: openai')
    .replace(/base_url: null/, `base_url: ${baseUrl}`)
    .replace(/api_key_env: null/, 'api_key_env: JUDGE_KEY');

export async function scoringRig(pipeline = SCORING_PIPELINE): Promise<TestRig> {
  const rig = new TestRig({
    'rc1.build.ts': pipeline,
    'fixtures/scenarios.jsonl': toJsonlText(await fixtureScenarios(8)),
  });
  for (const r of ['rollouts.ts', 'scores.ts', 'probe_scorer.ts', 'not_simulated.ts'])
    rig.write(`rules/${r}`, fs.readFileSync(path.join(REPO, 'rules', r), 'utf8'));
  rig.withRc1Lib();
  rig.write('configs/scoring.yaml', fs.readFileSync(path.join(REPO, 'configs/scoring.yaml'), 'utf8'));
  rig.write('configs/scoring_live.yaml', LIVE_YAML('http://127.0.0.1:9/v1'));
  return rig;
}
