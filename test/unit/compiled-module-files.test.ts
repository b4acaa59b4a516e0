// compiledModuleFiles: a compiled module and the shared chunks it imports, directly or not, as
// esbuild writes their imports (static, minified, import()). These are the files a Slurm job
// staged through the remote cache takes with the module. A missing chunk is an error naming the
// module that imports it. Real files in a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compiledModuleFiles } from '../../packages/engine/src/config/compile-module.ts';

test('a module, the chunks it imports (static, minified, import()) and theirs, each once; a missing chunk is an error naming the importer', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-compiled-files-'));
  try {
    const write = (f: string, text: string): string => {
      fs.writeFileSync(path.join(dir, f), text);
      return path.join(dir, f);
    };
    write('chunk-AAAA1111.mjs', 'import{a as t}from"./chunk-BBBB2222.mjs";export const x=t;\n');
    write('chunk-BBBB2222.mjs', 'export const a = 1;\n');
    write('chunk-CCCC3333.mjs', 'import { a } from "./chunk-BBBB2222.mjs";\nexport const c = a;\n');
    // a string that only looks like a path to a chunk is not an import
    const mod = write(
      'rules_r.ts-0123456789abcdef.mjs',
      'import { x } from "./chunk-AAAA1111.mjs";\nconst later = () => import("./chunk-CCCC3333.mjs");\nconst s = "./chunk-ZZZZ9999.mjs";\nexport default { x, later, s };\n//# sourceMappingURL=rules_r.ts-0123456789abcdef.mjs.map\n',
    );
    assert.deepEqual(
      compiledModuleFiles(mod)
        .map((f) => path.basename(f))
        .sort(),
      ['chunk-AAAA1111.mjs', 'chunk-BBBB2222.mjs', 'chunk-CCCC3333.mjs', 'rules_r.ts-0123456789abcdef.mjs'],
    );
    fs.rmSync(path.join(dir, 'chunk-BBBB2222.mjs'));
    assert.throws(
      () => compiledModuleFiles(mod),
      (e: Error) => /chunk-(AAAA1111|CCCC3333)\.mjs imports \.\/chunk-BBBB2222\.mjs, which is not in /.test(e.message),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
