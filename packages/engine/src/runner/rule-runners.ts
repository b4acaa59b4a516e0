// The runners of one build (a RunnerChoice, runner/rule-runner.ts): a target whose executor is
// Slurm runs as a batch job (SlurmRunner, created on the first such target), every other target
// on the local runner the build was given (the worker pool, made by the CLI).
import { SlurmRunner } from './slurm/slurm-runner.ts';
import type { RuleRunner, RunTarget, RunnerChoice } from './rule-runner.ts';
import type { UserRemoteCache } from '../api/index.ts';

export class RuleRunners implements RunnerChoice {
  private slurm: (RuleRunner & { runner: SlurmRunner }) | null = null;

  /** `remote`: the pipeline's remote cache, for Slurm targets with staging 'remote-cache'. */
  constructor(
    private readonly opts: {
      local: RuleRunner;
      root: string;
      stagingRoot: string;
      remote?: { decl: UserRemoteCache; env: Readonly<Record<string, string | undefined>> };
    },
  ) {}

  /** Jobs the local runner takes per -j slot (the scheduler hands out -j × this many). */
  get handOffDepth(): number {
    return this.opts.local.handOffDepth ?? 1;
  }

  for(t: RunTarget): RuleRunner {
    if (t.executor?.kind === 'slurm') {
      if (!this.slurm) {
        const slurm = new SlurmRunner(this.opts.root, this.opts.stagingRoot, undefined, this.opts.remote);
        this.slurm = {
          runner: slurm,
          usesLocalSlot: false,
          run: (job, hooks, target) => {
            hooks.started?.(); // submitted: the cluster's queue is the job's to tell
            return slurm.run(job, hooks, { executor: target.executor!, secrets: target.secrets });
          },
          abortAll: (g) => slurm.abortAll(g),
          close: () => slurm.close(),
        };
      }
      return this.slurm;
    }
    return this.opts.local;
  }

  async abortAll(graceMs: number): Promise<void> {
    await Promise.all([this.opts.local.abortAll(graceMs), this.slurm?.abortAll(graceMs)]);
  }

  async close(): Promise<void> {
    await this.opts.local.close();
    await this.slurm?.close();
  }
}
