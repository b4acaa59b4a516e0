// Hashes one output as a rule left it in its temp root: a file (sha256 of its bytes) or a
// directory (sha256 of its sorted listing: `sha256  relpath` per file, `link:<target>  relpath` per
// symbolic link — see treeListing), keeping
// each file's stat so the stat cache can trust it once the output is renamed into place.
import * as path from 'node:path';
import { hashFileWithStatSync, sha256Hex } from '../hash/hash-file.ts';
import { listTree, treeListing } from '../util/fs.ts';
import type { HashedOutput } from './protocol.ts';

export function hashOutput(o: { path: string; dir: boolean; tmp: string }): HashedOutput {
  const statTimeNs = BigInt(Date.now()) * 1_000_000n;
  if (!o.dir) {
    const h = hashFileWithStatSync(o.tmp);
    return { path: o.path, tmp: o.tmp, dir: false, sha256: h.sha256, size: h.size, files: { '': [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino] }, statTimeNs };
  }
  const files: HashedOutput['files'] = {};
  const shas: Record<string, string> = {};
  let size = 0;
  const tree = listTree(o.tmp);
  for (const rel of tree.files) {
    const h = hashFileWithStatSync(path.join(o.tmp, rel));
    files[rel] = [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino];
    shas[rel] = h.sha256;
    size += h.size;
  }
  const links = Object.fromEntries(tree.links);
  return { path: o.path, tmp: o.tmp, dir: true, sha256: sha256Hex(treeListing(shas, links)), size, files, links, statTimeNs };
}
