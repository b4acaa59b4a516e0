// Why do the scripted baselines score what they score? A read-only probe of the built-in training
// environment (lib/train/env) on the held-out set ppo_eval plays: the shadow set plus its
// under-specified twins (built exactly as ppo_eval builds them: pack v2, the pool's settings,
// clarify_rate 1, seed ppo_eval.seed). It prints
//   1. each observation feature's AUC for "needs clarification" at step 0 (0.5: no signal; a
//      feature whose AUC is near 0 or 1 gives the label away on this set);
//   2. the text cue (a placeholder phrase or a pronoun before any name: what v2's hand rule asked
//      on) against the label;
//   3. each scripted baseline's success (all, needs-clarification, plain), over-clarification rate
//      and average actions, played as ppo_eval plays them (sampled, ppo_eval.samples episodes per
//      scenario, the same per-scenario seeds);
//   4. the hand rule's failures by task and kind, and what the episode ended on.
// Run after `npx rc1-build shadow_set weights` (it reads data/shadow_eval_245.jsonl and
// configs/weights.json): node --import tsx scripts/env-probe.ts [--all] (--all: every feature's AUC)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createRng } from 'rc1-build';
import { dataFileFormat, deriveSeed, loadSources } from '../lib/data/index.ts';
import { PoolParamsSchema } from '../lib/pool/index.ts';
import { readScenarios } from '../lib/rollouts/index.ts';
import { loadPack } from '../lib/templates/index.ts';
import { BASELINE_NAMES, baselineActor } from '../lib/train/baselines.ts';
import { newState } from '../lib/train/env/dialogue-env.ts';
import { FEATURE_NAMES, OBS_DIM, observeState } from '../lib/train/env/features.ts';
import { readWeights } from '../lib/train/env/reward.ts';
import { scenarioSpecs } from '../lib/train/env/scenario-spec.ts';
import { underspecifiedTwins } from '../lib/train/eval-sets.ts';
import { evaluatePolicy } from '../lib/train/policy.ts';

const ROOT = process.cwd();
for (const f of ['data/shadow_eval_245.jsonl', 'configs/weights.json'])
  if (!existsSync(f)) throw new Error(`${f} is missing: build it first (npx rc1-build shadow_set weights)`);
const yaml = (f: string): Record<string, unknown> => parse(readFileSync(join(ROOT, 'configs', f), 'utf8'));
const pool = PoolParamsSchema.parse(yaml('pool.yaml').pool);
const ev = yaml('ppo_eval.yaml').ppo_eval as { seed: number; samples: number };
const trainCfg = yaml('train.yaml').train as {
  env: { max_turns: number; noise: { tool_failure: number; search_miss: number; vague_reply: number } };
};
const overclar = (yaml('evaluation.yaml').overclar ?? { alpha: 0.1, cap: 3 }) as { alpha: number; cap: number };

const shadow = await readScenarios([join(ROOT, 'data/shadow_eval_245.jsonl')], ROOT);
const held = new Set(shadow.map((s) => s.source_id));
const raw = ['gsm8k', 'hotpotqa', 'strategyqa']
  .flatMap((t) => readdirSync(join(ROOT, 'data/raw', t)).map((f) => join(ROOT, 'data/raw', t, f)))
  .filter((f) => dataFileFormat(f) !== null)
  .sort();
const { items } = await loadSources(raw, { onError: 'fail', root: ROOT });
const packDir = join(ROOT, 'templates/pack_v2');
const pack = await loadPack(
  readdirSync(packDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(packDir, f)),
  ROOT,
);
const twins = underspecifiedTwins(
  items.filter((i) => held.has(i.source_id)),
  pack,
  pool,
  ev.seed,
  shadow.length,
  createRng,
);
const scenarios = [...shadow, ...twins.scenarios];
const specs = scenarioSpecs(scenarios);
const y = scenarios.map((s) => (s.needs_clarification ? 1 : 0));
console.log(`held-out set: ${shadow.length} shadow + ${twins.scenarios.length} twins`);

function auc(scores: readonly number[], labels: readonly number[]): number {
  let num = 0;
  let pos = 0;
  let neg = 0;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] !== 1) continue;
    pos += 1;
    for (let j = 0; j < labels.length; j++)
      if (labels[j] === 0) num += scores[i]! > scores[j]! ? 1 : scores[i] === scores[j] ? 0.5 : 0;
  }
  for (const v of labels) if (v === 0) neg += 1;
  return num / (pos * neg);
}

const step0 = specs.map((s) => {
  const o = new Float32Array(OBS_DIM);
  observeState(s, newState(), trainCfg.env.max_turns, o);
  return o;
});
const all = process.argv.includes('--all');
console.log(`\n1. step-0 feature AUC for needs_clarification${all ? '' : ' (|AUC − .5| ≥ .05 shown)'}`);
FEATURE_NAMES.forEach((name, j) => {
  const a = auc(
    step0.map((o) => o[j]!),
    y,
  );
  if (all || Math.abs(a - 0.5) >= 0.05) console.log(`   ${name.padEnd(22)} ${a.toFixed(3)}`);
});

const at = (name: (typeof FEATURE_NAMES)[number]): number => FEATURE_NAMES.indexOf(name);
const cueOf = step0.map((o) => (o[at('placeholder_cue')]! > 0 || o[at('pronoun_before_name')]! > 0 ? 1 : 0));
const cm = [0, 0, 0, 0];
cueOf.forEach((c, i) => {
  cm[y[i]! * 2 + c] = cm[y[i]! * 2 + c]! + 1;
});
console.log('\n2. text cue (placeholder phrase or pronoun before a name) vs label');
console.log(`   needs clarification: cue ${cm[3]}, none ${cm[2]}`);
console.log(`   plain:               cue ${cm[1]}, none ${cm[0]}`);

const weights = await readWeights(join(ROOT, 'configs/weights.json'));
const env = {
  weights,
  reward: { use_overclar_penalty: true, alpha: overclar.alpha, cap: overclar.cap, beta: 0.2 },
  noise: trainCfg.env.noise,
  maxTurns: trainCfg.env.max_turns,
  greedy: false,
};
console.log(`\n3. baselines (${ev.samples} sampled episodes per scenario)`);
console.log('   policy              success  nc-succ  plain-succ  overclar  actions  reward');
let handEpisodes: ReturnType<typeof evaluatePolicy>['episodes'] = [];
for (const name of BASELINE_NAMES) {
  const eps = Array.from(
    { length: ev.samples },
    (_, i) =>
      evaluatePolicy(baselineActor(name, trainCfg.env.max_turns), specs, {
        ...env,
        seed: deriveSeed(ev.seed, `episode-set:${i}`),
      }).episodes,
  ).flat();
  if (name === 'hand-rule') handEpisodes = eps;
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const nc = eps.filter((e) => e.needs_clarification);
  const pl = eps.filter((e) => !e.needs_clarification);
  console.log(
    `   ${name.padEnd(18)}  ${mean(eps.map((e) => +e.success)).toFixed(3)}    ${mean(nc.map((e) => +e.success)).toFixed(3)}    ${mean(pl.map((e) => +e.success)).toFixed(3)}       ${mean(pl.map((e) => +(e.clarifications > 0))).toFixed(3)}     ${mean(eps.map((e) => e.actions)).toFixed(2)}    ${mean(eps.map((e) => e.reward)).toFixed(3)}`,
  );
}
console.log('\n4. hand-rule failures (task / kind: failed of episodes; the commonest traces)');
const groups = new Map<string, { n: number; fail: number; traces: Map<string, number> }>();
for (const e of handEpisodes) {
  const k = `${e.task}/${e.needs_clarification ? 'twin' : 'plain'}`;
  const g = groups.get(k) ?? { n: 0, fail: 0, traces: new Map() };
  g.n += 1;
  if (!e.success) {
    g.fail += 1;
    const t = e.trace.join(' ');
    g.traces.set(t, (g.traces.get(t) ?? 0) + 1);
  }
  groups.set(k, g);
}
for (const [k, g] of [...groups].sort()) {
  const top = [...g.traces]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([t, c]) => `${c}× [${t}]`)
    .join('  ');
  console.log(`   ${k.padEnd(20)} ${g.fail}/${g.n}  ${top}`);
}
