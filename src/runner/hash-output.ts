// Hashes one output as a rule left it in its temp root: a file (sha256 of its bytes) or a
// directory (sha256 of its sorted listing: `sha256  relpath` per file, `link:<target>  relpath` per
// symbolic link — see treeListing), keeping each file's stat so the stat cache can trust it once
// the output is renamed into place. Each file (and directory) is fsynced as it is hashed, so an
// output's bytes are on disk before the commit renames it into place (RC1_FSYNC=off skips it).
import * as path from 'node:path';
import { hashFileWithStatSync, sha256Hex } from '../hash/hash-file.ts';
import { FSYNC, fsyncPath, listTree, treeListing } from '../util/fs.ts';
import type { HashedOutput } from './protocol.ts';

export function hashOutput(o: { path: string; dir: boolean; tmp: string }): HashedOutput {
  const statTimeNs = BigInt(Date.now()) * 1_000_000n;
  if (!o.dir) {
    const h = hashFileWithStatSync(o.tmp, { fsync: FSYNC });
    return { path: o.path, tmp: o.tmp, dir: false, sha256: h.sha256, size: h.size, files: { '': [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino, h.stat.ctimeNs] }, statTimeNs };
  }
  const files: HashedOutput['files'] = {};
  const shas: Record<string, string> = {};
  let size = 0;
  const tree = listTree(o.tmp);
  const dirs = new Set<string>([o.tmp]);
  for (const rel of tree.files) {
    const abs = path.join(o.tmp, rel);
    const h = hashFileWithStatSync(abs, { fsync: FSYNC });
    files[rel] = [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino, h.stat.ctimeNs];
    shas[rel] = h.sha256;
    size += h.size;
    for (let d = path.dirname(abs); d.length > o.tmp.length && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
  }
  for (const [rel] of tree.links) for (let d = path.dirname(path.join(o.tmp, rel)); d.length > o.tmp.length && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
  for (const d of dirs) fsyncPath(d);
  const links = Object.fromEntries(tree.links);
  return { path: o.path, tmp: o.tmp, dir: true, sha256: sha256Hex(treeListing(shas, links)), size, files, links, statTimeNs };
}
