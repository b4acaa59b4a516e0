// Small filesystem helpers shared by the engine: atomic whole-file writes (temp + rename),
// recursive removal, and existence checks that never throw.
import * as fs from 'node:fs';
import * as path from 'node:path';

let counter = 0;

/** A unique temporary name beside `file` (same directory, so rename is atomic). */
export function tempName(file: string): string {
  return `${file}.tmp-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

/** Write a whole file so readers see either the old or the new content, never a mix. */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempName(file);
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

const made = new Set<string>();

/** mkdir -p, remembering directories already made by this process (one syscall per directory). */
export function ensureDir(dir: string): void {
  if (made.has(dir)) return;
  fs.mkdirSync(dir, { recursive: true });
  made.add(dir);
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
