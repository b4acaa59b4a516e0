// Mounting a small tmpfs inside a test workspace (root only): a foreign filesystem for EXDEV
// tests and a tiny one for disk-full tests. canMount() says why not when mounting is refused.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

let probed: string | false | undefined;

/** false when `mount -t tmpfs` works here, else the reason (for a test's skip message). */
export function cannotMount(): string | false {
  if (probed !== undefined) return probed;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-mnt-probe-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status === 0) spawnSync('umount', [dir]);
  fs.rmSync(dir, { recursive: true, force: true });
  probed =
    r.status === 0
      ? false
      : `mounting a tmpfs is not permitted here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}); run as root to test foreign and full filesystems`;
  return probed;
}

export function mountTmpfs(dir: string, size: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount tmpfs at ${dir}: ${r.stderr}`);
}

export function remount(dir: string, opts: string): void {
  const r = spawnSync('mount', ['-o', `remount,${opts}`, dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`remount ${dir} ${opts}: ${r.stderr}`);
}

export function unmount(dir: string): void {
  spawnSync('umount', ['-l', dir]);
}

/** Fill the filesystem at dir with a file until at most `leave` bytes are free; returns its path. */
export function fillUp(dir: string, leave: number): string {
  const file = path.join(dir, '.filler');
  const free = (): number => {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  };
  const fd = fs.openSync(file, 'w');
  try {
    const chunk = Buffer.alloc(4096, 1);
    while (free() > leave) {
      try {
        fs.writeSync(fd, chunk);
      } catch {
        break;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return file;
}
