// Where the rc1-build package lies on disk, found from this module's own file: dist/*.js when the
// engine runs bundled, packages/engine/src/util/engine-root.ts when tests run it from source.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** Root of the rc1-build package (the folder with its package.json and src/api). */
export function engineRoot(): string {
  if (root !== undefined) return root;
  let d = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(d, 'package.json')) || !fs.existsSync(path.join(d, 'src', 'api'))) {
    const up = path.dirname(d);
    if (up === d) throw new Error('internal error: cannot find the rc1-build package root; please report');
    d = up;
  }
  root = d;
  return d;
}
