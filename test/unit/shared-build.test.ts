// test/helpers/shared-build.ts: a shared test build is built once under a lock, however many
// callers ask at once; a lock left by a process that is gone is taken over; a failed build leaves
// no entry; the lock is taken with its owner inside, a stale one (owner gone, pid reused, or no
// owner for seconds) is taken over, nobody removes a lock not its own, a builder that finds the
// entry made by another uses it, and gone builders' directories are removed; the digest follows every byte and name of the keyed files; the shared trained policy's
// key covers every source its build can read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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

/** `p`, or a rejection naming `what` after `ms`. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not done after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const mkEntry = async (dir: string): Promise<void> => {
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'out.txt'), 'built');
};

test('a lock without an owner older than a few seconds, or naming a live pid whose process started at another time, is taken over', async () => {
  const root = tmp();
  try {
    fs.mkdirSync(path.join(root, 'kind-p.lock')); // an older version's lock directory, its pid never written
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(root, 'kind-p.lock'), old, old);
    assert.equal(await within(3000, 'pid-less lock', sharedEntry('kind-p', mkEntry, root)), path.join(root, 'kind-p'));
    fs.writeFileSync(path.join(root, 'kind-q.lock'), `${process.ppid} 1 sometoken\n`); // the pid now is another process
    assert.equal(await within(3000, 'reused pid', sharedEntry('kind-q', mkEntry, root)), path.join(root, 'kind-q'));
    assert.deepEqual(fs.readdirSync(root).sort(), ['kind-p', 'kind-q']);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a builder never removes a lock that is not its own (its own was taken over while it built)', async () => {
  const root = tmp();
  const lock = path.join(root, 'kind-o.lock');
  try {
    await sharedEntry(
      'kind-o',
      async (dir) => {
        fs.rmSync(lock, { recursive: true, force: true });
        fs.writeFileSync(lock, `${process.ppid} - another\n`); // a live builder's lock
        await mkEntry(dir);
      },
      root,
    );
    assert.equal(fs.readFileSync(lock, 'utf8'), `${process.ppid} - another\n`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a builder that finds the entry made by another builder uses it instead of failing; gone builders’ directories are removed', async () => {
  const root = tmp();
  try {
    fs.mkdirSync(path.join(root, 'kind-e.tmp-2147483646'));
    fs.writeFileSync(path.join(root, 'kind-e.tmp-2147483646', 'half'), 'a killed builder’s');
    fs.writeFileSync(path.join(root, 'kind-e.lock.stale-2147483646-abc123'), '2147483646 - x\n');
    const entry = await sharedEntry(
      'kind-e',
      async (dir) => {
        await mkEntry(dir);
        fs.mkdirSync(path.join(root, 'kind-e')); // the other builder was first
        fs.writeFileSync(path.join(root, 'kind-e', 'out.txt'), 'built by the other');
      },
      root,
    );
    assert.equal(fs.readFileSync(path.join(entry, 'out.txt'), 'utf8'), 'built by the other');
    assert.deepEqual(fs.readdirSync(root), ['kind-e']);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('three processes at once over a stale lock: one build, all get the entry, no lock or builder directory left', async () => {
  const root = tmp();
  try {
    fs.mkdirSync(path.join(root, 'kind-c.lock'));
    fs.writeFileSync(path.join(root, 'kind-c.lock', 'pid'), '2147483646'); // gone
    const log = path.join(root, '..', `${path.basename(root)}.builds`);
    const script = `import * as fs from 'node:fs';
import * as path from 'node:path';
import { sharedEntry } from ${JSON.stringify(path.join(REPO, 'test/helpers/shared-build.ts'))};
const entry = await sharedEntry('kind-c', async (dir) => {
  fs.appendFileSync(${JSON.stringify(log)}, process.pid + '\\n');
  fs.mkdirSync(dir);
  await new Promise((r) => setTimeout(r, 300));
  fs.writeFileSync(path.join(dir, 'out.txt'), 'built');
}, ${JSON.stringify(root)});
console.log(fs.readFileSync(path.join(entry, 'out.txt'), 'utf8'));
`;
    const runs = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<{ code: number | null; out: string }>((resolve) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
              cwd: REPO,
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            let out = '';
            child.stdout.on('data', (c) => (out += c));
            child.stderr.on('data', (c) => (out += c));
            child.on('close', (code) => resolve({ code, out }));
          }),
      ),
    );
    try {
      for (const r of runs) assert.deepEqual(r, { code: 0, out: 'built\n' });
      assert.equal(fs.readFileSync(log, 'utf8').trim().split('\n').length, 1, 'one build');
      assert.deepEqual(fs.readdirSync(root), ['kind-c']);
    } finally {
      fs.rmSync(log, { force: true });
    }
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

test("the trained policy's key changes with rc1.build.ts, a test helper, the engine's src and bin, examples/, the rig, the size and the checkout's path; not with node_modules", () => {
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
    // The same sources in another checkout: the cached build's state names this checkout's paths.
    const other = tmp();
    try {
      fs.cpSync(dir, other, { recursive: true });
      assert.equal(
        treeDigest(other, TRAINED_KEY_INPUTS, ''),
        treeDigest(dir, TRAINED_KEY_INPUTS, ''),
        'the copy holds the same sources',
      );
      assert.notEqual(trainedKey(other, { steps: 12 }), k0, 'another checkout gets its own key');
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
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
