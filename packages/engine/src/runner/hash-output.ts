// Hashes one output as a rule left it in its temp root: a file (sha256 of its bytes) or a
// directory (sha256 of its sorted listing: `sha256  relpath` per file, `link:<target>  relpath` per
// symbolic link — see treeListing), keeping each file's stat so the stat cache can trust it once
// the output is renamed into place. With `fsync` (a rule that ran ≥ 1 s: see DURABLE_AFTER_MS),
// each file and directory is fsynced as it is hashed, so the output's bytes are on disk before
// the commit renames it into place; quicker targets are fsynced together at the end of the build
// (OutputCommitter.syncTouched). HashedOutput.synced says which. RC1_FSYNC=off skips both.
import * as path from 'node:path';
import { hashFileWithStatSync, sha256Hex } from '../hash/hash-file.ts';
import { FSYNC, fsyncPath, listTree, treeListing } from '../util/fs.ts';
import type { HashedOutput } from './protocol.ts';

export { DURABLE_AFTER_MS } from '../state/durability.ts';

/**
 * `onSmall`: called for each file that fit the hash's read buffer, at once, with the bytes just
 * hashed (a view of that buffer, valid only during the call): the rule worker stores the file's
 * cache object from them instead of reading it again, and without keeping copies in memory.
 */
export function hashOutput(
  o: { path: string; dir: boolean; tmp: string },
  opts: { fsync?: boolean; onSmall?: (file: string, sha256: string, bytes: Buffer) => void } = {},
): HashedOutput {
  const statTimeNs = BigInt(Date.now()) * 1_000_000n;
  const sync = FSYNC && opts.fsync === true;
  const keepSmall = opts.onSmall !== undefined;
  if (!o.dir) {
    const h = hashFileWithStatSync(o.tmp, { fsync: sync, keepSmall });
    if (h.bytes) opts.onSmall!(o.tmp, h.sha256, h.bytes);
    return {
      path: o.path,
      tmp: o.tmp,
      dir: false,
      sha256: h.sha256,
      size: h.size,
      files: { '': [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino, h.stat.ctimeNs] },
      statTimeNs,
      synced: sync,
    };
  }
  const files: HashedOutput['files'] = {};
  const shas: Record<string, string> = {};
  let size = 0;
  const tree = listTree(o.tmp);
  const dirs = new Set<string>([o.tmp]);
  for (const rel of tree.files) {
    const abs = path.join(o.tmp, rel);
    const h = hashFileWithStatSync(abs, { fsync: sync, keepSmall });
    if (h.bytes) opts.onSmall!(abs, h.sha256, h.bytes);
    files[rel] = [h.sha256, h.size, h.stat.mtimeNs, h.stat.ino, h.stat.ctimeNs];
    shas[rel] = h.sha256;
    size += h.size;
    for (let d = path.dirname(abs); d.length > o.tmp.length && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
  }
  for (const [rel] of tree.links)
    for (let d = path.dirname(path.join(o.tmp, rel)); d.length > o.tmp.length && !dirs.has(d); d = path.dirname(d))
      dirs.add(d);
  if (sync) for (const d of dirs) fsyncPath(d);
  const links = Object.fromEntries(tree.links);
  return {
    path: o.path,
    tmp: o.tmp,
    dir: true,
    sha256: sha256Hex(treeListing(shas, links)),
    size,
    files,
    links,
    statTimeNs,
    synced: sync,
  };
}
