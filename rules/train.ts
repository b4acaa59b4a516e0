// train (RC1.md row train): trains the RC1 policy through the trainer API (rc1-build/train):
// the built-in tfjs engine (PPO or DPO on the simulated dialogue environment) or the `command`
// engine (the team's own trainer). It refuses to start unless the round-2 preflight ticket
// (`round2` input: reports/preflight/round2_pass.json) exists and says `"pass": true`.
// Inputs: round2, scenarios (the balanced pool), weights (configs/weights.json); for dpo also
// rollouts and scores. Params: `train` (configs/train.yaml), `ppo` (configs/ppo_scale.yaml),
// `overclar.alpha`, `overclar.cap` (configs/evaluation.yaml), resolved into one effective config
// (rc1-build/train resolveTrainConfig). The prod profile refuses the built-in tfjs engine: it
// trains in a simulated environment, and prod has no simulated anything. Outputs, in this order:
//   checkpoints/rc1/ (directory), reports/metrics.jsonl, reports/config_effective.yaml
// (its log lines go to the engine's rule log, logs/train.log; the full timestamped log of the run,
// across resumes, is train.log in the target's state dir)
// Training state lives in the target's state dir (ctx.stateDir, .rc1/state/train/) so an
// interrupted build resumes (see runTraining); the outputs are the final state copied out of it.
// The run's identity includes the rule's code (ctx.codeHash): a code change starts a new run
// unless train.resume_across_code_change is true.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { defineRule, RuleError, type RuleContext } from 'rc1-build';
import { resolveTrainConfig, runTraining, TRAIN_PARAMS } from 'rc1-build/train';
import { z } from 'zod';

const OUTPUTS = ['checkpoints/rc1', 'reports/metrics.jsonl', 'reports/config_effective.yaml'] as const;

/** The round-2 ticket must exist and say pass: true (RC1.md: written with pass true only when every check passed). */
export function checkRound2(files: readonly string[], root: string): void {
  const file = files.find((f) => f.endsWith('round2_pass.json'));
  const hint = 'build the preflight first: `npx rc1-build round2_pass` (every round-1 and round-2 check must pass)';
  if (!file) throw new RuleError(`train refuses to start: reports/preflight/round2_pass.json is missing; ${hint}`);
  const shown = relative(root, file);
  let ticket: unknown;
  try {
    ticket = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new RuleError(`train refuses to start: ${shown} ${code === 'ENOENT' ? 'is missing' : `is not valid JSON (${(e as Error).message})`}; ${hint}`);
  }
  const pass = (ticket as { pass?: unknown } | null)?.pass;
  if (pass !== true) {
    const failed = ((ticket as { checks?: { name?: string; status?: string }[] }).checks ?? []).filter((c) => c.status === 'fail').map((c) => c.name).filter(Boolean);
    throw new RuleError(`train refuses to start: ${shown} says "pass": ${JSON.stringify(pass ?? null)}${failed.length ? ` (failed: ${failed.join(', ')})` : ''}; fix the failing preflight checks and rebuild: \`npx rc1-build round2_pass\``);
  }
}

function group(ctx: RuleContext<unknown>, name: string): string[] {
  try { return ctx.inputs(name); } catch { return []; }
}

export default defineRule({
  name: 'train',
  version: 1,
  params: z.object(TRAIN_PARAMS),
  async run(ctx) {
    for (const [i, o] of OUTPUTS.entries()) {
      if (ctx.outputs[i] !== o) throw new RuleError(`train: declare the outputs ${OUTPUTS.map((x, k) => (k === 0 ? `${x}/` : x)).join(', ')} in this order (output ${i} is ${ctx.outputs[i] ?? 'missing'})`);
    }
    checkRound2(group(ctx, 'round2'), ctx.root);
    const config = resolveTrainConfig(ctx.params);
    if (ctx.profile === 'prod' && config.engine === 'tfjs') {
      throw new RuleError('train: the built-in tfjs engine trains in simulated-dialogue-v1, a simulation built from the data, and the prod profile allows no simulated anything: set train.engine: command (the team\'s trainer, train.command.argv) in configs/profiles/prod.yaml');
    }
    const inputs: Record<string, string[]> = {};
    for (const g of ['round2', 'scenarios', 'weights', 'rollouts', 'scores', 'shadow']) {
      const files = group(ctx, g);
      if (files.length > 0) inputs[g] = files;
    }
    const forced = ctx.forced;
    const { summary } = await runTraining({
      root: ctx.root, profile: ctx.profile, config, inputs, env: ctx.env, forced, signal: ctx.signal,
      workDir: ctx.stateDir, codeHash: ctx.codeHash, settings: { ppo: ctx.params.ppo, overclar: ctx.params.overclar },
      resumeAcrossCodeChange: ctx.params.train.resume_across_code_change === true, keepPreviousRuns: ctx.params.train.keep_previous_runs ?? 3,
      log: (l) => ctx.log(l), progress: (d, t) => ctx.progress(d, t, 'steps'),
      outputs: {
        checkpoints: ctx.output(OUTPUTS[0]), metrics: ctx.output(OUTPUTS[1]), effectiveConfig: ctx.output(OUTPUTS[2]),
      },
    });
    return { summary };
  },
});
