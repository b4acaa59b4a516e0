// Staging 'remote-cache': a Slurm job whose node does not share the workspace with the build.
// Everything moves by digest through the pipeline's remote cache (the same BlobStore as the output
// cache: /cas/<sha256> objects, an /ac/<key> document):
//
//   build (submitting machine)                          job's node
//   hash the rule's compiled module and every input
//   file; PUT /cas/<sha256> (HEAD first for ≥ 1 MiB)
//   job.json (paths + digests + a random result key)
//   embedded in job.sh ──── sbatch ────────────────►   GET /cas/<sha256> of each into a scratch
//                                                      workspace (<scratch>/rc1-<uid>/rc1-<target>-…/), sha256
//                                                      checked; the job's paths mapped into it;
//                                                      the rule runs through the worker harness
//                                                      PUT /cas/ of every output file; PUT
//   GET /ac/<result key> ◄───────────────────────────  /ac/<result key>: the result (digests of the
//   (signed by the build's own key when the pipeline   outputs, a directory's listing), signed
//   has signingKeyEnv; else unsigned, see README)      with the signing key when it is set
//   GET /cas/ of each output file into .rc1/tmp/, sha256 checked; hash the staged outputs again,
//   compare with the node's digests → commit (the build, as for any other run)
//
// The result key is sha256 of a random 32-byte nonce chosen per submission: nobody can guess where
// a job's result will be, and a requeued job (same job id) writes to the same key, tagged with its
// restart count like result.json. The node's state dir lives in its scratch workspace, one per
// workspace and target: a job requeued onto the same node, or the next build's job for the target
// that lands there, resumes from it; on another node the rule starts over. Everything else an
// earlier run left in the scratch workspace is deleted before the inputs are fetched.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compiledModuleFiles } from '../../config/compile-module.ts';
import { hashFileSync } from '../../hash/hash-file.ts';
import type { Signer, TrustedKey } from '../../cache/remote/signing.ts';
import type { BlobStore } from '../../cache/remote/store.ts';
import { listTree, lstatOrNull, rmrf } from '../../util/fs.ts';
import type { HashedOutput, Job } from '../protocol.ts';
import type { NodeResult, RemoteOutput, RemoteStagingSpec, StagedFile } from './job-file.ts';

export type { RemoteOutput, RemoteStagingSpec } from './job-file.ts';

/** Objects of this size or more are looked up with HEAD before they are sent. */
const BIG = 1 << 20;
/** Transfers in flight at once. */
const IN_FLIGHT = 16;

/**
 * Where a job works on its node: <scratch>/rc1-<uid>/ (the build's user id: Slurm runs the job as
 * that user; made 0700 by the job, which refuses it when it is a link or another user's) holding
 * rc1-<target>-<12 hex of sha256 of the build's host name and workspace path>/ — one per
 * workspace and target (a job requeued onto the same node, or the next build's job for the
 * target, finds the state dir the last run left; the workspace lock keeps two builds of one
 * workspace apart), and never the same for two machines whose workspaces share a path.
 */
export function scratchJobDir(
  scratch: string,
  who: { uid: number; host: string; root: string },
  target: string,
): { top: string; dir: string } {
  const top = path.join(scratch, `rc1-${who.uid}`);
  const id = createHash('sha256').update(`${who.host}\0${who.root}`).digest('hex').slice(0, 12);
  return { top, dir: path.join(top, `rc1-${target}-${id}`) };
}

/**
 * The remote cache's URL as a job may carry it: no user name or password. Credentials in the URL
 * (http://user:pass@host/) travel as an Authorization header in the environment variable
 * AUTH_ENV instead (set for sbatch only; --export=ALL gives it to the job), like authHeader's.
 */
export function stagingUrl(url: string): { url: string; basicAuth: string | null } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url, basicAuth: null };
  }
  if (!u.username && !u.password) return { url, basicAuth: null };
  const basicAuth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  u.username = '';
  u.password = '';
  return { url: u.href, basicAuth };
}

/** The environment variable that carries the URL's credentials to the job (stagingUrl). */
export const AUTH_ENV = 'RC1_SLURM_REMOTE_CACHE_AUTH';

export function newResultKey(): string {
  return createHash('sha256').update(randomBytes(32)).digest('hex');
}

async function each<T>(items: readonly T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Upload a file as /cas/<sha256>; big ones only when the server lacks them. */
async function put(store: BlobStore, file: string, sha256: string, size: number): Promise<boolean> {
  if (size >= BIG && (await store.has('cas', sha256))) return false;
  await store.upload('cas', sha256, size > BIG ? { file, size } : fs.readFileSync(file));
  return true;
}

/**
 * The build's side, before sbatch: hash the module (with the shared chunks it imports) and the
 * inputs (directories walked, links kept as links) and upload them. Returns what the node must
 * fetch, and what was sent.
 */
export async function stageInputs(
  store: BlobStore,
  job: Pick<Job, 'module' | 'inputs'>,
): Promise<{ files: StagedFile[]; links: Record<string, string>; sent: number; bytes: number }> {
  const files = new Map<string, StagedFile>();
  const links: Record<string, string> = {};
  const addFile = (p: string, st: fs.Stats): void => {
    if (!files.has(p))
      files.set(p, { path: p, sha256: hashFileSync(p), size: st.size, ...(st.mode & 0o111 ? { exec: true } : {}) });
  };
  const add = (p: string): void => {
    const st = fs.statSync(p);
    if (!st.isDirectory()) return addFile(p, st);
    const t = listTree(p);
    for (const rel of t.files) addFile(path.join(p, rel), fs.statSync(path.join(p, rel)));
    for (const [rel, target] of t.links) links[path.join(p, rel)] = target;
  };
  for (const f of compiledModuleFiles(job.module)) add(f); // the rule's module and its shared chunks
  for (const ps of Object.values(job.inputs)) for (const p of ps) add(p);
  const list = [...files.values()];
  let sent = 0;
  let bytes = 0;
  await each(list, IN_FLIGHT, async (f) => {
    if (await put(store, f.path, f.sha256, f.size)) {
      sent++;
      bytes += f.size;
    }
  });
  return { files: list, links, sent, bytes };
}

/** Maps the build's absolute paths into the node's scratch workspace. */
export function scratchMapper(root: string, ws: string): (p: string) => string {
  return (p) => {
    if (p === root) return ws;
    if (p.startsWith(`${root}/`)) return path.join(ws, p.slice(root.length + 1));
    return path.join(ws, '.rc1-external', p); // an input outside the workspace (externalRoots)
  };
}

/** The job with every path of the build's machine replaced by its place in the scratch workspace. */
export function mapJob(job: Omit<Job, 'id'>, map: (p: string) => string): Omit<Job, 'id'> {
  return {
    ...job,
    root: map(job.root),
    module: map(job.module),
    stateDir: map(job.stateDir),
    tmpDir: map(job.tmpDir),
    inputs: Object.fromEntries(Object.entries(job.inputs).map(([k, ps]) => [k, ps.map(map)])),
    outputs: job.outputs.map((o) => ({ ...o, tmp: map(o.tmp) })),
  };
}

/**
 * Make `dir` and its parents below `root` (which exists), refusing a symbolic link or a
 * non-directory on the way: a fetch never writes through a link it finds.
 */
function mkdirBelow(root: string, dir: string, what: string): void {
  const rel = path.relative(root, dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`${what}: ${dir} is outside ${root}, refused`);
  let d = root;
  for (const seg of rel.split(path.sep).filter(Boolean)) {
    d = path.join(d, seg);
    let st = lstatOrNull(d);
    if (!st) {
      try {
        fs.mkdirSync(d);
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') throw e;
      }
      st = fs.lstatSync(d);
    }
    if (!st.isDirectory())
      throw new Error(
        `${what}: ${d} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}; a fetch never writes through it, refused`,
      );
  }
}

/** Download one object to `dest` (replaced; no link followed below `root`), checking its digest. */
async function fetchTo(
  store: BlobStore,
  sha256: string,
  size: number,
  root: string,
  dest: string,
  what: string,
): Promise<void> {
  mkdirBelow(root, path.dirname(dest), what);
  fs.rmSync(dest, { force: true });
  const got = await store.download('cas', sha256, dest);
  if (!got)
    throw new Error(`${what}: the remote cache has no object ${sha256.slice(0, 12)}… (evicted, or never uploaded)`);
  if (got.sha256 !== sha256 || got.size !== size) {
    fs.rmSync(dest, { force: true });
    throw new Error(
      `${what}: object ${sha256.slice(0, 12)}… arrived with sha256 ${got.sha256.slice(0, 12)}… (${got.size} bytes): corrupt download, refused`,
    );
  }
}

/**
 * The node's side, before fetching: empty the scratch workspace `ws` of whatever an earlier run
 * left there (a job stopped by a signal, a time limit or the OOM killer keeps its dir; so does a
 * failed staging), all but the rule's state dir `keep`, which a resumed run needs. Links are
 * removed, never followed; a link or a file where the state dir or one of its parents should be
 * is removed too (the rule starts over).
 */
export function clearScratch(ws: string, keep: string): void {
  const top = lstatOrNull(ws);
  if (top && !top.isDirectory()) fs.rmSync(ws, { force: true });
  fs.mkdirSync(ws, { recursive: true });
  const rel = path.relative(ws, keep);
  const segs = rel.startsWith('..') || path.isAbsolute(rel) ? [] : rel.split(path.sep).filter(Boolean);
  if (!segs.length) {
    for (const f of fs.readdirSync(ws)) rmrf(path.join(ws, f));
    return;
  }
  let d = ws;
  for (const seg of segs) {
    for (const f of fs.readdirSync(d)) if (f !== seg) rmrf(path.join(d, f));
    d = path.join(d, seg);
    const st = lstatOrNull(d);
    if (!st) return;
    if (!st.isDirectory()) {
      rmrf(d);
      return;
    }
  }
}

/**
 * The node's side: fetch the module and the inputs into the scratch workspace `ws`, emptied first
 * but for the rule's state dir `keep` (clearScratch): the rule sees the files the build listed,
 * and only those.
 */
export async function fetchInputs(
  store: BlobStore,
  spec: RemoteStagingSpec,
  into: { ws: string; keep: string; map: (p: string) => string },
): Promise<{ files: number; bytes: number }> {
  const { ws, map } = into;
  clearScratch(ws, into.keep);
  let bytes = 0;
  await each(spec.files, IN_FLIGHT, async (f) => {
    const dest = map(f.path);
    await fetchTo(store, f.sha256, f.size, ws, dest, `input ${f.path}`);
    if (f.exec) fs.chmodSync(dest, 0o755);
    bytes += f.size;
  });
  for (const [p, target] of Object.entries(spec.links)) {
    const dest = map(p);
    mkdirBelow(ws, path.dirname(dest), `input ${p}`);
    fs.rmSync(dest, { force: true });
    fs.symlinkSync(target, dest);
  }
  return { files: spec.files.length, bytes };
}

/** The node's side, after the rule: upload every output file; the outputs as the result lists them. */
export async function uploadOutputs(
  store: BlobStore,
  outputs: readonly HashedOutput[],
): Promise<{ outputs: RemoteOutput[]; sent: number; bytes: number }> {
  const jobs: { file: string; sha256: string; size: number }[] = [];
  const out: RemoteOutput[] = outputs.map((o) => {
    if (!o.dir) {
      jobs.push({ file: o.tmp, sha256: o.sha256, size: o.size });
      return { path: o.path, dir: false, sha256: o.sha256, size: o.size };
    }
    const files: Record<string, [string, number]> = {};
    for (const [rel, [sha, size]] of Object.entries(o.files)) {
      files[rel] = [sha, size];
      jobs.push({ file: path.join(o.tmp, rel), sha256: sha, size });
    }
    return {
      path: o.path,
      dir: true,
      sha256: o.sha256,
      size: o.size,
      listing: { files, ...(o.links && Object.keys(o.links).length ? { links: o.links } : {}) },
    };
  });
  const seen = new Set<string>();
  const unique = jobs.filter((j) => !seen.has(j.sha256) && seen.add(j.sha256));
  let sent = 0;
  let bytes = 0;
  await each(unique, IN_FLIGHT, async (j) => {
    if (await put(store, j.file, j.sha256, j.size)) {
      sent++;
      bytes += j.size;
    }
  });
  return { outputs: out, sent, bytes };
}

const RESULT_KIND = 'rc1-build slurm result';

/** The node's result as an /ac/ document: signed when the node has the signing key. */
export function resultDocument(resultKey: string, result: NodeResult, signer: Signer | null): Buffer {
  const entry = { key: resultKey, kind: RESULT_KIND, result };
  return Buffer.from(JSON.stringify(signer ? signer.sign(entry) : { format: 1, entry }));
}

/**
 * The build's side: the node's result, or null when there is none (the job ended before writing
 * it). `expect`: the build's own signing key, when it has one: the result must carry its valid
 * signature. A document that fails a check is an Error saying why.
 */
export async function fetchResult(
  store: BlobStore,
  resultKey: string,
  expect: TrustedKey | null,
): Promise<NodeResult | null> {
  const bytes = await store.getBytes('ac', resultKey);
  if (!bytes) return null;
  let entry: { key?: unknown; kind?: unknown; result?: unknown };
  if (expect) {
    const { verifyEnvelope } = await import('../../cache/remote/signing.ts');
    const v = verifyEnvelope(bytes, resultKey, new Map([[expect.id, expect]]));
    if (!v.ok) throw new Error(`the job's result in the remote cache is refused: ${v.why}`);
    entry = v.entry;
  } else {
    try {
      entry = (JSON.parse(bytes.toString('utf8')) as { entry: typeof entry }).entry ?? {};
    } catch {
      throw new Error("the job's result in the remote cache is not JSON");
    }
    if (entry.key !== resultKey) throw new Error("the job's result in the remote cache was made for another key");
  }
  if (entry.kind !== RESULT_KIND || !entry.result || typeof entry.result !== 'object')
    throw new Error("the job's result in the remote cache is not an rc1-build Slurm result");
  return entry.result as NodeResult;
}

/**
 * The build's side: download one output the node reported into its temporary path, every file
 * checked against its digest (a directory's links recreated). The caller hashes it again.
 */
export async function fetchOutput(store: BlobStore, o: { tmp: string }, sent: RemoteOutput): Promise<void> {
  fs.rmSync(o.tmp, { recursive: true, force: true });
  if (!sent.dir) {
    fs.mkdirSync(path.dirname(o.tmp), { recursive: true });
    return fetchTo(store, sent.sha256, sent.size, path.dirname(o.tmp), o.tmp, `output ${sent.path}`);
  }
  const l = sent.listing;
  if (!l) throw new Error(`output ${sent.path}: the job's result lists no files for this directory`);
  fs.mkdirSync(o.tmp, { recursive: true });
  const entries = Object.entries(l.files);
  for (const [rel] of [...entries, ...Object.entries(l.links ?? {})]) {
    // per segment, as remote-cache.ts checks an entry's listing: no '', '.' or '..' anywhere
    if (rel === '' || path.isAbsolute(rel) || rel.split('/').some((s) => s === '..' || s === '.' || s === ''))
      throw new Error(`output ${sent.path}: the job's result names ${JSON.stringify(rel)}, outside the directory`);
  }
  await each(entries, IN_FLIGHT, ([rel, [sha, size]]) =>
    fetchTo(store, sha, size, o.tmp, path.join(o.tmp, rel), `output ${sent.path}/${rel}`),
  );
  for (const [rel, target] of Object.entries(l.links ?? {})) {
    mkdirBelow(o.tmp, path.dirname(path.join(o.tmp, rel)), `output ${sent.path}/${rel}`);
    fs.symlinkSync(target, path.join(o.tmp, rel));
  }
}
