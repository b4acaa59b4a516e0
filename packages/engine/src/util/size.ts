// Byte sizes as people write them ("500M", "20G", "1.5GiB") and as the CLI prints them, and the
// size of a file or folder on disk.
import * as fs from 'node:fs';
import * as path from 'node:path';
const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/** "500M", "20G", "1.5GiB", 1048576 → bytes (binary units); null if it is not a size. */
export function parseSize(v: string | number): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  return m && unit ? Math.floor(Number(m[1]) * unit) : null;
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}

/** Bytes of a file, or of every file under a folder (symlinks not followed); null when it does not exist. */
export function diskUsage(p: string): number | null {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (!st) return null;
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of fs.readdirSync(p)) n += diskUsage(path.join(p, e)) ?? 0;
  return n;
}
