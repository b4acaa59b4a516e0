// The compiled code's copy outside .rc1 (packages/engine/src/config/compiled-seed.ts), on real
// folders: where it lives, how a state dir made anew gets it, and when it is replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  compiledSeedDir,
  removeSeed,
  seedCompiled,
  updateSeed,
} from '../../packages/engine/src/config/compiled-seed.ts';

function tempDir(t: { after: (f: () => void) => void }): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-seed-')));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

const ino = (p: string): bigint => fs.statSync(p, { bigint: true }).ino;

/** A folder `parent/name` holding `files` (name → content). */
function folderWith(parent: string, name: string, files: Record<string, string>): string {
  const dir = path.join(parent, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), body);
  return dir;
}

test('the seed lives in the nearest node_modules at or above the workspace (a hoisted one in a monorepo), one folder per workspace', (t) => {
  const repo = tempDir(t);
  fs.mkdirSync(path.join(repo, 'node_modules'));
  fs.mkdirSync(path.join(repo, 'pipelines', 'a'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'pipelines', 'b'), { recursive: true });
  const a = compiledSeedDir(path.join(repo, 'pipelines', 'a'))!;
  const b = compiledSeedDir(path.join(repo, 'pipelines', 'b'))!;
  assert.equal(path.dirname(a), path.join(repo, 'node_modules', '.cache', 'rc1-build'));
  assert.notEqual(a, b);
  // Its own node_modules wins over the hoisted one.
  fs.mkdirSync(path.join(repo, 'pipelines', 'a', 'node_modules'));
  assert.equal(
    path.dirname(compiledSeedDir(path.join(repo, 'pipelines', 'a'))!),
    path.join(repo, 'pipelines', 'a', 'node_modules', '.cache', 'rc1-build'),
  );
  assert.equal(compiledSeedDir(repo, { RC1_COMPILE_SEED: 'off' }), null);
});

test('a state dir without compiled code gets a folder of hard links to the seed; one that has compiled code keeps it', (t) => {
  const d = tempDir(t);
  const seed = folderWith(d, 'seed', {
    'closures-3.json': '{}',
    'rule-1234.mjs': 'export default 1;\n',
    'rule-1234.mjs.tmp-9-x-0': 'half', // a write in progress: not taken
  });
  const compiled = path.join(d, '.rc1', 'compiled');
  fs.mkdirSync(path.dirname(compiled));
  assert.equal(seedCompiled(compiled, seed), true);
  assert.deepEqual(fs.readdirSync(compiled).sort(), ['closures-3.json', 'rule-1234.mjs']);
  assert.equal(ino(path.join(compiled, 'rule-1234.mjs')), ino(path.join(seed, 'rule-1234.mjs')));
  fs.rmSync(path.join(compiled, 'rule-1234.mjs'));
  assert.equal(seedCompiled(compiled, seed), false, 'an existing folder is never replaced');
  assert.deepEqual(fs.readdirSync(compiled), ['closures-3.json']);
  assert.equal(seedCompiled(path.join(d, 'other'), null), false);
  assert.equal(seedCompiled(path.join(d, 'other'), path.join(d, 'no-seed')), false);
  assert.equal(fs.existsSync(path.join(d, 'other')), false);
});

test('the seed is replaced whole when the compiled folder differs from it, and left alone when it is the same files', (t) => {
  const d = tempDir(t);
  const compiled = folderWith(d, 'compiled', { 'closures-3.json': '{"a":1}', 'old-1.mjs': '1' });
  const seed = path.join(d, 'nm', '.cache', 'rc1-build', 'compiled-x');
  updateSeed(compiled, seed);
  assert.deepEqual(fs.readdirSync(seed).sort(), ['closures-3.json', 'old-1.mjs']);
  const seedIno = ino(seed);
  updateSeed(compiled, seed);
  assert.equal(ino(seed), seedIno, 'the same files: not rewritten');
  // A new module, an index rewritten (temp + rename: a new inode), an old module swept.
  fs.writeFileSync(path.join(compiled, 'new-2.mjs'), '2');
  fs.writeFileSync(path.join(compiled, 'closures-3.json.tmp'), '{"a":2}');
  fs.renameSync(path.join(compiled, 'closures-3.json.tmp'), path.join(compiled, 'closures-3.json'));
  fs.rmSync(path.join(compiled, 'old-1.mjs'));
  updateSeed(compiled, seed);
  assert.deepEqual(fs.readdirSync(seed).sort(), ['closures-3.json', 'new-2.mjs']);
  assert.equal(fs.readFileSync(path.join(seed, 'closures-3.json'), 'utf8'), '{"a":2}');
  assert.deepEqual(fs.readdirSync(path.dirname(seed)), ['compiled-x'], 'no temp or old folder left beside it');
  assert.equal(removeSeed(seed), true);
  assert.equal(fs.existsSync(seed), false);
  assert.equal(removeSeed(seed), false);
});

test('a seed that cannot be written (node_modules/.cache is a file here) leaves the build as it is', (t) => {
  const d = tempDir(t);
  const compiled = folderWith(d, 'compiled', { 'a.mjs': '1' });
  const nm = folderWith(d, 'node_modules', { '.cache': 'not a folder' });
  assert.doesNotThrow(() => updateSeed(compiled, path.join(nm, '.cache', 'rc1-build', 'compiled-x')));
  assert.deepEqual(fs.readdirSync(nm), ['.cache']);
  assert.equal(fs.readFileSync(path.join(nm, '.cache'), 'utf8'), 'not a folder');
  assert.equal(seedCompiled(path.join(d, 'fresh'), path.join(nm, '.cache', 'rc1-build', 'compiled-x')), false);
});

test('replacing a seed names its workspace beside it, and removes the seeds of workspaces gone and the leftovers of killed commands', (t) => {
  const d = tempDir(t);
  const cacheDir = path.join(d, 'node_modules', '.cache', 'rc1-build');
  fs.mkdirSync(path.join(d, 'node_modules'));
  const live = path.join(d, 'live');
  const gone = path.join(d, 'gone');
  for (const w of [live, gone]) {
    folderWith(w, '.rc1/compiled', { 'closures-3.json': '{}' });
    fs.writeFileSync(path.join(w, 'rc1.build.ts'), 'export default {};\n');
  }
  const seedOf = (w: string): string => compiledSeedDir(w)!;
  updateSeed(path.join(gone, '.rc1', 'compiled'), seedOf(gone), gone);
  assert.equal(fs.readFileSync(`${seedOf(gone)}.root`, 'utf8'), gone);
  // A killed command's temp folder (old) and another one's in progress (young).
  const oldTmp = `${seedOf(live)}.tmp-999-deadbeef`;
  const youngTmp = `${seedOf(live)}.old-998-cafecafe`;
  fs.mkdirSync(oldTmp);
  fs.mkdirSync(youngTmp);
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(oldTmp, hourAgo, hourAgo);
  fs.rmSync(gone, { recursive: true });
  updateSeed(path.join(live, '.rc1', 'compiled'), seedOf(live), live);
  assert.deepEqual(fs.readdirSync(cacheDir).sort(), [
    path.basename(seedOf(live)),
    `${path.basename(seedOf(live))}.old-998-cafecafe`,
    `${path.basename(seedOf(live))}.root`,
  ]);
  assert.equal(removeSeed(seedOf(live)), true);
  assert.deepEqual(fs.readdirSync(cacheDir), [`${path.basename(seedOf(live))}.old-998-cafecafe`]);
});

test('a folder of links a killed command left in .rc1 is removed by the next seeding once it is old, and kept while young', (t) => {
  const d = tempDir(t);
  const seed = folderWith(d, 'seed', { 'closures-3.json': '{}' });
  const state = path.join(d, '.rc1');
  const old = path.join(state, 'compiled.tmp-123-deadbeef');
  const young = path.join(state, 'compiled.tmp-124-cafecafe');
  fs.mkdirSync(old, { recursive: true });
  fs.mkdirSync(young);
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(old, hourAgo, hourAgo);
  assert.equal(seedCompiled(path.join(state, 'compiled'), seed), true);
  assert.deepEqual(fs.readdirSync(state).sort(), ['compiled', 'compiled.tmp-124-cafecafe']);
});
