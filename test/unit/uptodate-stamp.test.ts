// The up-to-date stamp's parts (packages/engine/src/state/uptodate-stamp.ts), on real files in a
// temp dir: the stat cache and glob cache say what a decision rested on (and refuse when it was
// racy), writeStamp refuses whatever it cannot list soundly, and the checks name what changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';
import { GlobCache } from '../../packages/engine/src/hash/glob-cache.ts';
import {
  type StateWorkspace,
  checkedManifestPaths,
  recordManifestState,
} from '../../packages/engine/src/report/manifest-state.ts';
import {
  type Stamp,
  type StampWorkspace,
  changedOnDisk,
  fileLine,
  readStamp,
  stampMismatch,
  writeStamp,
} from '../../packages/engine/src/state/uptodate-stamp.ts';

const sleep = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** A workspace with two sources, settled past their timestamp tick, and a checked manifest's state. */
function workspace(): { root: string; stateDir: string; done: () => void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-stamp-'));
  const stateDir = path.join(root, '.rc1');
  fs.mkdirSync(stateDir);
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'src/a.txt'), 'alpha\n');
  fs.writeFileSync(path.join(root, 'src/b.txt'), 'beta\n');
  fs.writeFileSync(path.join(stateDir, 'salt'), 'salt');
  fs.writeFileSync(path.join(stateDir, 'trace.log'), '{"format":1}\n');
  sleep(150);
  recordManifestState(manifestWs(root), new Map()); // the manifest checked (none yet, no sidecars)
  return { root, stateDir, done: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** The workspace as the manifest's state sees it: no targets, the manifest under reports/build. */
function manifestWs(root: string): StateWorkspace {
  const stateDir = path.join(root, '.rc1');
  return {
    root,
    stateDir,
    profile: 'default',
    pipeline: { targets: new Map(), manifestDir: 'reports/build' },
    trace: { file: path.join(stateDir, 'trace.log') },
  };
}

function stampWs(
  root: string,
  stateDir: string,
  stat: StatCache,
  glob: GlobCache,
  over: Partial<StampWorkspace> = {},
): StampWorkspace {
  return {
    root,
    stateDir,
    salt: 'salt',
    statLines: () => stat.statLines(),
    globDirs: () => glob.dirLines(),
    manifestPaths: () => checkedManifestPaths(manifestWs(root)),
    dirOutputs: [],
    fileOutputs: new Set(),
    durable: true,
    ...over,
  } as StampWorkspace;
}

const RUN = { command: 'rc1-build', profile: 'default', keep: 200, paramsHash: 'h', upToDate: 2 };
const stampOpts = (env: NodeJS.ProcessEnv = {}) => ({
  argv: ['-j', '2'],
  cwd: '/somewhere',
  env,
  targetEnv: ['TOKEN'],
  engine: [],
  run: RUN,
});

test('the stat cache gives the stat each answer rested on, "-" for an absent file, and nothing when one answer was racy', () => {
  const w = workspace();
  try {
    const stat = new StatCache(w.root, path.join(w.stateDir, 'statcache.json'));
    stat.hash('src/a.txt');
    stat.hash('src/missing.txt');
    const lines = stat.statLines();
    assert.ok(lines);
    assert.equal(lines.get('src/a.txt'), fileLine(path.join(w.root, 'src/a.txt')));
    assert.equal(lines.get('src/missing.txt'), '-');
    assert.equal(lines.size, 2, 'only what this process asked');
    fs.writeFileSync(path.join(w.root, 'src/b.txt'), 'BETA\n'); // hashed within its tick: racy
    stat.hash('src/b.txt');
    assert.equal(stat.statLines(), null);
  } finally {
    w.done();
  }
});

test('the glob cache gives the directories its cached results rest on, and nothing for a glob it could not cache', async () => {
  const w = workspace();
  try {
    const glob = new GlobCache(w.root, path.join(w.stateDir, 'globcache.json'));
    assert.deepEqual(await glob.expand('src/*.txt'), ['src/a.txt', 'src/b.txt']);
    const dirs = glob.dirLines();
    assert.ok(dirs);
    const st = fs.statSync(path.join(w.root, 'src'), { bigint: true });
    assert.equal(dirs.get('src'), `${st.mtimeNs} ${st.ino}`);
    fs.mkdirSync(path.join(w.root, 'fresh'));
    fs.writeFileSync(path.join(w.root, 'fresh/x.txt'), 'x'); // a directory written within its tick
    await glob.expand('fresh/*.txt');
    assert.equal(glob.dirLines(), null);
  } finally {
    w.done();
  }
});

test('writeStamp lists the decisions and the check finds each kind of change; what it cannot list soundly leaves no stamp', async () => {
  const w = workspace();
  try {
    const stat = new StatCache(w.root, path.join(w.stateDir, 'statcache.json'));
    const glob = new GlobCache(w.root, path.join(w.stateDir, 'globcache.json'));
    for (const f of await glob.expand('src/*.txt')) stat.hash(f);
    assert.equal(writeStamp(stampWs(w.root, w.stateDir, stat, glob), stampOpts({ TOKEN: 'secret-1' })), true);
    const s = readStamp(w.stateDir)!.stamp;
    assert.equal(changedOnDisk(s), null);
    assert.ok(!JSON.stringify(s).includes('secret-1'), 'variables are hashed, never written');
    const same = { root: w.root, cwd: '/somewhere', argv: ['-j', '2'], env: { TOKEN: 'secret-1' }, salt: 'salt' };
    assert.equal(stampMismatch(s, same), null);
    assert.equal(stampMismatch(s, { ...same, argv: ['-j', '1'] }), 'another command line');
    assert.equal(
      stampMismatch(s, { ...same, engineFile: '/another/engine/dist/noop.cjs' }),
      'another engine',
      'a stamp written by another engine (node_modules/rc1-build pointed elsewhere) does not answer',
    );
    assert.equal(stampMismatch(s, { ...same, cwd: '/elsewhere' }), 'another workspace or working directory');
    assert.equal(
      stampMismatch({ ...s, boot: 'a boot before a power cut', durable: false }, same),
      'written in another boot, before the outputs it lists were durable',
      'a stamp of outputs left to write-back does not answer after a reboot (state/durability.ts)',
    );
    assert.equal(stampMismatch({ ...s, boot: 'a boot before a reboot', durable: true }, same), null);
    assert.equal(stampMismatch(s, { ...same, env: { TOKEN: 'secret-2' } }), 'variable TOKEN');
    assert.equal(stampMismatch(s, { ...same, env: { TOKEN: 'secret-1', RUN_MODE: 'prod' } }), 'variable RUN_MODE');
    assert.equal(stampMismatch(s, { ...same, env: { TOKEN: 'secret-1', RC1_NEW: '1' } }), 'variable RC1_NEW');
    assert.equal(
      stampMismatch(s, { ...same, env: { TOKEN: 'secret-1', RC1_DEBUG: 'fastpath', RC1_NO_SERVER: '1' } }),
      null,
      'the diagnostic variables change what is printed, not what is decided',
    );

    const check = (change: () => void, expected: string, undo: () => void): void => {
      change();
      assert.equal(changedOnDisk(s), expected);
      undo();
    };
    const a = path.join(w.root, 'src/a.txt');
    const before = fs.statSync(a);
    // An edit that keeps the size and puts the mtime back: the ctime still tells.
    check(
      () => {
        fs.writeFileSync(a, 'ALPHA\n');
        fs.utimesSync(a, before.atime, before.mtime);
      },
      'src/a.txt',
      () => {},
    );
    const s2 = (() => {
      const st2 = new StatCache(w.root, path.join(w.stateDir, 'statcache2.json'));
      const g2 = new GlobCache(w.root, path.join(w.stateDir, 'globcache2.json'));
      return { st2, g2 };
    })();
    sleep(150);
    for (const f of await s2.g2.expand('src/*.txt')) s2.st2.hash(f);
    assert.equal(writeStamp(stampWs(w.root, w.stateDir, s2.st2, s2.g2), stampOpts()), true);
    const t = readStamp(w.stateDir)!.stamp;
    fs.writeFileSync(path.join(w.root, 'src/c.txt'), 'new file the glob matches');
    assert.equal(changedOnDisk(t), 'src', 'a new entry in a globbed directory');
    fs.rmSync(path.join(w.root, 'src/c.txt'));
    fs.appendFileSync(path.join(w.stateDir, 'trace.log'), '{"name":"x"}\n');
    assert.equal(changedOnDisk(t), path.join('.rc1', 'trace.log'), 'a record written since');
    const moved = `${w.root}-moved-src`;
    fs.renameSync(path.join(w.root, 'src'), moved);
    fs.symlinkSync(moved, path.join(w.root, 'src'));
    try {
      // The files read through the link are as recorded; the folder itself is not.
      const u: Stamp = { ...t, state: [], dirs: [] };
      assert.equal(
        u.files.every(([rel, line]) => fileLine(path.resolve(w.root, rel)) === line),
        true,
      );
      assert.equal(changedOnDisk(u), path.join(w.root, 'src'), 'a folder swapped for a link to the same files');
    } finally {
      fs.rmSync(path.join(w.root, 'src'));
      fs.renameSync(moved, path.join(w.root, 'src'));
    }

    // What cannot be listed soundly leaves no stamp (and removes the one before).
    // The manifest's check was recorded for the trace before the record appended above.
    assert.equal(checkedManifestPaths(manifestWs(w.root)), null);
    assert.equal(writeStamp(stampWs(w.root, w.stateDir, s2.st2, s2.g2), stampOpts()), false);
    assert.equal(readStamp(w.stateDir), null);
    // A manifest written within its tick: its content is to be verified by the next build.
    fs.mkdirSync(path.join(w.root, 'reports/build'), { recursive: true });
    fs.writeFileSync(path.join(w.root, 'reports/build/manifest.json'), '{}\n');
    recordManifestState(manifestWs(w.root), new Map([['reports/build/manifest.json', '{}\n']]));
    assert.equal(checkedManifestPaths(manifestWs(w.root)), null);
    assert.equal(writeStamp(stampWs(w.root, w.stateDir, s2.st2, s2.g2), stampOpts()), false);
    sleep(150);
    recordManifestState(manifestWs(w.root), new Map());
    assert.deepEqual(checkedManifestPaths(manifestWs(w.root)), ['reports/build/manifest.json', 'reports/build/sha256']);
    fs.mkdirSync(path.join(w.root, 'out/tree'), { recursive: true });
    fs.writeFileSync(path.join(w.root, 'out/tree/one.txt'), '1');
    sleep(150);
    // Fresh caches: the folder moved and back above has a new mtime ('..' rewritten), so the glob's stamp is stale.
    const st3 = new StatCache(w.root, path.join(w.stateDir, 'statcache3.json'));
    const g3 = new GlobCache(w.root, path.join(w.stateDir, 'globcache3.json'));
    for (const f of await g3.expand('src/*.txt')) st3.hash(f);
    assert.equal(
      writeStamp(stampWs(w.root, w.stateDir, s2.st2, s2.g2), stampOpts()),
      false,
      'a directory changed since the glob was cached',
    );
    const withTree = (files: string[]) =>
      writeStamp(
        stampWs(w.root, w.stateDir, st3, g3, { dirOutputs: [{ path: 'out/tree', files, links: [] }] }),
        stampOpts(),
      );
    assert.equal(withTree(['one.txt', 'two.txt']), false, 'a directory output no longer as its record lists it');
    assert.equal(withTree(['one.txt']), true);
    fs.writeFileSync(path.join(w.root, 'out/tree/two.txt'), '2');
    assert.equal(changedOnDisk(readStamp(w.stateDir)!.stamp), 'out/tree', 'a file added to a directory output');
  } finally {
    w.done();
  }
});
