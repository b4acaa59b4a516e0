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
import { listFilesRecursive, writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import { deepFreeze } from '../state/parsed-state.ts';
import { manifestUnchanged, manifestUnchangedSince, recordManifestState } from './manifest-state.ts';
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

/** A workspace path with no '.', '..' or empty segment: path.posix.join of such paths is their text joined by '/'. */
function plainPath(p: string): boolean {
  return p.length > 0 && p[0] !== '/' && p[0] !== '.' && !p.includes('/.') && !p.includes('//') && !p.endsWith('/');
}

export function sidecarPath(manifestDir: string, artifact: string): string {
  if (plainPath(manifestDir) && plainPath(artifact)) return `${manifestDir}/sha256/${artifact}.sha256`;
  return path.posix.join(manifestDir, 'sha256', `${artifact}.sha256`);
}

let collator: Intl.Collator | null = null;

/**
 * What items.slice().sort((a, b) => key(a).localeCompare(key(b))) gives, in far fewer collator
 * comparisons: localeCompare is Intl.Collator's compare for the default locale (ECMA-402), and
 * when the items sorted by UTF-16 code units are strictly increasing under the collator, that is
 * the one order the collator's sort can give (no two items tie). Anything else (a pair the
 * collator orders otherwise, or a tie, which the stable sort leaves in the items' order) takes
 * the collator's sort of the items as they came.
 */
export function localeSorted<T>(items: readonly T[], key: (x: T) => string): T[] {
  const cmp = (collator ??= new Intl.Collator()).compare;
  const byUnits = items.slice().sort((a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  let strictly = true;
  for (let i = 1; i < byUnits.length && strictly; i++) strictly = cmp(key(byUnits[i - 1]!), key(byUnits[i]!)) < 0;
  return strictly ? byUnits : items.slice().sort((a, b) => cmp(key(a), key(b)));
}

/**
 * What util/canonical-json.ts sortKeys gives (object keys sorted, undefined members dropped), as
 * far as JSON.stringify can tell, copying only the objects whose keys are not already in that
 * order: a manifest of 1 000 targets is otherwise copied whole on every build that changes it.
 * An object whose own keys already enumerate in sorted order and hold no undefined value prints
 * as its sorted copy would, so it is kept as it is when none of its members needed a copy.
 */
export function sortedForJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = sortedForJson(value[i]);
      if (out === null && v !== value[i]) out = value.slice(0, i);
      if (out !== null) out.push(v);
    }
    return out ?? value;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return sortedCopyOf(value);
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let same = true;
  for (let i = 0; i < keys.length && same; i++) {
    const k = keys[i]!;
    if ((i > 0 && keys[i - 1]! >= k) || obj[k] === undefined || sortedForJson(obj[k]) !== obj[k]) same = false;
  }
  return same ? obj : sortedCopyOf(obj);
}

function sortedCopyOf(value: unknown): unknown {
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) if (obj[k] !== undefined) out[k] = sortedForJson(obj[k]);
  return out;
}

/**
 * Entries of the manifest made once for a frozen (shared, never changed) trace record and reused
 * by every later build of the process that sees the same record (the resident server: a kept
 * trace parse, state/parsed-state.ts): a target's entry, its artifacts, and their texts.
 * null: made, its text not yet.
 */
const sharedTexts = new WeakMap<object, string | null>();

/** Keys as JSON.stringify lists them for sortedForJson(obj). */
function sortedKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  let ordered = true;
  for (let i = 0; i < keys.length && ordered; i++)
    if ((i > 0 && keys[i - 1]! >= keys[i]!) || obj[keys[i]!] === undefined) ordered = false;
  if (ordered) return keys; // sortedForJson keeps obj itself, or a copy with its keys in this order
  const copy: Record<string, true> = {}; // what sortedCopyOf makes: keys inserted in sorted order
  for (const k of keys.sort()) if (obj[k] !== undefined) copy[k] = true;
  return Object.keys(copy);
}

/** An object JSON.stringify prints as a standalone value prints (no toJSON, which is handed its key). */
function plainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** JSON.stringify(sortedForJson(v), null, 2) as a member at depth 2 prints it (strings hold no raw newline). */
function memberText(v: object): string {
  const known = sharedTexts.get(v);
  if (known) return known;
  const t = JSON.stringify(sortedForJson(v), null, 2).replaceAll('\n', '\n    ');
  if (known === null) sharedTexts.set(v, t);
  return t;
}

/**
 * The manifest's text: prettyJson(m), byte for byte. The texts of the artifacts and of the
 * targets' entries are made one by one (an entry buildManifest shared: once per process) and
 * joined as JSON.stringify would indent them; anything of another shape is printed whole.
 */
export function manifestText(m: Manifest): string {
  const whole = (): string => JSON.stringify(sortedForJson(m), null, 2) + '\n';
  const top = m as unknown as Record<string, unknown>;
  if (!plainObject(top) || Array.isArray(top)) return whole();
  const keys = sortedKeys(top);
  if (keys.length === 0) return '{}\n';
  // One list of pieces joined once (a 700 KB manifest is copied once, not per level).
  const out: string[] = ['{\n'];
  for (const [i, k] of keys.entries()) {
    const v = top[k];
    out.push(i === 0 ? '  ' : ',\n  ', JSON.stringify(k), ': ');
    if (k === 'artifacts' && Array.isArray(v)) {
      if (!v.every(plainObject)) return whole();
      if (v.length === 0) out.push('[]');
      else {
        out.push('[\n    ');
        for (let j = 0; j < v.length; j++) out.push(j === 0 ? '' : ',\n    ', memberText(v[j] as object));
        out.push('\n  ]');
      }
    } else if (k === 'targets' && plainObject(v) && !Array.isArray(v)) {
      const names = sortedKeys(v);
      if (!names.every((n) => plainObject(v[n]))) return whole();
      if (names.length === 0) out.push('{}');
      else {
        for (let j = 0; j < names.length; j++)
          out.push(j === 0 ? '{\n    ' : ',\n    ', JSON.stringify(names[j]), ': ', memberText(v[names[j]!] as object));
        out.push('\n  }');
      }
    } else if (
      v === null ||
      typeof v === 'string' ||
      typeof v === 'number' ||
      typeof v === 'boolean' ||
      plainObject(v)
    ) {
      out.push(JSON.stringify(sortedForJson(v), null, 2).replaceAll('\n', '\n  '));
    } else return whole();
  }
  out.push('\n}\n');
  return out.join('');
}

export function artifactsOf(rec: TargetRecord): Artifact[] {
  const out: Artifact[] = [];
  for (const o of rec.outputs) {
    if (!o.dir) out.push({ path: o.path, sha256: o.sha256, size: o.size, target: rec.name });
    else
      for (const [rel, sha] of Object.entries(o.files ?? {}))
        out.push({ dir: o.path, path: `${o.path}/${rel}`, sha256: sha, size: -1, target: rec.name });
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

/**
 * What a build knows of the records it started with, so only the sidecars of the targets it
 * changed are checked: the trace log's stat before its first write (manifest-state.ts:
 * traceStatLine) and, per target whose record it replaced or removed, the record before
 * (TraceLog.changedSince).
 */
export interface ManifestBase {
  traceLine: string;
  changed: ReadonlyMap<string, TargetRecord | undefined>;
}

interface Derived {
  /** JSON of the builtBy the entry holds ('' for none). */
  builtBy: string;
  entry: Manifest['targets'][string];
  /** A directory's files with size -1: read from disk by every build. */
  artifacts: Artifact[];
}

/** Per frozen trace record (one the process may see again, unchanged): its entry and artifacts. */
const derived = new WeakMap<TargetRecord, Derived>();

/** The record's entry and artifacts; `share`: frozen, to be kept (and their texts) for later builds. */
function deriveEntry(rec: TargetRecord, by: BuiltBy | undefined, byText: string, share: boolean): Derived {
  const links: Record<string, string> = {};
  for (const o of rec.outputs) for (const [rel, to] of Object.entries(o.links ?? {})) links[`${o.path}/${rel}`] = to;
  const entry: Manifest['targets'][string] = {
    at: rec.at,
    ...(by ? { builtBy: by } : {}),
    how: rec.how,
    inputs: rec.fingerprint.inputs,
    key: rec.key,
    ...(Object.keys(links).length ? { links } : {}),
    outputs: rec.outputs.map((o) => o.path),
    result: rec.result,
    ...(rec.rule ? { rule: rec.rule } : {}),
  };
  const artifacts = artifactsOf(rec);
  if (share) {
    deepFreeze(entry);
    for (const a of artifacts) Object.freeze(a);
  }
  return { builtBy: byText, entry, artifacts };
}

export function buildManifest(ws: ManifestWorkspace, git: Manifest['git']): Manifest {
  const artifacts: Artifact[] = [];
  const targets: Manifest['targets'] = {};
  const builtBy = readProvenance(ws.stateDir); // who built each fingerprint (cache/remote/provenance.ts)
  // Members in sorted key order, so that the text (manifestText) needs no copy of them.
  for (const [name, rec] of localeSorted([...ws.trace.records], ([n]) => n)) {
    if (!ws.pipeline.targets.has(name) || rec.result === 'failed') continue;
    const by = builtBy[rec.key];
    const byText = by ? JSON.stringify(by) : '';
    const share = Object.isFrozen(rec);
    let d = share ? derived.get(rec) : undefined;
    if (d === undefined || d.builtBy !== byText) {
      d = deriveEntry(rec, by, byText, share);
      if (share) {
        derived.set(rec, d);
        sharedTexts.set(d.entry, null);
        for (const a of d.artifacts) sharedTexts.set(a, null);
      }
    }
    targets[name] = d.entry;
    for (const a of d.artifacts) {
      if (a.dir === undefined) artifacts.push(a);
      else {
        // A directory's file: its size as on disk now (the record holds none).
        const size = fs.statSync(path.join(ws.root, a.path), { throwIfNoEntry: false })?.size ?? 0;
        artifacts.push(size === a.size ? a : { ...a, size });
      }
    }
  }
  return {
    artifacts: localeSorted(artifacts, (a) => a.path),
    format: MANIFEST_FORMAT,
    git,
    profile: ws.profile,
    targets,
  };
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

/**
 * A wrong sidecar rewritten in place, so its directory's stat (which the manifest state records)
 * stays as it was. Only a plain file with one link is written through; a symbolic link, a hard
 * link or anything else there is replaced whole (temp + rename), so nothing outside is written.
 * A kill mid-write leaves a short sidecar that the next build finds wrong (the manifest state is
 * recorded only after every sidecar is written).
 */
function rewriteSidecar(abs: string, body: string): void {
  let fd: number;
  try {
    fd = fs.openSync(abs, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return writeFileAtomic(abs, body);
  }
  let inPlace = false;
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile() && st.nlink === 1) {
      const bytes = Buffer.from(body);
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off, off);
      fs.ftruncateSync(fd, bytes.length);
      inPlace = true;
    }
  } finally {
    fs.closeSync(fd);
  }
  if (!inPlace) writeFileAtomic(abs, body);
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
 * `base`: the records this build started with; when the last full check was recorded for them and
 * the sidecar directories are as it left them (manifestUnchangedSince), only the changed targets'
 * sidecars are read, written or removed; otherwise every sidecar is checked by content.
 * Returns the workspace paths it wrote or removed.
 */
export function writeManifest(
  ws: ManifestWorkspace,
  git: Manifest['git'] | null,
  gitNow: () => Manifest['git'] = () => ({ commit: null, dirty: null }),
  base?: ManifestBase,
): string[] {
  const plan = writeSidecars(ws, git, gitNow, base);
  return plan ? completeManifest(ws, plan) : [];
}

/** What writeSidecars leaves for completeManifest: the manifest's text and what was written so far. */
export interface ManifestPlan {
  file: string;
  text: string;
  /** The manifest's text on disk before (null: none). */
  current: string | null;
  /** Sidecars written or removed (workspace paths), in order. */
  changed: string[];
  /** path → content written (null: removed). */
  written: Map<string, string | null>;
}

/**
 * The first half of writeManifest: the manifest's text is made and every sidecar made to match
 * it (created, rewritten, stale ones removed), but manifest.json is not written and the manifest
 * state not recorded. A build runs it while the end-of-build sync flushes the outputs (sidecars
 * are derived, and checked again by any build that finds the state unrecorded), then
 * completeManifest once the sync is done. Null when nothing recorded changed and the files are as
 * last checked.
 */
export function writeSidecars(
  ws: ManifestWorkspace,
  git: Manifest['git'] | null,
  gitNow: () => Manifest['git'] = () => ({ commit: null, dirty: null }),
  base?: ManifestBase,
): ManifestPlan | null {
  const dir = ws.pipeline.manifestDir;
  // Nothing recorded changed and the files are as last checked (manifest-state.ts): done.
  if (git === null && manifestUnchanged(ws)) return null;
  const incremental = base !== undefined && manifestUnchangedSince(ws, base.traceLine);
  const mfile = path.join(ws.root, manifestPath(dir));
  const current = readOrNull(mfile);
  const m = buildManifest(ws, git ?? recordedGit(current) ?? gitNow());
  const text = manifestText(m);
  const changed: string[] = [];
  const written = new Map<string, string | null>(); // path → content written (null: removed)
  const wanted = new Set<string>();
  for (const a of m.artifacts) wanted.add(sidecarPath(dir, a.path));
  // No sidecar folder at all (a build from clean, reports/ removed): every sidecar is created, none
  // read first (1 000 reads that fail cost ~10 ms). One appearing meanwhile is replaced whole
  // (createSidecar's EEXIST).
  const noSidecars = !fs.existsSync(path.join(ws.root, dir, 'sha256'));
  for (const a of m.artifacts) {
    if (incremental && !base.changed.has(a.target)) continue; // its sidecar is as the last check left it
    const rel = sidecarPath(dir, a.path);
    const abs = path.join(ws.root, rel);
    const body = `${a.sha256}  ${a.path}\n`;
    const now = noSidecars ? null : readOrNull(abs);
    if (now !== body) {
      engineWrite(
        'the sidecar',
        abs,
        () => (now === null ? createSidecar(abs, body) : rewriteSidecar(abs, body)),
        ws.root,
      );
      changed.push(rel);
      written.set(rel, body);
    }
  }
  // Stale sidecars: incrementally, those of the changed targets' previous artifacts (the last
  // check left no other); else every file under the sidecar directory is listed.
  let existing: string[] = [];
  if (incremental) {
    for (const [name, old] of base.changed)
      if (old && old.result !== 'failed' && ws.pipeline.targets.has(name))
        for (const a of artifactsOf(old)) existing.push(sidecarPath(dir, a.path));
  } else {
    try {
      existing = listFilesRecursive(path.join(ws.root, dir, 'sha256')).map((f) => path.posix.join(dir, 'sha256', f));
    } catch {
      existing = [];
    }
  }
  for (const rel of existing) {
    if (!wanted.has(rel)) {
      fs.rmSync(path.join(ws.root, rel), { force: true });
      changed.push(rel);
      written.set(rel, null);
    }
  }
  return { file: mfile, text, current, changed, written };
}

/**
 * The second half: manifest.json written (durably) where its text changed, then the manifest
 * state recorded, last, so a kill before it leaves a state that the next build checks in full.
 * Returns the workspace paths written or removed, the manifest first.
 */
export function completeManifest(ws: ManifestWorkspace, plan: ManifestPlan): string[] {
  const rel = manifestPath(ws.pipeline.manifestDir);
  const changed = [...plan.changed];
  if (plan.text !== plan.current) {
    engineWrite('the manifest', plan.file, () => writeFileAtomic(plan.file, plan.text, { durable: true }), ws.root);
    changed.unshift(rel);
    plan.written.set(rel, plan.text);
  }
  recordManifestState(ws, plan.written);
  return changed;
}
