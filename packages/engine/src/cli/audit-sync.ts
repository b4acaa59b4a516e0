// `rc1-build audit --sync FILE`: the receiving side's check of a SYNC package. The file must
// follow the contract (zod schema of report/sync-package.ts), and every artifact it lists must be
// in this workspace with the listed sha256 (a full re-hash; nothing is trusted). Exit 1 when any
// artifact is missing or differs, 64 when the file is no SYNC package.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../config/usage-error.ts';
import { hashFileSync } from '../hash/hash-file.ts';
import { syncSchema } from '../report/sync-package.ts';

interface Io {
  out: (s: string) => void;
}

export interface SyncAuditRow {
  path: string;
  target: string;
  expected: string;
  actual: string | null;
  ok: boolean;
}

export async function runAuditSync(root: string, file: string, json: boolean, io: Io): Promise<number> {
  const abs = path.resolve(root, file);
  let doc: unknown;
  try {
    doc = JSON.parse(fs.readFileSync(abs, 'utf8'));
  } catch (e) {
    throw new UsageError({ headline: `cannot read the SYNC package ${file}: ${(e as Error).message}` });
  }
  const parsed = (await syncSchema()).safeParse(doc);
  if (!parsed.success) {
    throw new UsageError(
      parsed.error.issues.map((i) => ({
        headline: `${file}: ${i.path.map(String).join('.') || '(root)'}: ${i.message}`,
        hint: 'a SYNC package has from, round, need_from_<peer>, artifacts_produced, risks_blockers and notes',
      })),
    );
  }
  const rows: SyncAuditRow[] = parsed.data.artifacts_produced.map((a) => {
    let actual: string | null = null;
    try {
      actual = hashFileSync(path.join(root, a.path));
    } catch {
      actual = null;
    }
    return { path: a.path, target: a.target, expected: a.sha256, actual, ok: actual === a.sha256 };
  });
  const bad = rows.filter((r) => !r.ok);
  if (json)
    io.out(
      JSON.stringify({
        file,
        from: parsed.data.from,
        round: parsed.data.round,
        checked: rows.length,
        ok: bad.length === 0,
        problems: bad,
      }) + '\n',
    );
  else {
    for (const r of bad)
      io.out(
        `${r.actual === null ? 'MISSING ' : 'MODIFIED'} ${r.path} (from ${r.target}): listed ${r.expected.slice(0, 12)}${r.actual ? `, here ${r.actual.slice(0, 12)}` : ''}\n`,
      );
    io.out(
      `audit --sync: ${file} (from ${parsed.data.from}, round ${parsed.data.round}): ${rows.length - bad.length} of ${rows.length} listed artifacts match${bad.length ? `, ${bad.length} do not` : ''}\n`,
    );
  }
  return bad.length ? 1 : 0;
}
