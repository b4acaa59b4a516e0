// Hashes one output as a rule left it in its temp root: a file (sha256 of its bytes) or a
// directory (sha256 of its sorted `sha256  relpath` listing, as sha256sum prints it), keeping
// each file's stat so the stat cache can trust it once the output is renamed into place.
import * as path from 'node:path';
import { hashFileWithStatSync, sha256Hex } from '../hash/hash-file.ts';
import { listFilesRecursive } from '../util/fs.ts';
import type { HashedOutput } from './protocol.ts';

export function hashOutput(o: { path: string; dir: boolean; tmp: string }): HashedOutput {
  const statTimeNs = BigInt(Date.now()) * 1_000_000n;
  if (!o.dir) {
    const h = hashFileWithStatSync(o.tmp);
    return { path: o.path, tmp: o.tmp, dir: false, sha256: h.sha256, size: h.size, files: { '': [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino] }, statTimeNs };
  }
  const files: HashedOutput['files'] = {};
  let size = 0;
  let listing = '';
  for (const rel of listFilesRecursive(o.tmp)) {
    const h = hashFileWithStatSync(path.join(o.tmp, rel));
    files[rel] = [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino];
    size += h.size;
    listing += `${h.sha256}  ${rel}\n`;
  }
  return { path: o.path, tmp: o.tmp, dir: true, sha256: sha256Hex(listing), size, files, statTimeNs };
}
