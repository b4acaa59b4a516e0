// Checkpoint directories, crash-safe (a SIGKILL at any moment leaves `latest` on a complete
// checkpoint):
//   step_XXXXX/   the engine's files plus checkpoint.json (CheckpointMeta: step, config hash, the
//                 sha256 of every other file, engine state). Written under .tmp-<name>-<pid>/,
//                 every file and the dir fsynced, then renamed into place; checkpoint.json is
//                 written last, so a dir without a valid one is incomplete by definition.
//   latest        a relative symlink to the newest complete step dir, swapped atomically: a new
//                 link under a temp name, renamed over `latest`, the parent dir fsynced.
//   best_XXXXX/   a copy of the checkpoint of step XXXXX (plus eval.json) made when its shadow
//                 eval improved on the best so far: built under a temp name, fsynced, renamed into
//                 place, and never modified after (a later improvement writes its own best_YYYYY/).
//   best          a relative symlink to the newest best_XXXXX/, swapped atomically like `latest`;
//                 a kill between the new dir and the swap is rolled forward on start.
//   initial/      the policy before training (the reference policy), written once.
// keep_last rotation removes older step dirs and older best_XXXXX dirs, never one that `latest`
// or `best` names.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import type { CheckpointInfo, CheckpointMeta } from './api.ts';

export const META_FILE = 'checkpoint.json';
export const BEST_LINK = 'best';
const STEP_RE = /^step_(\d+)$/;
const BEST_RE = /^best_(\d+)$/;

export function stepDirName(step: number): string {
  return `step_${String(step).padStart(5, '0')}`;
}

export function bestDirName(step: number): string {
  return `best_${String(step).padStart(5, '0')}`;
}

async function fsyncPath(p: string): Promise<void> {
  const fh = await fsp.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function sha256File(p: string): Promise<string> {
  return createHash('sha256')
    .update(await fsp.readFile(p))
    .digest('hex');
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
export async function sealCheckpoint(
  dir: string,
  meta: Omit<CheckpointMeta, 'files' | 'time'>,
): Promise<CheckpointMeta> {
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
    return {
      ok: false,
      problem: `${META_FILE} missing or unreadable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    };
  }
  if (
    typeof meta.step !== 'number' ||
    typeof meta.config_hash !== 'string' ||
    typeof meta.files !== 'object' ||
    meta.files === null
  ) {
    return { ok: false, problem: `${META_FILE} lacks step, config_hash or files` };
  }
  for (const [rel, sha] of Object.entries(meta.files)) {
    let got: string;
    try {
      got = await sha256File(join(dir, rel));
    } catch {
      return { ok: false, problem: `${rel} is missing` };
    }
    if (got !== sha)
      return {
        ok: false,
        problem: `${rel} has sha256 ${got.slice(0, 12)}…, checkpoint.json says ${sha.slice(0, 12)}…`,
      };
  }
  return { ok: true, meta };
}

/** Writes a step dir atomically: `write` fills a temp dir, which is sealed and renamed into place. */
export async function writeCheckpoint(
  checkpointDir: string,
  step: number,
  meta: Omit<CheckpointMeta, 'files' | 'time' | 'step'>,
  write: (dir: string) => Promise<void>,
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

/** Points the link `link` of a checkpoint dir at `name` (relative), atomically: a new link under a temp name renamed over it. */
async function swapLink(checkpointDir: string, link: string, name: string): Promise<void> {
  const tmp = join(checkpointDir, `.${link}-${process.pid}`);
  await fsp.rm(tmp, { force: true });
  await fsp.symlink(name, tmp);
  await fsp.rename(tmp, join(checkpointDir, link));
  await fsyncPath(checkpointDir);
}

/** Points `latest` at a step dir (by name, relative), atomically. */
export async function updateLatest(checkpointDir: string, name: string): Promise<void> {
  await swapLink(checkpointDir, 'latest', name);
}

/** Step dirs by step, ascending. */
export async function listSteps(checkpointDir: string): Promise<{ step: number; name: string }[]> {
  let names: string[];
  try {
    names = await fsp.readdir(checkpointDir);
  } catch {
    return [];
  }
  return names
    .flatMap((n) => {
      const m = STEP_RE.exec(n);
      return m ? [{ step: Number(m[1]), name: n }] : [];
    })
    .sort((a, b) => a.step - b.step);
}

/** The step dir `latest` names, or null when there is no `latest`. */
export async function latestTarget(checkpointDir: string): Promise<string | null> {
  try {
    return await fsp.readlink(join(checkpointDir, 'latest'));
  } catch {
    return null;
  }
}

/** best_XXXXX dirs by step, ascending. */
export async function listBest(checkpointDir: string): Promise<{ step: number; name: string }[]> {
  let names: string[];
  try {
    names = await fsp.readdir(checkpointDir);
  } catch {
    return [];
  }
  return names
    .flatMap((n) => {
      const m = BEST_RE.exec(n);
      return m ? [{ step: Number(m[1]), name: n }] : [];
    })
    .sort((a, b) => a.step - b.step);
}

/** The best_XXXXX dir `best` names, or null (no `best`, or a directory left by an older version). */
export async function bestTarget(checkpointDir: string): Promise<string | null> {
  try {
    return await fsp.readlink(join(checkpointDir, BEST_LINK));
  } catch {
    return null;
  }
}

/**
 * Removes all but the newest keepLast step dirs and the newest keepLast best_XXXXX dirs, never one
 * that `latest` or `best` names, nor `protect`. Returns what was removed.
 */
export async function rotate(
  checkpointDir: string,
  keepLast: number,
  protect: readonly string[] = [],
): Promise<string[]> {
  const steps = await listSteps(checkpointDir);
  const bests = await listBest(checkpointDir);
  const keep = new Set([
    ...steps.slice(-keepLast).map((s) => s.name),
    ...bests.slice(-keepLast).map((b) => b.name),
    ...protect,
  ]);
  for (const named of [await latestTarget(checkpointDir), await bestTarget(checkpointDir)]) if (named) keep.add(named);
  const removed: string[] = [];
  for (const s of [...steps, ...bests]) {
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
      try {
        await fsp.link(s, d);
      } catch {
        await fsp.copyFile(s, d);
      }
    } else {
      await fsp.copyFile(s, d);
      await fsyncPath(d);
    }
  }
}

/**
 * Records a new best: copies a sealed step dir plus eval.json to best_<step>/ (temp dir, fsynced,
 * renamed into place), then swaps `best` to it. Nothing already written is modified: an earlier
 * best_XXXXX/ stays as it was (rotation removes it later unless a pointer names it). Returns the
 * new dir's name.
 */
export async function saveBest(
  checkpointDir: string,
  stepDir: string,
  evalJson: unknown,
  step?: number,
): Promise<string> {
  const at = step ?? Number(STEP_RE.exec(basename(stepDir))?.[1] ?? NaN);
  if (!Number.isInteger(at)) throw new Error(`internal error: saveBest needs the step of ${stepDir}; please report`);
  const name = bestDirName(at);
  const dest = join(checkpointDir, name);
  if (fs.existsSync(dest)) {
    if ((await bestTarget(checkpointDir)) === name) return name; // already the best: never rewritten
    await fsp.rm(dest, { recursive: true, force: true }); // an unnamed leftover of an interrupted run
  }
  const tmp = join(checkpointDir, `.best-tmp-${process.pid}`);
  await fsp.rm(tmp, { recursive: true, force: true });
  await copyTree(stepDir, tmp, false);
  await fsp.writeFile(join(tmp, 'eval.json'), `${JSON.stringify(evalJson, null, 2)}\n`);
  await fsyncPath(join(tmp, 'eval.json'));
  await fsyncPath(tmp);
  await fsp.rename(tmp, dest);
  await fsyncPath(checkpointDir);
  const link = join(checkpointDir, BEST_LINK);
  const legacy = fs.lstatSync(link, { throwIfNoEntry: false })?.isDirectory()
    ? join(checkpointDir, `.best-legacy-${process.pid}`)
    : null;
  if (legacy) await fsp.rename(link, legacy); // a best/ directory written by an older version
  await swapLink(checkpointDir, BEST_LINK, name);
  if (legacy) await fsp.rm(legacy, { recursive: true, force: true });
  return name;
}

/**
 * Repairs what a killed run can leave: temp dirs and links are removed, a best_XXXXX/ renamed in
 * before the kill gets the `best` link (rolled forward), and step dirs newer than `latest` (written, but `latest` never moved to them) are
 * removed, since the resumed run recomputes those steps. Returns one line per repair.
 */
export async function repairCheckpointDir(checkpointDir: string): Promise<string[]> {
  const notes: string[] = [];
  let names: string[];
  try {
    names = await fsp.readdir(checkpointDir);
  } catch {
    return notes;
  }
  for (const n of names.filter((x) => x.startsWith('.best-prev-') || x.startsWith('.best-legacy-')).sort()) {
    if (!fs.existsSync(join(checkpointDir, BEST_LINK))) {
      await fsp.rename(join(checkpointDir, n), join(checkpointDir, BEST_LINK));
      notes.push(`restored best from an interrupted swap (${n})`);
    } else await fsp.rm(join(checkpointDir, n), { recursive: true, force: true });
  }
  for (const n of names.filter((x) => x.startsWith('.tmp-') || x.startsWith('.latest-') || x.startsWith('.best-'))) {
    if (!fs.lstatSync(join(checkpointDir, n), { throwIfNoEntry: false })) continue; // restored as best just above
    await fsp.rm(join(checkpointDir, n), { recursive: true, force: true });
    notes.push(`removed ${n} (a write interrupted by a kill)`);
  }
  // A best_XXXXX/ newer than the one `best` names was renamed into place, but the kill came before
  // the link moved: it is complete (renamed only when whole), so the swap is rolled forward.
  const named = await bestTarget(checkpointDir);
  const namedStep = named ? Number(BEST_RE.exec(named)?.[1] ?? -1) : -1;
  const newest = (await listBest(checkpointDir)).at(-1);
  if (newest && newest.step > namedStep && (named !== null || !fs.existsSync(join(checkpointDir, BEST_LINK)))) {
    await swapLink(checkpointDir, BEST_LINK, newest.name);
    notes.push(`best → ${newest.name} (rolled forward a swap interrupted by a kill)`);
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

/** Copies the checkpoint dir's state into an output dir: step dirs, best_XXXXX/, initial/ hard-linked (copied across devices), `latest` and `best` as the same relative links. */
export async function materialize(checkpointDir: string, outDir: string): Promise<void> {
  await fsp.mkdir(outDir, { recursive: true });
  for (const e of await fsp.readdir(checkpointDir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const src = join(checkpointDir, e.name);
    if (e.isSymbolicLink()) await fsp.symlink(await fsp.readlink(src), join(outDir, e.name));
    else if (e.isDirectory()) await copyTree(src, join(outDir, e.name), true);
  }
}
