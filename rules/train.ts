// train (docs/rc1.md, target train): trains the RC1 policy through the trainer API (rc1-build/train):
// the built-in tfjs engine (PPO or DPO on the simulated dialogue environment, starting from the
// `sft` input's policy) or the `command` engine (the team's own trainer). Either engine makes one
// run per seed of ppo.seeds (a command trainer is invoked once per seed, with train.seed = that
// seed), one after the other, each in its own work dir (ctx.stateDir/seed_<seed>/) and so each
// resumable on its own: a build killed during the second seed keeps the first one's
// completed run and resumes the second from its latest checkpoint. It refuses to start unless the
// round-2 preflight ticket (`round2` input: reports/preflight/round2_pass.json) says "pass": true.
// Inputs: round2, scenarios (the balanced pool), weights (configs/weights.json), sft (the sft
// target's checkpoints/sft/); for dpo also rollouts and scores. Params: `train`, `ppo`,
// `overclar.alpha`, `overclar.cap`, resolved into one effective config per seed
// (rc1-build/train resolveTrainConfig). The prod profile refuses the built-in tfjs engine: it
// trains in a simulated environment, and prod has no simulated anything. Outputs, by name:
//   checkpoints: checkpoints/rc1/ (directory: seed_<seed>/ per seed — the run's checkpoints plus its own
//                    metrics.jsonl and config_effective.yaml —, and `latest` → the first seed's
//                    latest, which export_gguf reads)
//   metrics: reports/metrics.jsonl (every seed's lines, each with its `seed`);
//   config: reports/config_effective.yaml (one YAML document per seed)
// (log lines go to the engine's rule log, logs/train.log; the full timestamped log of each run,
// across resumes, is train.log in its work dir)
// Training state lives in the target's state dir (ctx.stateDir, .rc1/state/train/) so an
// interrupted build resumes (see runTraining); the outputs are the final state copied out of it.
// The run's identity includes the rule's code (ctx.codeHash): a code change starts a new run
// unless train.resume_across_code_change is true.
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defineRule, RuleError, type RuleContext } from 'rc1-build';
import { resolveTrainConfig, runTraining, TRAIN_PARAMS } from '../lib/train/index.ts';
import { z } from 'zod';

/** The round-2 ticket must exist and say pass: true (docs/rc1.md: written with pass true only when every check passed). */
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
    throw new RuleError(
      `train refuses to start: ${shown} ${code === 'ENOENT' ? 'is missing' : `is not valid JSON (${(e as Error).message})`}; ${hint}`,
    );
  }
  const pass = (ticket as { pass?: unknown } | null)?.pass;
  if (pass !== true) {
    const failed = ((ticket as { checks?: { name?: string; status?: string }[] }).checks ?? [])
      .filter((c) => c.status === 'fail')
      .map((c) => c.name)
      .filter(Boolean);
    throw new RuleError(
      `train refuses to start: ${shown} says "pass": ${JSON.stringify(pass ?? null)}${failed.length ? ` (failed: ${failed.join(', ')})` : ''}; fix the failing preflight checks and rebuild: \`npx rc1-build round2_pass\``,
    );
  }
}

function group(ctx: RuleContext<unknown>, name: string): string[] {
  try {
    return ctx.inputs(name);
  } catch {
    return [];
  }
}

export default defineRule({
  name: 'train',
  version: 1,
  params: z.object(TRAIN_PARAMS),
  async run(ctx) {
    checkRound2(group(ctx, 'round2'), ctx.root);
    const seeds = ctx.params.ppo.seeds;
    const first = resolveTrainConfig(ctx.params, seeds[0]);
    if (ctx.profile === 'prod' && first.engine === 'tfjs') {
      throw new RuleError(
        "train: the built-in tfjs engine trains in a simulated dialogue environment, a simulation built from the data, and the prod profile allows no simulated anything: set train.engine: command (the team's trainer, train.command.argv) in configs/profiles/prod.yaml",
      );
    }
    const inputs: Record<string, string[]> = {};
    for (const g of ['round2', 'scenarios', 'weights', 'sft', 'rollouts', 'scores', 'shadow']) {
      const files = group(ctx, g).flatMap((f) =>
        statSync(f).isDirectory()
          ? readdirSync(f, { recursive: true, encoding: 'utf8' })
              .map((r) => join(f, r))
              .filter((p) => statSync(p).isFile())
              .sort()
          : [f],
      );
      if (files.length > 0) inputs[g] = files;
    }
    const forced = ctx.forced;
    const identity = {
      codeHash: ctx.codeHash,
      settings: { ppo: ctx.params.ppo, overclar: ctx.params.overclar },
      resumeAcrossCodeChange: ctx.params.train.resume_across_code_change === true,
      keepPreviousRuns: ctx.params.train.keep_previous_runs ?? 3,
    };
    const ckOut = ctx.output('checkpoints');
    const metrics: string[] = [];
    const configs: string[] = [];
    const summaries: string[] = [];
    const tmp = mkdtempSync(join(tmpdir(), 'rc1-train-'));
    try {
      for (const [i, seed] of seeds.entries()) {
        const config = resolveTrainConfig(ctx.params, seed);
        const seedOut = join(ckOut, `seed_${seed}`);
        const files = { metrics: join(tmp, `${seed}.jsonl`), effectiveConfig: join(tmp, `${seed}.yaml`) };
        ctx.log(`seed ${seed} (${i + 1} of ${seeds.length})`);
        const { summary, result } = await runTraining({
          root: ctx.root,
          profile: ctx.profile,
          config,
          inputs,
          env: ctx.env,
          forced,
          signal: ctx.signal,
          workDir: join(ctx.stateDir, `seed_${seed}`),
          ...identity,
          log: (l) => ctx.log(`[seed ${seed}] ${l}`),
          progress: (d, t) => ctx.progress(i * t + d, seeds.length * t, 'steps'),
          outputs: { checkpoints: seedOut, ...files },
        });
        if (result.interrupted || ctx.signal.aborted)
          throw new RuleError(
            `train: interrupted during seed ${seed} at step ${result.finalStep}; the next build resumes it`,
          );
        for (const [f, name] of [
          [files.metrics, 'metrics.jsonl'],
          [files.effectiveConfig, 'config_effective.yaml'],
        ] as const)
          copyFileSync(f, join(seedOut, name));
        metrics.push(
          ...readFileSync(files.metrics, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.stringify({ seed, ...(JSON.parse(l) as object) })),
        );
        configs.push(`# seed ${seed}\n${readFileSync(files.effectiveConfig, 'utf8')}`);
        summaries.push(`seed ${seed}: ${summary}`);
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    symlinkSync(join(`seed_${seeds[0]}`, 'latest'), join(ckOut, 'latest'));
    writeFileSync(ctx.output('metrics'), metrics.map((l) => `${l}\n`).join(''));
    writeFileSync(ctx.output('config'), configs.join('---\n'));
    return { summary: summaries.join('; ') };
  },
});
