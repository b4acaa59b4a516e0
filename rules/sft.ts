// sft: behaviour cloning of the balanced pool's reference trajectories (rc1-build/train runSft,
// lib/train/sft.ts): the built-in policy that `train` starts every seed's PPO run from, and the
// reference of its KL term. Like train it refuses to start without a passed round-2 ticket, and
// the prod profile refuses the built-in engine. Inputs: round2, scenarios (the balanced pool),
// weights. Params: the train config (train, ppo, overclar.alpha, overclar.cap; the run of
// ppo.seeds[0]). Outputs: [0] checkpoints/sft/ (model.json, model.bin, checkpoint.json),
// [1] reports/sft.json (accuracy per epoch, train and held-out).
import { writeFileSync } from 'node:fs';
import { defineRule, RuleError, type RuleContext } from 'rc1-build';
import { resolveTrainConfig, runSft, TRAIN_PARAMS } from '../lib/train/index.ts';
import { z } from 'zod';
import { checkRound2 } from './train.ts';

function group(ctx: RuleContext<unknown>, name: string): string[] {
  try {
    return ctx.inputs(name);
  } catch {
    return [];
  }
}

export default defineRule({
  name: 'sft',
  version: 1,
  params: z.object(TRAIN_PARAMS),
  async run(ctx) {
    checkRound2(group(ctx, 'round2'), ctx.root);
    const config = resolveTrainConfig(ctx.params);
    if (ctx.profile === 'prod' && config.engine === 'tfjs')
      throw new RuleError(
        "sft: the built-in engine clones a policy in a simulated environment, and the prod profile allows no simulated anything: the team's trainer does its own SFT",
      );
    const inputs = { scenarios: group(ctx, 'scenarios'), weights: group(ctx, 'weights') };
    const report = await runSft({
      config,
      inputs,
      root: ctx.root,
      outDir: ctx.output('checkpoints'),
      signal: ctx.signal,
      log: (l) => ctx.log(l),
    });
    writeFileSync(ctx.output('report'), `${JSON.stringify({ profile: ctx.profile, ...report }, null, 2)}\n`);
    const f = report.final as { train_accuracy: number; holdout_accuracy: number | null };
    return {
      summary: `behaviour cloning: accuracy ${f.train_accuracy.toFixed(3)} (held out ${f.holdout_accuracy?.toFixed(3) ?? 'n/a'})`,
    };
  },
});
