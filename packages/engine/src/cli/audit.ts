// `rc1-build audit`: cross-checks four records of every artifact — the file on disk (full
// re-hash, no stat cache: an audit trusts nothing), <manifestDir>/manifest.json, its sha256
// sidecar, and the engine's own trace (.rc1/trace.log) — and says which one disagrees with the
// others (the majority; on a tie, the trace is believed). So a consistent edit of an output, its
// manifest entry and its sidecar is still caught by the trace. Also reports files inside a
// directory output that no record lists, sidecars with no artifact, symbolic links that moved,
// and a commit left unfinished by a killed build. Exit 1 when anything is off. A build (even a
// no-op) rewrites the manifest and sidecars from the trace, so those two heal by building.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashFileSync } from '../hash/hash-file.ts';
import { type Artifact, type Manifest, artifactsOf, manifestPath, sidecarPath } from '../report/manifest.ts';
import { forgetManifestState } from '../report/manifest-state.ts';
import { UsageError } from '../config/usage-error.ts';
import { listFilesRecursive, readJsonOrNull } from '../util/fs.ts';
import { openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
}

/** The four records of an artifact: the output itself and three descriptions of it. */
export type AuditSource = 'output' | 'manifest' | 'sidecar' | 'trace';
const SOURCES: AuditSource[] = ['output', 'manifest', 'sidecar', 'trace'];

export interface AuditProblem {
  kind:
    | 'modified'
    | 'missing'
    | 'extra'
    | 'sidecar-mismatch'
    | 'manifest-mismatch'
    | 'trace-mismatch'
    | 'pending-commit';
  path: string;
  expected?: string;
  actual?: string;
  target?: string;
  /** Which record disagrees with the others, and what each record says (null: absent). */
  disagrees?: AuditSource;
  records?: Record<AuditSource, string | null>;
}

const KIND: Record<AuditSource, AuditProblem['kind']> = {
  output: 'modified',
  manifest: 'manifest-mismatch',
  sidecar: 'sidecar-mismatch',
  trace: 'trace-mismatch',
};

function sidecarSha(root: string, rel: string, artifact: string): string | null {
  let body: string;
  try {
    body = fs.readFileSync(path.join(root, rel), 'utf8');
  } catch {
    return null;
  }
  const m = /^([0-9a-f]{64}) {2}(.*)\n$/.exec(body);
  return m && m[2] === artifact ? m[1]! : `unreadable sidecar (${JSON.stringify(body.slice(0, 40))})`;
}

/** The sources that disagree with the majority value (a tie goes to the group holding the trace). */
function outliers(records: Record<AuditSource, string | null>): { agreed: string | null; odd: AuditSource[] } {
  const groups = new Map<string | null, AuditSource[]>();
  for (const s of SOURCES) (groups.get(records[s]) ?? groups.set(records[s], []).get(records[s])!).push(s);
  if (groups.size === 1) return { agreed: records.trace, odd: [] };
  const ranked = [...groups].sort(
    ([, a], [, b]) => b.length - a.length || Number(b.includes('trace')) - Number(a.includes('trace')),
  );
  const [agreed, members] = ranked[0]!;
  return { agreed, odd: SOURCES.filter((s) => !members.includes(s)) };
}

export async function runAudit(root: string, json: boolean, io: Io): Promise<number> {
  const ws = await openWorkspace(root);
  const mdir = ws.pipeline.manifestDir;
  const mpath = manifestPath(mdir);
  const m = readJsonOrNull<Manifest>(path.join(root, mpath));
  const haveManifest = !!m && Array.isArray(m.artifacts);
  const traced = new Map<string, Artifact>();
  for (const [name, rec] of ws.trace.records) {
    if (!ws.pipeline.targets.has(name) || rec.result === 'failed') continue;
    for (const a of artifactsOf(rec)) traced.set(a.path, a);
  }
  if (!haveManifest && traced.size === 0) {
    throw new UsageError({
      headline: `no readable manifest at ${mpath}`,
      hint: 'build first; every build writes the manifest',
    });
  }
  const problems: AuditProblem[] = [];
  let journals: string[] = [];
  try {
    journals = fs.readdirSync(path.join(ws.stateDir, 'journal')).filter((n) => n.endsWith('.json'));
  } catch {
    journals = [];
  }
  for (const j of journals)
    problems.push({
      kind: 'pending-commit',
      path: `.rc1/journal/${j}`,
      target: decodeURIComponent(j.replace(/\.json$/, '')),
    });

  const manifested = new Map((haveManifest ? m!.artifacts : []).map((a) => [a.path, a]));
  const all = [...new Set([...manifested.keys(), ...traced.keys()])].sort();
  for (const p of all) {
    const abs = path.join(root, p);
    const records: Record<AuditSource, string | null> = {
      output: fs.existsSync(abs) ? hashFileSync(abs) : null,
      manifest: manifested.get(p)?.sha256 ?? null,
      sidecar: sidecarSha(root, sidecarPath(mdir, p), p),
      trace: traced.get(p)?.sha256 ?? null,
    };
    const { agreed, odd } = outliers(records);
    const target = traced.get(p)?.target ?? manifested.get(p)?.target;
    for (const s of odd) {
      const kind = s === 'output' && records.output === null ? 'missing' : KIND[s];
      const where = s === 'sidecar' ? sidecarPath(mdir, p) : p;
      problems.push({
        kind,
        path: where,
        ...(target ? { target } : {}),
        disagrees: s,
        records,
        ...(agreed ? { expected: agreed } : {}),
        ...(records[s] ? { actual: records[s]! } : {}),
      });
    }
  }

  const links = new Map<string, string>();
  for (const rec of ws.trace.records.values())
    for (const o of rec.outputs)
      for (const [rel, to] of Object.entries(o.links ?? {})) links.set(`${o.path}/${rel}`, to);
  for (const t of Object.values(haveManifest ? m!.targets : {}))
    for (const [p, to] of Object.entries(t.links ?? {})) if (!links.has(p)) links.set(p, to);
  for (const [p, to] of links) {
    let cur: string | null = null;
    try {
      cur = fs.readlinkSync(path.join(root, p));
    } catch {
      cur = null;
    }
    if (cur === null) problems.push({ kind: 'missing', path: p, expected: `link to ${to}` });
    else if (cur !== to)
      problems.push({ kind: 'modified', path: p, expected: `link to ${to}`, actual: `link to ${cur}` });
  }

  const listed = new Set(all);
  const dirs = new Set<string>();
  for (const a of [...traced.values(), ...manifested.values()]) if (a.dir) dirs.add(a.dir);
  for (const t of ws.pipeline.targets.values())
    for (const o of t.outputs) if (o.dir && (ws.trace.records.has(t.name) || m?.targets?.[t.name])) dirs.add(o.path);
  for (const d of dirs) {
    let files: string[] = [];
    try {
      files = listFilesRecursive(path.join(root, d));
    } catch {
      files = [];
    }
    for (const f of files) if (!listed.has(`${d}/${f}`)) problems.push({ kind: 'extra', path: `${d}/${f}` });
  }
  let sides: string[] = [];
  try {
    sides = listFilesRecursive(path.join(root, mdir, 'sha256'));
  } catch {
    sides = [];
  }
  for (const s of sides)
    if (!listed.has(s.replace(/\.sha256$/, '')))
      problems.push({ kind: 'extra', path: path.posix.join(mdir, 'sha256', s) });

  const count = all.length;
  // The next build must check the manifest and every sidecar by content, not by its stat digest.
  if (problems.some((p) => p.disagrees === 'manifest' || p.disagrees === 'sidecar' || p.kind === 'extra'))
    forgetManifestState(ws);
  if (json) io.out(JSON.stringify({ ok: problems.length === 0, artifacts: count, problems }) + '\n');
  else {
    for (const p of problems)
      io.out(`${p.kind.padEnd(17)} ${p.path}${p.target ? ` (from ${p.target})` : ''}${describe(p)}\n`);
    const git = haveManifest
      ? `git ${m!.git?.commit?.slice(0, 12) ?? 'none'}${m!.git?.dirty ? ' dirty' : ''}`
      : 'no manifest';
    io.out(
      `audit: ${problems.length === 0 ? 'ok' : 'FAILED'} · ${count} artifacts checked, ${problems.length} problem${problems.length === 1 ? '' : 's'} (manifest ${mpath}, ${git})\n`,
    );
    if (problems.some((p) => p.disagrees === 'manifest' || p.disagrees === 'sidecar' || p.kind === 'pending-commit')) {
      io.out(
        'hint: a build (a no-op too) finishes pending commits and rewrites the manifest and sidecars from the trace\n',
      );
    }
  }
  return problems.length === 0 ? 0 : 1;
}

function describe(p: AuditProblem): string {
  const short = (s: string | null | undefined): string =>
    s == null ? 'nothing' : /^[0-9a-f]{64}$/.test(s) ? s.slice(0, 12) : s;
  if (p.kind === 'pending-commit') return ': a killed build left this commit unfinished';
  if (!p.records || !p.disagrees)
    return p.expected && p.actual ? `: expected ${short(p.expected)}, found ${short(p.actual)}` : '';
  const others = SOURCES.filter((s) => s !== p.disagrees && p.records![s] === (p.expected ?? null));
  const what =
    p.disagrees === 'output' ? 'the file' : p.disagrees === 'trace' ? "the engine's trace" : `the ${p.disagrees}`;
  return `: ${others.join(', ')} say ${short(p.expected)}, ${what} ${p.records[p.disagrees] === null ? 'has nothing' : `says ${short(p.records[p.disagrees])}`}`;
}
