// Small filesystem helpers shared by the engine: atomic whole-file writes (temp + rename, the
// temp removed again if the write fails), fsync of files and directories (durability at commit;
// RC1_FSYNC=off turns it off, for benchmarks), recursive removal, and existence checks that never
// throw.
import * as fs from 'node:fs';
import * as path from 'node:path';

let counter = 0;

/** A unique temporary name beside `file` (same directory, so rename is atomic). */
export function tempName(file: string): string {
  return `${file}.tmp-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

/** Whether the engine fsyncs what it commits (on unless RC1_FSYNC=off). */
export const FSYNC = process.env.RC1_FSYNC !== 'off';

/** fsync one file or directory (no-op when RC1_FSYNC=off). */
export function fsyncPath(p: string): void {
  if (!FSYNC) return;
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** fsync every file and directory under dir, then dir itself (symbolic links are not followed). */
export function fsyncTree(dir: string): void {
  if (!FSYNC) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) fsyncTree(p);
    else if (e.isFile()) fsyncPath(p);
  }
  fsyncPath(dir);
}

/**
 * Write a whole file so readers see either the old or the new content, never a mix. `durable`:
 * fsync the data before the rename and the directory after it. A failed write (a full disk)
 * removes its temp file and rethrows. `dirExists`: the caller made the directory (skips a mkdir).
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: { durable?: boolean; dirExists?: boolean; mode?: number } = {},
): void {
  if (!opts.dirExists) fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempName(file);
  try {
    const fd = fs.openSync(tmp, 'w', opts.mode ?? 0o666);
    try {
      fs.writeFileSync(fd, data);
      if (opts.durable && FSYNC) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  if (opts.durable) fsyncPath(path.dirname(file));
}

const made = new Set<string>();

/**
 * mkdir -p, remembering directories already made by this process (one syscall per directory).
 * The first directory this call created (a new entry in its parent, not yet durable), if any.
 */
export function ensureDir(dir: string): string | undefined {
  if (made.has(dir)) return undefined;
  const first = fs.mkdirSync(dir, { recursive: true });
  made.add(dir);
  return first;
}

/** Forgets the directories made so far: the resident server calls it before each command (a directory may be gone since). */
export function forgetMadeDirs(): void {
  made.clear();
}

export function rmrf(p: string): void {
  fs.rmSync(p, { recursive: true, force: true });
}

export function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

export function readJsonOrNull<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/**
 * A directory output's entries: regular files and symbolic links (not followed: a `latest ->
 * step_00042` link is part of a checkpoint directory's meaning), relative paths, sorted.
 */
export function listTree(dir: string): { files: string[]; links: [string, string][] } {
  const files: string[] = [];
  const links: [string, string][] = [];
  const walk = (d: string, prefix: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isSymbolicLink()) links.push([rel, fs.readlinkSync(path.join(d, e.name))]);
      else if (e.isDirectory()) walk(path.join(d, e.name), rel);
      else if (e.isFile()) files.push(rel);
    }
  };
  walk(dir, '');
  return { files: files.sort(), links: links.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
}

/**
 * The text a directory output's hash is taken over: one `sha256  relpath` line per file (as
 * sha256sum prints it) and one `link:<target>  relpath` line per symbolic link, sorted by path.
 */
export function treeListing(files: Record<string, string>, links: Record<string, string>): string {
  const lines: [string, string][] = [
    ...Object.entries(files).map(([rel, sha]): [string, string] => [rel, `${sha}  ${rel}\n`]),
    ...Object.entries(links).map(([rel, target]): [string, string] => [rel, `link:${target}  ${rel}\n`]),
  ];
  lines.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return lines.map(([, l]) => l).join('');
}

/** Every regular file under dir, as paths relative to dir with '/' separators, sorted. */
export function listFilesRecursive(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, prefix: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), rel);
      else if (e.isFile()) out.push(rel);
    }
  };
  walk(dir, '');
  return out.sort();
}
