// The manifest and its sidecars (packages/engine/src/report/manifest.ts) after a build that
// changed a few records: when the last check's state (report/manifest-state.ts) still holds for
// the records the build started with, only the changed targets' sidecars are re-derived, and the
// result is the one a check of every sidecar gives. Anything else takes the full check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import fsModule from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Fingerprint } from '../../packages/engine/src/hash/fingerprint.ts';
import { type ManifestBase, writeManifest } from '../../packages/engine/src/report/manifest.ts';
import { manifestUnchanged, traceStatLine } from '../../packages/engine/src/report/manifest-state.ts';
import { type TargetRecord, TraceLog } from '../../packages/engine/src/state/trace-log.ts';

const GIT = { commit: null, dirty: null };
const sha = (c: string): string => c.repeat(64);

function record(name: string, out: string, c: string): TargetRecord {
  return {
    name,
    key: sha(c),
    fingerprint: { inputs: {} } as unknown as Fingerprint,
    outputs: [{ path: out, sha256: sha(c), size: 1, dir: false }],
    result: 'ok',
    how: 'ran',
    ms: 1,
    at: '2026-01-01T00:00:00.000Z',
  };
}

function rig() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-manifest-inc-'));
  const stateDir = path.join(root, '.rc1');
  fs.mkdirSync(stateDir);
  const trace = new TraceLog(path.join(stateDir, 'trace.log'));
  trace.repair();
  for (const [n, c] of [
    ['a', '1'],
    ['b', '2'],
    ['c', '3'],
  ] as const)
    trace.put(record(n, `out/${n}.txt`, c));
  trace.close();
  const ws = {
    root,
    stateDir,
    profile: 'dev',
    pipeline: { targets: new Map([...'abc'].map((n) => [n, {}])), manifestDir: 'reports/build' },
    trace,
  };
  const side = (out: string): string => path.join(root, 'reports/build/sha256', `${out}.sha256`);
  /** Everything under reports/, path → content. */
  const tree = (): Record<string, string> => {
    const out: Record<string, string> = {};
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else out[path.relative(root, p)] = fs.readFileSync(p, 'utf8');
      }
    };
    walk(path.join(root, 'reports'));
    return out;
  };
  /** A full check, then (once the files are out of their timestamp tick) the state that lets later builds skip it. */
  const settle = async (): Promise<void> => {
    writeManifest(ws, GIT);
    await new Promise((r) => setTimeout(r, 150));
    writeManifest(ws, null);
    assert.ok(manifestUnchanged(ws), 'the state of the check is recorded');
  };
  /** What Build.run() takes before its first trace write. */
  const startBuild = (): ManifestBase => {
    trace.forgetChanges();
    return { traceLine: traceStatLine(ws), changed: trace.changedSince };
  };
  return {
    root,
    ws,
    trace,
    side,
    tree,
    settle,
    startBuild,
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

test('a build that changed one record re-derives only its sidecars, and ends where a check of every sidecar ends', async () => {
  const r = rig();
  try {
    await r.settle();
    // Rewritten in place by hand, which the state cannot see (audit can): the proof that the
    // build below does not read an unchanged target's sidecar.
    fs.writeFileSync(r.side('out/a.txt'), `${sha('9')}  out/a.txt\n`);
    const base = r.startBuild();
    r.trace.put(record('b', 'out/b2.txt', '4')); // b now produces another file
    r.trace.close();
    const changed = writeManifest(r.ws, GIT, undefined, base);
    assert.deepEqual(changed.sort(), [
      'reports/build/manifest.json',
      'reports/build/sha256/out/b.txt.sha256',
      'reports/build/sha256/out/b2.txt.sha256',
    ]);
    assert.ok(!fs.existsSync(r.side('out/b.txt')), "b's old sidecar is removed");
    assert.equal(fs.readFileSync(r.side('out/b2.txt'), 'utf8'), `${sha('4')}  out/b2.txt\n`);
    assert.equal(fs.readFileSync(r.side('out/a.txt'), 'utf8'), `${sha('9')}  out/a.txt\n`, "a's sidecar is not read");
    const incremental = r.tree();
    fs.rmSync(path.join(r.ws.stateDir, 'manifest-state.json'), { force: true });
    assert.deepEqual(
      writeManifest(r.ws, GIT),
      ['reports/build/sha256/out/a.txt.sha256'],
      'a check of every sidecar changes only the one edited by hand',
    );
    assert.deepEqual(r.tree(), {
      ...incremental,
      'reports/build/sha256/out/a.txt.sha256': `${sha('1')}  out/a.txt\n`,
    });
  } finally {
    r.cleanup();
  }
});

test('a wrong sidecar of a changed target is rewritten in place, never through a hard or symbolic link', async () => {
  const r = rig();
  try {
    await r.settle();
    const outside = path.join(r.root, 'outside.txt');
    fs.writeFileSync(outside, 'keep me\n');
    fs.rmSync(r.side('out/c.txt'));
    fs.linkSync(outside, r.side('out/c.txt'));
    // The link changed the sidecar directory: the next build checks every sidecar by content.
    const base = r.startBuild();
    r.trace.put(record('a', 'out/a.txt', '5'));
    r.trace.close();
    writeManifest(r.ws, GIT, undefined, base);
    assert.equal(fs.readFileSync(outside, 'utf8'), 'keep me\n', 'the hard-linked file outside is untouched');
    assert.equal(fs.readFileSync(r.side('out/c.txt'), 'utf8'), `${sha('3')}  out/c.txt\n`);
    assert.equal(fs.readFileSync(r.side('out/a.txt'), 'utf8'), `${sha('5')}  out/a.txt\n`);
    await r.settle();
    fs.rmSync(r.side('out/b.txt'));
    fs.symlinkSync(outside, r.side('out/b.txt'));
    await r.settle();
    assert.equal(fs.readFileSync(outside, 'utf8'), 'keep me\n', 'the symbolic link is not followed');
    assert.ok(!fs.lstatSync(r.side('out/b.txt')).isSymbolicLink());
    const ino = fs.statSync(r.side('out/a.txt')).ino;
    fs.writeFileSync(r.side('out/a.txt'), 'wrong\n'); // in place: the directory does not change
    const base2 = r.startBuild();
    r.trace.put(record('a', 'out/a.txt', '6'));
    r.trace.close();
    writeManifest(r.ws, GIT, undefined, base2);
    assert.equal(fs.readFileSync(r.side('out/a.txt'), 'utf8'), `${sha('6')}  out/a.txt\n`);
    assert.equal(fs.statSync(r.side('out/a.txt')).ino, ino, 'rewritten in place');
  } finally {
    r.cleanup();
  }
});

test('when a sidecar was removed since the last check, the build checks every sidecar, not only its own', async () => {
  const r = rig();
  try {
    await r.settle();
    fs.rmSync(r.side('out/a.txt'));
    const base = r.startBuild();
    r.trace.put(record('b', 'out/b.txt', '7'));
    r.trace.close();
    const changed = writeManifest(r.ws, GIT, undefined, base);
    assert.ok(
      changed.includes('reports/build/sha256/out/a.txt.sha256'),
      'the missing sidecar of an unchanged target is back',
    );
    assert.equal(fs.readFileSync(r.side('out/a.txt'), 'utf8'), `${sha('1')}  out/a.txt\n`);
  } finally {
    r.cleanup();
  }
});

test('a manifest written within its timestamp tick is trusted only while its content is what was written', async () => {
  const r = rig();
  try {
    await r.settle();
    const base = r.startBuild();
    r.trace.put(record('a', 'out/a.txt', '8'));
    r.trace.close();
    writeManifest(r.ws, GIT, undefined, base); // the manifest and a's sidecar are brand new: racy
    const file = path.join(r.ws.stateDir, 'manifest-state.json');
    const state = JSON.parse(fs.readFileSync(file, 'utf8')) as { verify?: Record<string, string> };
    if (!state.verify) return assert.fail('no state recorded');
    assert.deepEqual(
      Object.keys(state.verify).sort(),
      ['reports/build/manifest.json', 'reports/build/sha256/out/a.txt.sha256'],
      'the racy files are listed for a content check',
    );
    state.verify['reports/build/manifest.json'] = sha('0');
    fs.writeFileSync(file, JSON.stringify(state));
    assert.equal(manifestUnchanged(r.ws), false, 'content other than recorded: the build checks everything');
    writeManifest(r.ws, GIT); // checks everything and records the state again
    await new Promise((res) => setTimeout(res, 150));
    const base2 = r.startBuild();
    r.trace.put(record('a', 'out/a.txt', '9'));
    r.trace.close();
    writeManifest(r.ws, GIT, undefined, base2);
    assert.ok(manifestUnchanged(r.ws), 'content as written: the state holds');
    await new Promise((res) => setTimeout(res, 150));
    assert.ok(manifestUnchanged(r.ws), 'verified once past their tick');
    const after = JSON.parse(fs.readFileSync(file, 'utf8')) as { verify?: Record<string, string> };
    assert.deepEqual(after.verify, {}, 'files verified past their timestamp tick are not read again');
  } finally {
    r.cleanup();
  }
});

test('with no sidecar folder (a build from clean, reports/ removed) every sidecar is created without reading one first; with the folder there, each is read and a wrong one rewritten', () => {
  const r = rig();
  const reads: string[] = [];
  const realRead = fsModule.readFileSync;
  fsModule.readFileSync = ((p: fs.PathOrFileDescriptor, o?: unknown) => {
    if (typeof p === 'string' && p.includes(`${path.sep}sha256${path.sep}`)) reads.push(p);
    return (realRead as (p: fs.PathOrFileDescriptor, o?: unknown) => unknown)(p, o);
  }) as typeof fsModule.readFileSync;
  syncBuiltinESMExports();
  try {
    writeManifest(r.ws, GIT);
    assert.deepEqual(reads, [], 'no sidecar read: there was no folder to read from');
    for (const [n, c] of [
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ] as const)
      assert.equal(fs.readFileSync(r.side(`out/${n}.txt`), 'utf8'), `${sha(c)}  out/${n}.txt\n`);
    fs.writeFileSync(r.side('out/b.txt'), 'wrong\n');
    fs.rmSync(path.join(r.ws.stateDir, 'manifest-state.json'), { force: true }); // no state: every sidecar is checked
    reads.length = 0; // the test's own reads above
    writeManifest(r.ws, GIT);
    assert.equal(reads.length, 3, 'the folder is there: each sidecar is read');
    assert.equal(fs.readFileSync(r.side('out/b.txt'), 'utf8'), `${sha('2')}  out/b.txt\n`, 'the wrong one rewritten');
  } finally {
    fsModule.readFileSync = realRead;
    syncBuiltinESMExports();
    r.cleanup();
  }
});
