// Names of recorded runs on the command line: a run id (`12`), `last` / `last~N`, or a git
// revision (`HEAD~1`, a tag, a short hash): the newest run built at that commit.
import { UsageError } from '../config/usage-error.ts';
import type { RunRecord } from '../state/run-history.ts';
import { revParse } from '../util/git-state.ts';

export async function selectRun(runs: readonly RunRecord[], spec: string, root: string): Promise<RunRecord> {
  const byId = /^\d+$/.test(spec) ? runs.find((r) => r.id === Number(spec)) : undefined;
  if (byId) return byId;
  const last = /^last(?:~(\d+))?$/.exec(spec);
  if (last) {
    const r = runs[runs.length - 1 - Number(last[1] ?? 0)];
    if (r) return r;
    throw new UsageError({
      headline: `no run ${spec}: ${runs.length} run${runs.length === 1 ? '' : 's'} recorded`,
      hint: 'rc1-build log lists the runs',
    });
  }
  const commit = await revParse(root, spec);
  if (commit) {
    const at = runs.filter((r) => r.git.commit === commit);
    if (at.length) return at[at.length - 1]!;
    throw new UsageError({
      headline: `no recorded run was built at ${spec} (${commit.slice(0, 9)})`,
      hint: 'rc1-build log lists the runs with their commits',
    });
  }
  const ids = runs.length ? `${runs[0]!.id}..${runs[runs.length - 1]!.id}` : 'none';
  throw new UsageError({
    headline: `${JSON.stringify(spec)} names no run (ids ${ids}) and no git revision`,
    hint: 'name a run by its id (rc1-build log), last, last~1, or a git revision such as HEAD~1',
  });
}
