// The layering check (.dependency-cruiser.cjs, run by `npm run lint`) fails on a planted
// engine → RC1 import, on RC1 code reaching past the engine's public API, and on an import cycle;
// and it passes the same tree without them. Runs dependency-cruiser's CLI on small trees in temp dirs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO } from '../helpers/rig.ts';

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-layering-'));
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  fs.copyFileSync(path.join(REPO, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  return dir;
}

function cruise(dir: string): { code: number | null; out: string } {
  const bin = path.join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const r = spawnSync(
    process.execPath,
    [bin, 'packages', 'lib', 'rules', '--config', path.join(REPO, '.dependency-cruiser.cjs')],
    { cwd: dir, encoding: 'utf8' },
  );
  return { code: r.status, out: r.stdout + r.stderr };
}

const CLEAN = {
  'packages/engine/src/api/index.ts': 'export const check = (): number => 1;\n',
  'packages/engine/src/cli/main.ts':
    "import { check } from '../api/index.ts';\nexport const main = (): number => check();\n",
  'lib/data/index.ts':
    "import { check } from '../../packages/engine/src/api/index.ts';\nexport const load = (): number => check();\n",
  'rules/seed.ts': "import { load } from '../lib/data/index.ts';\nexport default load;\n",
};

test('the layering check passes a tree where the engine imports nothing of the pipeline', () => {
  const r = cruise(tree(CLEAN));
  assert.equal(r.code, 0, r.out);
});

test('the layering check fails on a planted engine → RC1 import, naming the rule and the files', () => {
  const r = cruise(
    tree({
      ...CLEAN,
      'packages/engine/src/cli/main.ts':
        "import { load } from '../../../../lib/data/index.ts';\nexport const main = (): number => load();\n",
    }),
  );
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /engine-knows-no-pipeline/);
  assert.match(r.out, /packages\/engine\/src\/cli\/main\.ts/);
});

test('the layering check fails on RC1 code that reaches into the engine past its public API', () => {
  const r = cruise(
    tree({
      ...CLEAN,
      'packages/engine/src/util/fs.ts': 'export const x = 1;\n',
      'lib/data/index.ts':
        "import { x } from '../../packages/engine/src/util/fs.ts';\nexport const load = (): number => x;\n",
    }),
  );
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /pipeline-through-public-api/);
});

test('the layering check fails on an import cycle', () => {
  const r = cruise(
    tree({
      ...CLEAN,
      'lib/data/a.ts': "import { b } from './b.ts';\nexport const a = (): number => b();\n",
      'lib/data/b.ts': "import { a } from './a.ts';\nexport const b = (): number => a();\n",
    }),
  );
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /no-circular/);
});

test('the layering check fails on an engine module below cli/ that imports cli/, and on a scheduler that reaches past its executor interface', () => {
  const r = cruise(
    tree({
      ...CLEAN,
      'packages/engine/src/cli/workspace.ts': 'export const open = (): number => 1;\n',
      'packages/engine/src/build/run-build.ts':
        "import { open } from '../cli/workspace.ts';\nexport const run = (): number => open();\n",
      'packages/engine/src/executor/target-executor.ts': 'export const execute = (): number => 1;\n',
      'packages/engine/src/scheduler/scheduler.ts':
        "import { execute } from '../executor/target-executor.ts';\nexport const schedule = (): number => execute();\n",
    }),
  );
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /nothing-below-cli-imports-cli/);
  assert.match(r.out, /scheduler-knows-only-its-executor/);
  assert.match(r.out, /packages\/engine\/src\/build\/run-build\.ts/);
});
