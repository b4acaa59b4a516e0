// rollouts (docs/rc1.md "rollout"): N candidate trajectories per scenario, each with its task success,
// for the scenarios of the `scenarios` input group (the shadow set and/or the balanced pool).
// Params: `rollouts` (configs/scoring.yaml). Output [0]: the rollouts JSONL, in scenario order
// then candidate index. Sources (rollouts.source):
//   synthetic  perturbed references at the configured error-mode rates; `source: "synthetic"` on
//              every record; byte-identical for the same inputs and params. Refused in prod
//              (docs/rc1.md: prod has no simulated anything).
//   file       the `runs` input group: JSONL from a real model run (schema-checked; a bad line
//              fails with file:line: field: expected …)
//   openai     an OpenAI-compatible endpoint serving the policy (rollouts.openai); the key is read
//              from the env var rollouts.openai.api_key_env, which the target declares as a secret
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import { toJsonl } from '../lib/data/index.ts';
import {
  ERROR_MODES,
  createFetchPolicyClient,
  eligible,
  fileRollouts,
  openAiRollouts,
  readScenarios,
  rolloutsConfigSchema,
  syntheticRollouts,
  type Rollout,
} from '../lib/rollouts/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'rollouts',
  version: 2,
  params: z.object({ rollouts: rolloutsConfigSchema }),
  async run(ctx) {
    const cfg = ctx.params.rollouts;
    // The scenarios: one output of another target (target('shadow_set', 'scenarios')) or files.
    const files = ctx.inputs('scenarios');
    const scenarios = await readScenarios(files, ctx.root);
    if (scenarios.length === 0) throw new RuleError(`${ctx.target}: the \`scenarios\` inputs hold no scenario`);
    ctx.signal.throwIfAborted();

    let rollouts: Rollout[];
    let note = '';
    switch (cfg.source) {
      case 'synthetic': {
        if (ctx.profile === 'prod') {
          throw new RuleError(
            `${ctx.target}: rollouts.source synthetic is refused in the prod profile (docs/rc1.md: no simulated anything); set rollouts.source to file or openai in configs/profiles/prod.yaml`,
          );
        }
        rollouts = syntheticRollouts(scenarios, {
          seed: cfg.seed,
          candidates: cfg.candidates,
          policy: cfg.synthetic.policy,
          rates: cfg.synthetic.error_rates,
        });
        const rates = ERROR_MODES.map((m) => {
          const pool = rollouts.filter((_, i) => eligible(m, scenarios[Math.floor(i / cfg.candidates)]!));
          const hit = pool.filter((r) => r.error_modes.includes(m)).length;
          return `${m} ${hit}/${pool.length}`;
        });
        ctx.log(`synthetic error modes (applied/eligible): ${rates.join(', ')}`);
        note = 'synthetic';
        break;
      }
      case 'file': {
        const res = await fileRollouts(ctx.inputs('runs'), scenarios, ctx.root);
        if (res.missing.length > 0)
          ctx.log(
            `${res.missing.length} scenarios have no candidate in the run files (first: ${res.missing.slice(0, 3).join(', ')})`,
          );
        if (res.perScenario.min < cfg.candidates)
          ctx.log(
            `candidates per scenario: ${res.perScenario.min}..${res.perScenario.max} (rollouts.candidates is ${cfg.candidates})`,
          );
        rollouts = res.rollouts;
        note = `file, ${res.missing.length} scenarios without candidates`;
        break;
      }
      case 'openai': {
        const o = cfg.openai;
        if (!(o.api_key_env in ctx.env)) {
          throw new RuleError(
            `${ctx.target}: rollouts.openai.api_key_env is ${o.api_key_env}, but the target does not declare it: add secrets: ['${o.api_key_env}'] to its declaration`,
          );
        }
        const apiKey = ctx.env[o.api_key_env] || undefined;
        if (!apiKey)
          ctx.log(`${o.api_key_env} is not set: calling ${o.base_url} without a key (fine for a local server)`);
        const client = createFetchPolicyClient({
          baseUrl: o.base_url,
          model: o.model,
          apiKey,
          keyEnv: o.api_key_env,
          timeoutMs: o.timeout_ms,
          maxRetries: o.max_retries,
        });
        rollouts = await openAiRollouts(scenarios, {
          client,
          candidates: cfg.candidates,
          seed: cfg.seed,
          temperature: o.temperature,
          maxTokens: o.max_tokens,
          maxSteps: o.max_steps,
          concurrency: o.concurrency,
          signal: ctx.signal,
          onEpisode: (d, t) => {
            if (d % 10 === 0 || d === t) ctx.progress(d, t, 'episodes');
          },
        });
        note = `openai ${o.model}`;
        break;
      }
    }
    ctx.signal.throwIfAborted();
    await mkdir(dirname(ctx.output('rollouts')), { recursive: true });
    await writeFile(ctx.output('rollouts'), toJsonl(rollouts));
    const ok = rollouts.filter((r) => r.success).length;
    return {
      summary: `${rollouts.length} rollouts of ${scenarios.length} scenarios (${note}; success ${ok}/${rollouts.length})`,
    };
  },
});
