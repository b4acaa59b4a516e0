// `rc1-build log [--limit N] [--json]`: the runs in the run history (.rc1/runs.jsonl), newest
// first: id, start time, git commit (+ when tracked files differed from it), profile, exit code,
// what ran, was restored or was up to date, duration and the command.
import { parseArgs } from 'node:util';
import { UsageError } from '../config/usage-error.ts';
import { formatMs } from '../util/timing.ts';
import { historyOf } from '../report/run-recorder.ts';
import type { RunRecord } from '../state/run-history.ts';
import { openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

export interface RunSummary {
  id: number;
  at: string;
  commit: string | null;
  dirty: boolean | null;
  profile: string;
  exitCode: number;
  ms: number;
  command: string;
  ran: number;
  restored: number;
  upToDate: number;
  failed: number;
  gateFailed: number;
  blocked: number;
}

export function summarizeRun(r: RunRecord): RunSummary {
  return {
    id: r.id,
    at: r.at,
    commit: r.git.commit,
    dirty: r.git.dirty,
    profile: r.profile,
    exitCode: r.exitCode,
    ms: r.ms,
    command: r.command,
    ...r.counts,
  };
}

export function commitLabel(git: RunRecord['git']): string {
  if (!git.commit) return '(no git)';
  return git.commit.slice(0, 9) + (git.dirty ? '+dirty' : git.dirty === null ? '?' : '');
}

/** A plain table: columns padded to their widest cell, the last column left ragged. */
export function textTable(head: string[], rows: string[][], indent = ''): string[] {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string =>
    indent +
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)];
}

export async function run(root: string, args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { json: { type: 'boolean' }, limit: { type: 'string' } },
  });
  if (positionals.length)
    throw new UsageError({
      headline: `log takes no arguments, got ${positionals.join(' ')}`,
      hint: 'rc1-build log [--limit N] [--json]',
    });
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError({ headline: `--limit expects a positive integer, got ${JSON.stringify(values.limit)}` });
  const ws = await openWorkspace(root);
  const runs = historyOf(ws).all().slice(-limit).reverse().map(summarizeRun);
  if (values.json) {
    io.out(JSON.stringify({ runs }) + '\n');
    return 0;
  }
  if (!runs.length) {
    io.out('rc1-build: no runs recorded yet (every build, a no-op included, records one in .rc1/runs.jsonl)\n');
    return 0;
  }
  const rows = runs.map((r) => [
    String(r.id),
    r.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
    commitLabel(r),
    r.profile,
    String(r.exitCode),
    String(r.ran),
    String(r.restored),
    String(r.upToDate),
    String(r.failed + r.gateFailed),
    String(r.blocked),
    formatMs(r.ms),
    r.command,
  ]);
  for (const l of textTable(
    [
      'run',
      'started (UTC)',
      'commit',
      'profile',
      'exit',
      'ran',
      'restored',
      'fresh',
      'failed',
      'blocked',
      'time',
      'command',
    ],
    rows,
  ))
    io.out(l + '\n');
  return 0;
}
