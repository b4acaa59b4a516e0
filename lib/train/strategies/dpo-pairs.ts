// Preference pairs for the `dpo` strategy, from scored rollouts: per training scenario, the
// candidate with the highest RC1 reward (chosen) and the one with the lowest reward among those
// whose action sequence differs from the chosen one's (rejected), the reward computed from the
// candidate's median judge scores (data/scores/scores.jsonl) with the calibrated weights, the
// over-clarification penalty and the difficulty factor (env/reward.ts).
// Each trajectory becomes the policy's action sequence (clarify → ask, wiki / calc call → wiki /
// calc, thoughts → no action, the final answer → answer) replayed through the training
// environment to get the observation before each action; the reference policy's
// log-probabilities of those actions are computed once here.
// No pair comes from a scenario with fewer than two scored candidates, or whose best and worst
// tie, or whose lower-reward candidates all take the chosen one's actions (they differ only in
// the answer's correctness or wording, which the policy does not choose: such a pair's two paths
// are the same states and actions, so its DPO margin is 0 whatever the policy, its loss ln 2 and
// its gradient zero — it would only dilute every batch).
import { readValidated, rolloutSchema, type Rollout, type Trajectory } from '../../rollouts/index.ts';
import { readScores } from '../../scoring/score-record.ts';
import { ANSWER, ASK, CALC, WIKI, newState, stepEnv, type EnvOptions } from '../env/dialogue-env.ts';
import { OBS_DIM, observeState } from '../env/features.ts';
import { rc1Reward } from '../env/reward.ts';
import type { EnvScenario } from '../env/scenario-spec.ts';
import { forwardNet, logSoftmax, type Params } from '../mlp.ts';
import { TrainRng } from '../rng.ts';

export interface ActionPath {
  /** Observations [T, OBS_DIM]. */
  obs: Float32Array;
  actions: Int32Array;
  /** Σ_t log π_ref(a_t | s_t). */
  refLogp: number;
}

export interface PreferencePair {
  scenarioId: string;
  chosen: ActionPath;
  rejected: ActionPath;
  /** Reward of chosen minus rejected (> 0). */
  rewardGap: number;
}

/** The policy's actions along a trajectory. */
export function trajectoryActions(t: Trajectory): number[] {
  const out: number[] = [];
  for (const s of t.steps) {
    if (s.type === 'clarify') out.push(ASK);
    else if (s.type === 'tool_call') out.push(s.tool === 'wiki' ? WIKI : CALC);
  }
  out.push(ANSWER);
  return out;
}

/** Replays actions through the environment (cut at max_turns), recording the observation before each. */
export function replayPath(
  spec: EnvScenario,
  actions: readonly number[],
  env: EnvOptions,
  reference: Params,
): ActionPath {
  const st = newState();
  const rng = new TrainRng(0);
  const obs: number[] = [];
  const acts: number[] = [];
  const buf = new Float32Array(OBS_DIM);
  let refLogp = 0;
  for (const a of actions) {
    observeState(spec, st, env.maxTurns, buf);
    obs.push(...buf);
    acts.push(a);
    refLogp += logSoftmax(forwardNet(reference, 'policy', buf, 0, OBS_DIM))[a]!;
    if (stepEnv(spec, st, a, rng, env)) break;
  }
  return { obs: Float32Array.from(obs), actions: Int32Array.from(acts), refLogp };
}

export interface PairStats {
  scenarios: number;
  pairs: number;
  noPair: number;
  /** Of noPair: scenarios whose lower-reward candidates all take the best candidate's actions. */
  sameActions: number;
}

function sameActions(a: ActionPath, b: ActionPath): boolean {
  return a.actions.length === b.actions.length && a.actions.every((x, i) => x === b.actions[i]);
}

export async function buildPairs(
  rolloutFiles: readonly string[],
  scoreFiles: readonly string[],
  train: readonly EnvScenario[],
  env: EnvOptions,
  reference: Params,
  root: string,
): Promise<{ pairs: PreferencePair[]; stats: PairStats }> {
  const byId = new Map(train.map((s) => [s.id, s]));
  const rollouts = new Map<string, Rollout>();
  for (const f of rolloutFiles)
    for (const { value } of await readValidated(f, rolloutSchema, root))
      rollouts.set(value.rollout_id, value as Rollout);
  const candidates = new Map<string, { r: Rollout; reward: number }[]>();
  for (const f of scoreFiles) {
    for (const rec of await readScores(f)) {
      const spec = byId.get(rec.scenario_id);
      const r = rollouts.get(rec.rollout_id);
      if (!spec || !r || rec.status !== 'scored' || !rec.scores) continue;
      const reward = rc1Reward(
        rec.scores,
        env.weights,
        { needsClarification: spec.needsClarification, clarifications: r.clarifications, difficulty: spec.difficulty },
        env.reward,
      );
      candidates.set(spec.id, [...(candidates.get(spec.id) ?? []), { r, reward }]);
    }
  }
  const pairs: PreferencePair[] = [];
  let noPair = 0;
  let same = 0;
  for (const spec of train) {
    const c = candidates.get(spec.id) ?? [];
    if (c.length < 2) {
      noPair += 1;
      continue;
    }
    const sorted = [...c].sort((a, b) => b.reward - a.reward || a.r.candidate_index - b.r.candidate_index);
    const best = sorted[0]!;
    if (best.reward - sorted[sorted.length - 1]!.reward < 1e-9) {
      noPair += 1;
      continue;
    }
    const chosen = replayPath(spec, trajectoryActions(best.r.trajectory), env, reference);
    let rejected: { path: ActionPath; reward: number } | null = null;
    for (let i = sorted.length - 1; i > 0 && best.reward - sorted[i]!.reward >= 1e-9; i--) {
      const path = replayPath(spec, trajectoryActions(sorted[i]!.r.trajectory), env, reference);
      if (!sameActions(path, chosen)) {
        rejected = { path, reward: sorted[i]!.reward };
        break;
      }
    }
    if (rejected === null) {
      noPair += 1;
      same += 1;
      continue;
    }
    pairs.push({ scenarioId: spec.id, chosen, rejected: rejected.path, rewardGap: best.reward - rejected.reward });
  }
  return { pairs, stats: { scenarios: train.length, pairs: pairs.length, noPair, sameActions: same } };
}
