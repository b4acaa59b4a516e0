// test/helpers/shared-build.ts: a shared test build is built once under a lock, however many
// callers ask at once; a lock left by a process that is gone is taken over; a failed build leaves
// no entry; the digest follows every byte and name of the keyed files; the shared trained policy's
// key covers every source its build can read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO } from '../helpers/rig.ts';
import { sharedEntry, treeDigest } from '../helpers/shared-build.ts';
import { TRAINED_KEY_INPUTS, trainedKey } from '../helpers/trained-key.ts';

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-shared-build-'));
}

test('three callers at once: one build, the same complete entry for all', async () => {
  const root = tmp();
  try {
    let builds = 0;
    const build = async (dir: string): Promise<void> => {
      builds++;
      fs.mkdirSync(dir);
      await new Promise((r) => setTimeout(r, 50));
      fs.writeFileSync(path.join(dir, 'out.txt'), 'built');
    };
    const got = await Promise.all([1, 2, 3].map(() => sharedEntry('kind-abc', build, root)));
    assert.equal(builds, 1);
    assert.deepEqual(new Set(got), new Set([path.join(root, 'kind-abc')]));
    assert.equal(fs.readFileSync(path.join(root, 'kind-abc', 'out.txt'), 'utf8'), 'built');
    assert.deepEqual(fs.readdirSync(root), ['kind-abc']);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a lock whose process is gone is taken over; a failed build leaves no entry and no lock', async () => {
  const root = tmp();
  try {
    fs.mkdirSync(path.join(root, 'kind-x.lock'));
    fs.writeFileSync(path.join(root, 'kind-x.lock', 'pid'), '2147483646'); // no such process
    await assert.rejects(
      sharedEntry(
        'kind-x',
        async (dir) => {
          fs.mkdirSync(dir);
          throw new Error('build broke');
        },
        root,
      ),
      /build broke/,
    );
    assert.deepEqual(fs.readdirSync(root), []);
    const entry = await sharedEntry('kind-x', async (dir) => fs.mkdirSync(dir), root);
    assert.equal(entry, path.join(root, 'kind-x'));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the digest changes with a byte, a file name or the extra text, and not with the order paths are walked', () => {
  const dir = tmp();
  try {
    fs.mkdirSync(path.join(dir, 'a/b'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'a/b/x.txt'), 'one');
    fs.writeFileSync(path.join(dir, 'c.txt'), 'two');
    const d0 = treeDigest(dir, ['a', 'c.txt'], 'size 1');
    assert.equal(treeDigest(dir, ['c.txt', 'a'], 'size 1'), d0);
    assert.notEqual(treeDigest(dir, ['a', 'c.txt'], 'size 2'), d0);
    fs.writeFileSync(path.join(dir, 'c.txt'), 'twO');
    assert.notEqual(treeDigest(dir, ['a', 'c.txt'], 'size 1'), d0);
    fs.writeFileSync(path.join(dir, 'c.txt'), 'two');
    fs.renameSync(path.join(dir, 'a/b/x.txt'), path.join(dir, 'a/b/y.txt'));
    assert.notEqual(treeDigest(dir, ['a', 'c.txt'], 'size 1'), d0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the trained policy's key changes with rc1.build.ts, a test helper, the engine's src and bin, examples/, the rig and the size; not with node_modules", () => {
  const dir = tmp();
  try {
    const files = [
      'rc1.build.ts',
      'lib/a.ts',
      'rules/r.ts',
      'configs/c.yaml',
      'templates/t.json',
      'data/raw/gsm8k/x.jsonl',
      'examples/trainers/t.py',
      'packages/engine/src/api/index.ts',
      'packages/engine/bin/rc1-build.js',
      'packages/engine/dist/api.js',
      'test/helpers/shadow-fixture.ts',
      'test/helpers/rig.ts',
      'test/integration/ppo-eval-rig.ts',
      'package-lock.json',
      'tsconfig.json',
    ];
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), `${f} v1\n`);
    }
    const k0 = trainedKey(dir, { steps: 12 });
    assert.notEqual(trainedKey(dir, { steps: 13 }), k0);
    for (const f of files) {
      fs.writeFileSync(path.join(dir, f), `${f} v2\n`);
      assert.notEqual(trainedKey(dir, { steps: 12 }), k0, `a change to ${f} changes the key`);
      fs.writeFileSync(path.join(dir, f), `${f} v1\n`);
    }
    assert.equal(trainedKey(dir, { steps: 12 }), k0);
    fs.mkdirSync(path.join(dir, 'packages/engine/node_modules/x'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'packages/engine/node_modules/x/index.js'), 'installed');
    assert.equal(trainedKey(dir, { steps: 12 }), k0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** The repository files `from` imports by relative path, directly or not ('rc1-build' is packages/engine). */
function importClosure(from: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const resolve = (abs: string): string | null =>
    [abs, `${abs}.ts`, abs.replace(/\.js$/, '.ts'), path.join(abs, 'index.ts')].find(
      (c) => fs.existsSync(c) && fs.statSync(c).isFile(),
    ) ?? null;
  const visit = (abs: string): void => {
    const rel = path.relative(REPO, abs).split(path.sep).join('/');
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = fs.readFileSync(abs, 'utf8');
    if (/['"]rc1-build['"]/.test(text)) seen.add('packages/engine/package.json');
    for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)) {
      const target = resolve(path.resolve(path.dirname(abs), m[1]!));
      if (target && !target.includes(`${path.sep}node_modules${path.sep}`)) visit(target);
    }
  };
  for (const f of from) visit(path.join(REPO, f));
  return seen;
}

test('every repository file the trained policy rig, its shadow set and the pipeline import, directly or not, is in its key', () => {
  const closure = importClosure(['test/integration/ppo-eval-rig.ts', 'rc1.build.ts']);
  assert.ok(closure.has('test/helpers/shadow-fixture.ts') && closure.has('packages/engine/src/api/index.ts'));
  const outside = [...closure].filter((f) => !TRAINED_KEY_INPUTS.some((p) => f === p || f.startsWith(`${p}/`)));
  assert.deepEqual(outside, []);
});
