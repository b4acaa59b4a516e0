// The audit trail: <manifestDir>/manifest.json (the pipeline's manifestDir, default reports/build)
// lists every artifact the pipeline produced (sha256, size, producing target, the hashes of the
// inputs it came from, when and at which git commit it was built), and a `sha256sum -c` sidecar
// per artifact under <manifestDir>/sha256/<path>.sha256, so the hashes can be verified without
// the tool. Checked after every build, a no-op included,
// and rewritten where it disagrees with the trace (a deleted, edited or outdated manifest or
// sidecar heals on the next build); stale sidecars are removed. The manifest itself is written
// durably (fsync); sidecars are derived and recreated whenever they are wrong.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { prettyJson } from '../util/canonical-json.ts';
import { listFilesRecursive, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import { manifestUnchanged, recordManifestState } from './manifest-state.ts';
import { type BuiltBy, readProvenance } from '../cache/remote/provenance.ts';

export const MANIFEST_FORMAT = 1;

export interface Artifact {
  path: string;
  sha256: string;
  size: number;
  target: string;
  /** Directory output this file belongs to, if any. */
  dir?: string;
}

export interface Manifest {
  format: number;
  profile: string;
  git: { commit: string | null; dirty: boolean | null };
  artifacts: Artifact[];
  targets: Record<
    string,
    {
      key: string;
      result: string;
      how: string;
      at: string;
      rule?: { name: string; version: number };
      builtBy?: BuiltBy;
      inputs: Record<string, Record<string, string>>;
      outputs: string[];
      links?: Record<string, string>;
    }
  >;
}

export function manifestPath(manifestDir: string): string {
  return path.posix.join(manifestDir, 'manifest.json');
}

export function sidecarPath(manifestDir: string, artifact: string): string {
  return path.posix.join(manifestDir, 'sha256', `${artifact}.sha256`);
}

export function artifactsOf(rec: TargetRecord): Artifact[] {
  const out: Artifact[] = [];
  for (const o of rec.outputs) {
    if (!o.dir) out.push({ path: o.path, sha256: o.sha256, size: o.size, target: rec.name });
    else
      for (const [rel, sha] of Object.entries(o.files ?? {}))
        out.push({ path: `${o.path}/${rel}`, sha256: sha, size: -1, target: rec.name, dir: o.path });
  }
  return out;
}

interface ManifestWorkspace {
  root: string;
  stateDir: string;
  profile: string;
  pipeline: { targets: ReadonlyMap<string, unknown>; manifestDir: string };
  trace: { records: ReadonlyMap<string, TargetRecord>; file: string };
}

export function buildManifest(ws: ManifestWorkspace, git: Manifest['git']): Manifest {
  const artifacts: Artifact[] = [];
  const targets: Manifest['targets'] = {};
  const builtBy = readProvenance(ws.stateDir); // who built each fingerprint (cache/remote/provenance.ts)
  for (const [name, rec] of [...ws.trace.records].sort(([a], [b]) => a.localeCompare(b))) {
    if (!ws.pipeline.targets.has(name) || rec.result === 'failed') continue;
    const links: Record<string, string> = {};
    for (const o of rec.outputs) for (const [rel, to] of Object.entries(o.links ?? {})) links[`${o.path}/${rel}`] = to;
    targets[name] = {
      key: rec.key,
      result: rec.result,
      how: rec.how,
      at: rec.at,
      ...(rec.rule ? { rule: rec.rule } : {}),
      ...(builtBy[rec.key] ? { builtBy: builtBy[rec.key] } : {}),
      inputs: rec.fingerprint.inputs,
      outputs: rec.outputs.map((o) => o.path),
      ...(Object.keys(links).length ? { links } : {}),
    };
    for (const a of artifactsOf(rec)) {
      if (a.size < 0) a.size = fs.statSync(path.join(ws.root, a.path), { throwIfNoEntry: false })?.size ?? 0;
      artifacts.push(a);
    }
  }
  artifacts.sort((a, b) => a.path.localeCompare(b.path));
  return { format: MANIFEST_FORMAT, profile: ws.profile, git, artifacts, targets };
}

/** The git state recorded in a manifest's text, without parsing the whole document. */
function recordedGit(text: string | null): Manifest['git'] | null {
  const m = text ? /\n  "git": (\{[^{}]*\})/.exec(text) : null;
  if (!m) return null;
  try {
    const g = JSON.parse(m[1]!) as Manifest['git'];
    return 'commit' in g && 'dirty' in g ? g : null;
  } catch {
    return null;
  }
}

/**
 * A sidecar where none is: created in place (O_EXCL, so nothing there is followed or overwritten),
 * without the temp file and rename of a replacement — a full build of 1 000 targets writes 1 000.
 * A kill mid-write leaves a short sidecar that the next build finds wrong and replaces: the
 * manifest state (manifest-state.ts) is recorded only after every sidecar is written.
 */
function createSidecar(abs: string, body: string): void {
  let fd: number;
  try {
    fd = fs.openSync(abs, 'wx');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return writeFileAtomic(abs, body); // appeared since it was read: replace it whole
    if (code !== 'ENOENT') throw e;
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fd = fs.openSync(abs, 'wx');
  }
  try {
    fs.writeFileSync(fd, body);
  } finally {
    fs.closeSync(fd);
  }
}

function readOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Makes the manifest and sidecars match the trace. `git`: the state to record when targets were
 * built in this build; null keeps the one recorded (asking `gitNow` only if there is none).
 * Returns the workspace paths it wrote or removed.
 */
export function writeManifest(
  ws: ManifestWorkspace,
  git: Manifest['git'] | null,
  gitNow: () => Manifest['git'] = () => ({ commit: null, dirty: null }),
): string[] {
  const dir = ws.pipeline.manifestDir;
  // Nothing recorded changed and the files are as last checked (manifest-state.ts): done.
  if (git === null && manifestUnchanged(ws)) return [];
  const mfile = path.join(ws.root, manifestPath(dir));
  const current = readOrNull(mfile);
  const m = buildManifest(ws, git ?? recordedGit(current) ?? gitNow());
  const text = prettyJson(m);
  const changed: string[] = [];
  if (text !== current) {
    engineWrite('the manifest', mfile, () => writeFileAtomic(mfile, text, { durable: true }), ws.root);
    changed.push(manifestPath(dir));
  }
  const wanted = new Set<string>();
  for (const a of m.artifacts) {
    const rel = sidecarPath(dir, a.path);
    wanted.add(rel);
    const abs = path.join(ws.root, rel);
    const body = `${a.sha256}  ${a.path}\n`;
    const now = readOrNull(abs);
    if (now !== body) {
      engineWrite(
        'the sidecar',
        abs,
        () => (now === null ? createSidecar(abs, body) : writeFileAtomic(abs, body)),
        ws.root,
      );
      changed.push(rel);
    }
  }
  const sideRoot = path.join(ws.root, dir, 'sha256');
  let existing: string[] = [];
  try {
    existing = listFilesRecursive(sideRoot);
  } catch {
    existing = [];
  }
  for (const f of existing) {
    const rel = path.posix.join(dir, 'sha256', f);
    if (!wanted.has(rel)) {
      fs.rmSync(path.join(ws.root, rel), { force: true });
      changed.push(rel);
    }
  }
  recordManifestState(ws, changed);
  return changed;
}
