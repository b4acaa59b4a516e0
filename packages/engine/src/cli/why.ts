// `rc1-build why <artifact-path|target> [--depth N|all] [--json]`: the lineage of one artifact
// (rebuild/lineage.ts): producing target, rule and code closure hash, params, env names, every
// input with its hash and producer (recursively, --depth levels; default 3), the run that built
// it, and whether it is up to date now, with the root cause when not.
import { parseArgs } from 'node:util';
import { UsageError, didYouMean } from '../config/usage-error.ts';
import { whyOf } from '../rebuild/lineage.ts';
import { formatWhy } from '../report/format-lineage.ts';
import { historyOf } from '../report/run-recorder.ts';
import { openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

export async function run(root: string, args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { json: { type: 'boolean' }, depth: { type: 'string' } },
  });
  if (positionals.length !== 1)
    throw new UsageError({
      headline: positionals.length
        ? `why takes one artifact or target, got ${positionals.join(' ')}`
        : 'why needs an artifact path or a target',
      hint: 'rc1-build why reports/rc1/x.json   or   rc1-build why TARGET',
    });
  const depth = values.depth === undefined ? 3 : values.depth === 'all' ? Infinity : Number(values.depth);
  if (!(depth >= 0) || (depth !== Infinity && !Number.isInteger(depth)))
    throw new UsageError({
      headline: `--depth expects a number of levels or all, got ${JSON.stringify(values.depth)}`,
    });
  const ws = await openWorkspace(root);
  const asked = positionals[0]!;
  const answer = await whyOf(ws.decideEnv(new Set()), historyOf(ws).all(), asked, depth);
  ws.saveCaches();
  if (answer.artifact?.source && answer.artifact.sha256 === null && !answer.artifact.readBy.length) {
    const guess = didYouMean(asked, [...ws.pipeline.targets.keys(), ...ws.pipeline.producers.keys()]);
    throw new UsageError({
      headline: `${asked} is no target, no output and no input of this pipeline`,
      hint: guess ? `did you mean ${guess}?` : 'rc1-build graph --format json lists targets and outputs',
    });
  }
  if (values.json) io.out(JSON.stringify(answer) + '\n');
  else for (const l of formatWhy(answer)) io.out(l + '\n');
  return 0;
}
