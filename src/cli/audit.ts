// `rc1-build audit`: verifies every artifact on disk against reports/rc1/manifest.json by full
// re-hash (no stat cache: an audit trusts nothing), and reports modified, missing and extra
// files (files inside a directory output that the manifest does not list, and sidecars with no
// artifact). Exit 1 when anything is off.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashFileSync } from '../hash/hash-file.ts';
import { type Manifest, manifestPath, sidecarPath } from '../report/manifest.ts';
import { UsageError } from '../config/usage-error.ts';
import { listFilesRecursive, readJsonOrNull } from '../util/fs.ts';
import { openWorkspace } from './workspace.ts';

interface Io { out: (s: string) => void }

export interface AuditProblem { kind: 'modified' | 'missing' | 'extra' | 'sidecar-mismatch'; path: string; expected?: string; actual?: string; target?: string }

export async function runAudit(root: string, json: boolean, io: Io): Promise<number> {
  const ws = await openWorkspace(root);
  const mpath = manifestPath(ws.pipeline.manifestDir);
  const m = readJsonOrNull<Manifest>(path.join(root, mpath));
  if (!m || !Array.isArray(m.artifacts)) {
    throw new UsageError({ headline: `no readable manifest at ${mpath}`, hint: 'build first; the manifest is written after every build that changes something' });
  }
  const problems: AuditProblem[] = [];
  const listed = new Set(m.artifacts.map((a) => a.path));
  for (const a of m.artifacts) {
    const abs = path.join(root, a.path);
    if (!fs.existsSync(abs)) { problems.push({ kind: 'missing', path: a.path, expected: a.sha256, target: a.target }); continue; }
    const h = hashFileSync(abs);
    if (h !== a.sha256) problems.push({ kind: 'modified', path: a.path, expected: a.sha256, actual: h, target: a.target });
    const side = path.join(root, sidecarPath(ws.pipeline.manifestDir, a.path));
    const body = fs.existsSync(side) ? fs.readFileSync(side, 'utf8') : '';
    if (body !== `${a.sha256}  ${a.path}\n`) problems.push({ kind: 'sidecar-mismatch', path: sidecarPath(ws.pipeline.manifestDir, a.path), expected: a.sha256 });
  }
  for (const t of Object.values(m.targets)) {
    for (const [p, to] of Object.entries(t.links ?? {})) {
      let cur: string | null = null;
      try { cur = fs.readlinkSync(path.join(root, p)); } catch { cur = null; }
      if (cur === null) problems.push({ kind: 'missing', path: p, expected: `link to ${to}` });
      else if (cur !== to) problems.push({ kind: 'modified', path: p, expected: `link to ${to}`, actual: `link to ${cur}` });
    }
  }
  const dirs = new Set(m.artifacts.filter((a) => a.dir).map((a) => a.dir!));
  for (const t of Object.values(m.targets)) for (const o of t.outputs) if (ws.pipeline.targets.get(o)?.outputs) dirs.add(o);
  for (const t of ws.pipeline.targets.values()) for (const o of t.outputs) if (o.dir && m.targets[t.name]) dirs.add(o.path);
  for (const d of dirs) {
    let files: string[] = [];
    try { files = listFilesRecursive(path.join(root, d)); } catch { files = []; }
    for (const f of files) if (!listed.has(`${d}/${f}`)) problems.push({ kind: 'extra', path: `${d}/${f}` });
  }
  const sideRoot = path.join(root, ws.pipeline.manifestDir, 'sha256');
  let sides: string[] = [];
  try { sides = listFilesRecursive(sideRoot); } catch { sides = []; }
  for (const s of sides) {
    const art = s.replace(/\.sha256$/, '');
    if (!listed.has(art)) problems.push({ kind: 'extra', path: path.posix.join(ws.pipeline.manifestDir, 'sha256', s) });
  }
  if (json) io.out(JSON.stringify({ ok: problems.length === 0, artifacts: m.artifacts.length, problems }) + '\n');
  else {
    const short = (s: string): string => (/^[0-9a-f]{64}$/.test(s) ? s.slice(0, 12) : s);
    for (const p of problems) io.out(`${p.kind.padEnd(16)} ${p.path}${p.target ? ` (from ${p.target})` : ''}${p.expected && p.actual ? `: expected ${short(p.expected)}, found ${short(p.actual)}` : ''}\n`);
    io.out(`audit: ${problems.length === 0 ? 'ok' : 'FAILED'} · ${m.artifacts.length} artifacts checked, ${problems.length} problem${problems.length === 1 ? '' : 's'} (manifest ${mpath}, git ${m.git.commit?.slice(0, 12) ?? 'none'}${m.git.dirty ? ' dirty' : ''})\n`);
  }
  return problems.length === 0 ? 0 : 1;
}
