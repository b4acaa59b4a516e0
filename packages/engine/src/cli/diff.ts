// `rc1-build diff [RUN_A] [RUN_B] [--all] [--json]`: what changed between two recorded runs
// (default: the last two; a run is named by id, last~N or a git revision): changed params,
// targets whose outputs changed, and gate checks and metrics side by side with deltas, in one
// table. Without --all only changed checks and metrics are listed; --json gives everything.
import { parseArgs } from 'node:util';
import { UsageError } from '../config/usage-error.ts';
import { historyOf } from '../report/run-recorder.ts';
import { type RunDiff, diffRuns, runDiffRows } from '../report/run-diff.ts';
import { commitLabel, textTable } from './log.ts';
import { selectRun } from './run-ref.ts';
import { openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** The diff of two runs of a workspace, named as on the command line (both optional). */
export async function diffOfWorkspace(root: string, specA?: string, specB?: string): Promise<RunDiff> {
  const ws = await openWorkspace(root);
  const runs = historyOf(ws).all();
  if (!specA && runs.length < 2) {
    throw new UsageError({
      headline: `diff needs two recorded runs, ${runs.length} recorded`,
      hint: 'every build records a run; build again, then rc1-build diff',
    });
  }
  if (!runs.length)
    throw new UsageError({ headline: 'no runs recorded yet', hint: 'every build records a run in .rc1/runs.jsonl' });
  const b = specB ? await selectRun(runs, specB, root) : runs[runs.length - 1]!;
  const a = specA ? await selectRun(runs, specA, root) : runs[runs.length - 2]!;
  return diffRuns(a, b);
}

export async function run(root: string, args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { json: { type: 'boolean' }, all: { type: 'boolean' } },
  });
  if (positionals.length > 2)
    throw new UsageError({
      headline: `diff takes at most two runs, got ${positionals.join(' ')}`,
      hint: 'rc1-build diff [RUN_A] [RUN_B]',
    });
  const d = await diffOfWorkspace(root, positionals[0], positionals[1]);
  if (values.json) {
    io.out(JSON.stringify(d) + '\n');
    return 0;
  }
  const label = (r: RunDiff['a']): string =>
    `run ${r.id} (${r.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}, ${commitLabel(r)}, ${r.profile}, exit ${r.exitCode})`;
  io.out(`rc1-build diff: ${label(d.a)} → ${label(d.b)}\n`);
  const rows = runDiffRows(d, values.all === true);
  if (!rows.length) {
    io.out(`no param, output${values.all ? ', check or metric' : ', check or metric value'} changed\n`);
    return 0;
  }
  for (const l of textTable(['', 'name', `run ${d.a.id}`, `run ${d.b.id}`, 'delta'], rows)) io.out(l + '\n');
  const unchanged = d.checks.filter((c) => !c.changed).length + d.metrics.filter((m) => !m.changed).length;
  if (!values.all && unchanged)
    io.out(`(${unchanged} unchanged check${unchanged === 1 ? '' : 's'} and metrics not shown; --all shows them)\n`);
  return 0;
}
