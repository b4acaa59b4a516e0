// Checkpoint directories, crash-safe (a SIGKILL at any moment leaves `latest` on a complete
// checkpoint):
//   step_XXXXX/   the engine's files plus checkpoint.json (CheckpointMeta: step, config hash, the
//                 sha256 of every other file, engine state). Written under .tmp-<name>-<pid>/,
//                 every file and the dir fsynced, then renamed into place; checkpoint.json is
//                 written last, so a dir without a valid one is incomplete by definition.
//   latest        a relative symlink to the newest complete step dir, swapped atomically: a new
//                 link under a temp name, renamed over `latest`, the parent dir fsynced.
//   best/         a copy of the best-evaluated checkpoint (plus eval.json), never modified in
//                 place: the new copy is built under a temp name, then renamed in (the old one is
//                 moved aside first and removed after; an interrupted swap is repaired on start).
//   initial/      the policy before training (the reference policy), written once.
// keep_last rotation removes older step dirs, never the one `latest` or best/ came from.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { CheckpointInfo, CheckpointMeta } from './api.ts';

export const META_FILE = 'checkpoint.json';
const STEP_RE = /^step_(\d+)$/;

export function stepDirName(step: number): string {
  return `step_${String(step).padStart(5, '0')}`;
}

async function fsyncPath(p: string): Promise<void> {
  const fh = await fsp.open(p, 'r');
  try { await fh.sync(); } finally { await fh.close(); }
}

async function sha256File(p: string): Promise<string> {
  return createHash('sha256').update(await fsp.readFile(p)).digest('hex');
}

/** Files of a dir, recursively, relative, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(relative(dir, p));
    }
  };
  await walk(dir);
  return out.sort();
}

/**
 * Seals a step dir: hashes every file, fsyncs them, writes checkpoint.json (temp file + rename)
 * and fsyncs the dir. Used for the built-in engine's temp dirs and for an external trainer's dirs.
 */
export async function sealCheckpoint(dir: string, meta: Omit<CheckpointMeta, 'files' | 'time'>): Promise<CheckpointMeta> {
  const files: Record<string, string> = {};
  for (const rel of await listFiles(dir)) {
    if (rel === META_FILE || rel.startsWith(`${META_FILE}.tmp`)) continue;
    files[rel] = await sha256File(join(dir, rel));
    await fsyncPath(join(dir, rel));
  }
  const full: CheckpointMeta = { ...meta, files, time: new Date().toISOString() };
  const tmp = join(dir, `${META_FILE}.tmp-${process.pid}`);
  await fsp.writeFile(tmp, `${JSON.stringify(full, null, 2)}\n`);
  await fsyncPath(tmp);
  await fsp.rename(tmp, join(dir, META_FILE));
  await fsyncPath(dir);
  return full;
}

export type Verified = { ok: true; meta: CheckpointMeta } | { ok: false; problem: string };

/** Whether a step dir is complete: checkpoint.json parses and every file it lists has its sha256. */
export async function verifyCheckpoint(dir: string): Promise<Verified> {
  let meta: CheckpointMeta;
  try {
    meta = JSON.parse(await fsp.readFile(join(dir, META_FILE), 'utf8')) as CheckpointMeta;
  } catch (e) {
    return { ok: false, problem: `${META_FILE} missing or unreadable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  if (typeof meta.step !== 'number' || typeof meta.config_hash !== 'string' || typeof meta.files !== 'object' || meta.files === null) {
    return { ok: false, problem: `${META_FILE} lacks step, config_hash or files` };
  }
  for (const [rel, sha] of Object.entries(meta.files)) {
    let got: string;
    try { got = await sha256File(join(dir, rel)); } catch { return { ok: false, problem: `${rel} is missing` }; }
    if (got !== sha) return { ok: false, problem: `${rel} has sha256 ${got.slice(0, 12)}…, checkpoint.json says ${sha.slice(0, 12)}…` };
  }
  return { ok: true, meta };
}

/** Writes a step dir atomically: `write` fills a temp dir, which is sealed and renamed into place. */
export async function writeCheckpoint(
  checkpointDir: string, step: number, meta: Omit<CheckpointMeta, 'files' | 'time' | 'step'>, write: (dir: string) => Promise<void>,
): Promise<CheckpointInfo> {
  await fsp.mkdir(checkpointDir, { recursive: true });
  const name = stepDirName(step);
  const tmp = join(checkpointDir, `.tmp-${name}-${process.pid}`);
  await fsp.rm(tmp, { recursive: true, force: true });
  await fsp.mkdir(tmp);
  await write(tmp);
  const sealed = await sealCheckpoint(tmp, { ...meta, step });
  const dir = join(checkpointDir, name);
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.rename(tmp, dir);
  await fsyncPath(checkpointDir);
  return { step, dir, meta: sealed };
}

/** Points `latest` at a step dir (by name, relative), atomically. */
export async function updateLatest(checkpointDir: string, name: string): Promise<void> {
  const tmp = join(checkpointDir, `.latest-${process.pid}`);
  await fsp.rm(tmp, { force: true });
  await fsp.symlink(name, tmp);
  await fsp.rename(tmp, join(checkpointDir, 'latest'));
  await fsyncPath(checkpointDir);
}

/** Step dirs by step, ascending. */
export async function listSteps(checkpointDir: string): Promise<{ step: number; name: string }[]> {
  let names: string[];
  try { names = await fsp.readdir(checkpointDir); } catch { return []; }
  return names.flatMap((n) => { const m = STEP_RE.exec(n); return m ? [{ step: Number(m[1]), name: n }] : []; }).sort((a, b) => a.step - b.step);
}

/** The step dir `latest` names, or null when there is no `latest`. */
export async function latestTarget(checkpointDir: string): Promise<string | null> {
  try { return await fsp.readlink(join(checkpointDir, 'latest')); } catch { return null; }
}

/** Removes all but the newest keepLast step dirs, sparing `latest`'s target and `protect`. Returns what was removed. */
export async function rotate(checkpointDir: string, keepLast: number, protect: readonly string[] = []): Promise<string[]> {
  const steps = await listSteps(checkpointDir);
  const keep = new Set([...steps.slice(-keepLast).map((s) => s.name), ...protect]);
  const latest = await latestTarget(checkpointDir);
  if (latest) keep.add(latest);
  const removed: string[] = [];
  for (const s of steps) {
    if (keep.has(s.name)) continue;
    await fsp.rm(join(checkpointDir, s.name), { recursive: true, force: true });
    removed.push(s.name);
  }
  return removed;
}

async function copyTree(src: string, dst: string, link: boolean): Promise<void> {
  await fsp.mkdir(dst, { recursive: true });
  for (const e of await fsp.readdir(src, { withFileTypes: true })) {
    const s = join(src, e.name);
    const d = join(dst, e.name);
    if (e.isDirectory()) await copyTree(s, d, link);
    else if (e.isSymbolicLink()) await fsp.symlink(await fsp.readlink(s), d);
    else if (link) {
      try { await fsp.link(s, d); } catch { await fsp.copyFile(s, d); }
    } else {
      await fsp.copyFile(s, d);
      await fsyncPath(d);
    }
  }
}

/** Replaces best/ with a copy of a step dir plus eval.json, never modifying best/ in place. */
export async function saveBest(checkpointDir: string, stepDir: string, evalJson: unknown): Promise<void> {
  const tmp = join(checkpointDir, `.best-tmp-${process.pid}`);
  await fsp.rm(tmp, { recursive: true, force: true });
  await copyTree(stepDir, tmp, false);
  await fsp.writeFile(join(tmp, 'eval.json'), `${JSON.stringify(evalJson, null, 2)}\n`);
  await fsyncPath(join(tmp, 'eval.json'));
  await fsyncPath(tmp);
  const best = join(checkpointDir, 'best');
  const prev = join(checkpointDir, `.best-prev-${process.pid}`);
  const had = fs.existsSync(best);
  if (had) await fsp.rename(best, prev);
  await fsp.rename(tmp, best);
  await fsyncPath(checkpointDir);
  if (had) await fsp.rm(prev, { recursive: true, force: true });
}

/**
 * Repairs what a killed run can leave: temp dirs and links are removed, an interrupted best/ swap
 * is undone, and step dirs newer than `latest` (written, but `latest` never moved to them) are
 * removed, since the resumed run recomputes those steps. Returns one line per repair.
 */
export async function repairCheckpointDir(checkpointDir: string): Promise<string[]> {
  const notes: string[] = [];
  let names: string[];
  try { names = await fsp.readdir(checkpointDir); } catch { return notes; }
  const hasBest = names.includes('best');
  for (const n of names.filter((x) => x.startsWith('.best-prev-')).sort()) {
    if (!hasBest && !fs.existsSync(join(checkpointDir, 'best'))) {
      await fsp.rename(join(checkpointDir, n), join(checkpointDir, 'best'));
      notes.push(`restored best/ from an interrupted swap (${n})`);
    } else await fsp.rm(join(checkpointDir, n), { recursive: true, force: true });
  }
  for (const n of names.filter((x) => x.startsWith('.tmp-') || x.startsWith('.latest-') || x.startsWith('.best-tmp-'))) {
    await fsp.rm(join(checkpointDir, n), { recursive: true, force: true });
    notes.push(`removed ${n} (a write interrupted by a kill)`);
  }
  const latest = await latestTarget(checkpointDir);
  const latestStep = latest ? Number(STEP_RE.exec(latest)?.[1] ?? -1) : -1;
  for (const s of await listSteps(checkpointDir)) {
    if (s.step > latestStep) {
      await fsp.rm(join(checkpointDir, s.name), { recursive: true, force: true });
      notes.push(`removed ${s.name} (newer than latest: that step is recomputed)`);
    }
  }
  return notes;
}

/** Copies the checkpoint dir's state into an output dir: step dirs, best/, initial/ hard-linked (copied across devices), `latest` as the same relative link. */
export async function materialize(checkpointDir: string, outDir: string): Promise<void> {
  await fsp.mkdir(outDir, { recursive: true });
  for (const e of await fsp.readdir(checkpointDir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const src = join(checkpointDir, e.name);
    if (e.isSymbolicLink()) await fsp.symlink(await fsp.readlink(src), join(outDir, e.name));
    else if (e.isDirectory()) await copyTree(src, join(outDir, e.name), true);
  }
}
