// Engine write errors: a full disk, an I/O error, a read-only or foreign filesystem, or missing
// permission while the engine writes its own files (outputs at commit, the trace log, the output
// cache, the manifest and its sidecars, error reports, rule logs, state caches). Each becomes one
// EngineWriteError that names the path and the filesystem it is on (mount point, type, free
// space), so the build can stop with one message, exit 1 and release its lock — never a raw
// Node stack. Filesystem facts come from /proc/self/mountinfo (Linux); elsewhere they are omitted.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** errno codes that mean "this filesystem refused the write" (not an engine bug). */
const WRITE_CODES: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  EXDEV: 'cross-device link not permitted',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only filesystem',
  EBUSY: 'device or resource busy (a mount point cannot be replaced)',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
};

/** errno codes of a move that met something in the way of the output's path (not a full or failing disk). */
const PATH_CODES: Record<string, string> = {
  EEXIST: 'a file is in the way (where a directory is needed)',
  ENOTDIR: 'a parent of that path is not a directory',
  EISDIR: 'a directory is in the way',
  ELOOP: 'too many levels of symbolic links (a symlink loop or a dangling chain in the way)',
  ENAMETOOLONG: 'file name too long',
  ENOTEMPTY: 'a non-empty directory is in the way',
};

/** Node's message without its "CODE: " prefix and ", syscall 'path'" suffix. */
function bareMessage(e: NodeJS.ErrnoException): string {
  return e.message.replace(/^[A-Z0-9_]+: /, '').replace(/, \w+ '.*$/s, '');
}

export interface FilesystemInfo {
  mountPoint: string;
  type: string;
  freeBytes: number | null;
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The mount point, type and free space of the filesystem holding `p` (or its nearest existing ancestor). */
export function filesystemOf(p: string): FilesystemInfo | null {
  let probe = path.resolve(p);
  for (;;) {
    try {
      probe = fs.realpathSync(probe);
      break;
    } catch {
      const up = path.dirname(probe);
      if (up === probe) return null;
      probe = up;
    }
  }
  let best: { mountPoint: string; type: string } | null = null;
  try {
    for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const parts = line.split(' ');
      const dash = parts.indexOf('-');
      if (parts.length < 5 || dash < 0) continue;
      const mp = unescapeMount(parts[4]!);
      const inside = probe === mp || probe.startsWith(mp.endsWith('/') ? mp : `${mp}/`);
      if (inside && (!best || mp.length >= best.mountPoint.length))
        best = { mountPoint: mp, type: parts[dash + 1] ?? '?' };
    }
  } catch {
    return null;
  }
  if (!best) return null;
  let freeBytes: number | null = null;
  try {
    const s = fs.statfsSync(probe);
    freeBytes = s.bavail * s.bsize;
  } catch {
    freeBytes = null;
  }
  return { ...best, freeBytes };
}

function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

export function describeFilesystem(p: string): string {
  const f = filesystemOf(p);
  if (!f) return 'its filesystem (mount point unknown)';
  return `the filesystem mounted at ${f.mountPoint} (${f.type}${f.freeBytes === null ? '' : `, ${humanBytes(f.freeBytes)} free`})`;
}

export class EngineWriteError extends Error {
  readonly code: string;
  constructor(
    readonly what: string,
    readonly file: string,
    cause: NodeJS.ErrnoException,
    root?: string,
  ) {
    const code = cause.code ?? 'EIO';
    const shown = root && (file === root || file.startsWith(root + path.sep)) ? path.relative(root, file) || '.' : file;
    super(
      `cannot write ${what} ${shown}: ${WRITE_CODES[code] ?? PATH_CODES[code] ?? bareMessage(cause)} (${code}) on ${describeFilesystem(file)}`,
    );
    this.name = 'EngineWriteError';
    this.code = code;
  }

  get hint(): string {
    switch (this.code) {
      case 'ENOSPC':
      case 'EDQUOT':
        return 'free space on that filesystem (rc1-build clean --cache drops the output cache), then build again: nothing half-written was recorded';
      case 'EACCES':
      case 'EPERM':
      case 'EROFS':
        return 'make that path writable for this user (or remount it read-write), then build again';
      case 'EEXIST':
      case 'ENOTDIR':
      case 'EISDIR':
      case 'ELOOP':
      case 'ENOTEMPTY':
        return 'move or remove what is in the way of that path (or fix the symlink), then build again: nothing half-written was recorded';
      case 'EBUSY':
        return 'an output cannot be a mount point itself: mount its parent directory instead';
      default:
        return 'check the filesystem (dmesg), then build again: nothing half-written was recorded';
    }
  }
}

/** True for an errno error that EngineWriteError describes. */
export function isWriteErrno(e: unknown): e is NodeJS.ErrnoException {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && code in WRITE_CODES;
}

/**
 * Runs an engine write; a filesystem refusal becomes an EngineWriteError naming `what` and the
 * path the system call failed on (or `file`). Anything else is rethrown unchanged.
 */
export function engineWrite<T>(what: string, file: string, fn: () => T, root?: string): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof EngineWriteError || !isWriteErrno(e)) throw e;
    const dest = (e as { dest?: unknown }).dest;
    const at = typeof dest === 'string' ? dest : typeof e.path === 'string' ? e.path : file;
    throw new EngineWriteError(what, at, e, root);
  }
}

/** Any filesystem refusal, wherever it was thrown, as an EngineWriteError (null if it is not one). */
export function asEngineWriteError(e: unknown, root?: string): EngineWriteError | null {
  if (e instanceof EngineWriteError) return e;
  if (!isWriteErrno(e)) return null;
  const at = typeof e.path === 'string' ? e.path : (root ?? '.');
  return new EngineWriteError('to', path.resolve(at), e, root);
}

/**
 * An errno error from reading a target's inputs or rule (a symlink loop, a directory where a file
 * is declared, a file this user cannot read) as one line naming the path; null if it is not one.
 * It fails that target only: reads are not engine writes, so they never halt the build.
 */
export function cannotRead(e: unknown, root: string): string | null {
  const err = e as NodeJS.ErrnoException | null;
  if (typeof err?.code !== 'string' || typeof err.path !== 'string') return null;
  const abs = path.resolve(root, err.path);
  const shown = abs === root || abs.startsWith(root + path.sep) ? path.relative(root, abs) || '.' : abs;
  return `cannot read ${shown}: ${bareMessage(err)} (${err.code})`;
}
