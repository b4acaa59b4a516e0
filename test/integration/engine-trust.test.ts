// The engine's own writes, through the real CLI: cache objects that no workspace write can reach,
// rule logs that are never outputs, a manifest and sidecars that heal on every build, an audit
// that cross-checks the trace, a stat cache that sees mtime-restoring edits.
//   src/a.txt --> a --> b --> g (gate) --> after_gate      src/c.txt --> c
//   src/w.txt --> sq --> after_sq                          (the standard rig)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';
import { COPY_RULE, TestRig, standardRig } from '../helpers/rig.ts';

test('an output edited in place never reaches the cache: after edit, build, revert, the target is restored, not rerun', () => {
  const rig = standardRig();
  try {
    assert.equal(rig.run([]).code, 0);
    // Small outputs are carried inline in their entries, others are read-only objects: no cache
    // file shares its inode with the workspace.
    const files = (sub: string) => {
      const d = path.join(rig.dir, '.rc1/cache', sub);
      if (!fs.existsSync(d)) return [];
      return fs
        .readdirSync(d, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.join(e.parentPath, e.name));
    };
    assert.ok(files('entries').length > 0);
    for (const f of [...files('objects'), ...files('entries')])
      assert.equal(fs.statSync(f).nlink, 1, `${f} shares its inode with the workspace`);
    for (const f of files('objects')) assert.equal(fs.statSync(f).mode & 0o222, 0, `${f} is writable`);
    const before = rig.read('out/c.txt');
    fs.appendFileSync(path.join(rig.dir, 'out/c.txt'), 'scribbled in place'); // same inode
    rig.write('src/c.txt', 'cee two\n');
    rig.runs();
    assert.equal(rig.run(['c']).code, 0);
    assert.deepEqual(rig.runs(), ['c']);
    rig.write('src/c.txt', 'cee\n');
    const back = rig.run(['c']);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(rig.runs(), [], 'restored from the cache, not rerun');
    assert.match(back.stdout, /restored/);
    assert.doesNotMatch(back.stdout + back.stderr, /corrupt/);
    assert.equal(rig.read('out/c.txt'), before);
  } finally {
    rig.cleanup();
  }
});

test("a target may not declare the engine's rule log as an output; logs are replaced after each run without touching the cache", () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'x', rule: 'rules/log.ts', inputs: { v: 'src/v.txt' }, outputs: ['out/x.txt', 'logs/x.log'] })] });
`,
    'rules/log.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'log', version: 1, run(ctx) {
  ctx.log('read ' + fs.readFileSync(ctx.inputs('v')[0], 'utf8').trim());
  fs.writeFileSync(ctx.output('out/x.txt'), 'x');
  if (ctx.outputs.includes('logs/x.log')) fs.writeFileSync(ctx.output('logs/x.log'), 'mine');
}});
`,
    'src/v.txt': 'one\n',
  });
  try {
    const r = rig.run([]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /output logs\/x\.log of target x is where rc1-build keeps the rule log of x/);
    assert.equal(currentHolder(path.join(rig.dir, '.rc1/lock')), null, 'lock released');
    // The logs folder itself (as a folder or a file output), and an ERROR report's name, are refused too.
    const decl = rig.read('rc1.build.ts');
    for (const [bad, why] of [
      ['logs/', /output logs of target x is logs\/, where rc1-build keeps every rule's log/],
      ['logs', /output logs of target x is logs\//],
      ['reports/ERROR_1.json', /output reports\/ERROR_1\.json of target x is named like the ERROR_\*\.json reports/],
    ] as const) {
      rig.write('rc1.build.ts', decl.replace("'logs/x.log'", `'${bad}'`));
      const refused = rig.run([]);
      assert.equal(refused.code, 64, `${bad}: ${refused.stderr}`);
      assert.match(refused.stderr, why);
    }
    rig.write('rc1.build.ts', decl.replace(", 'logs/x.log'", ''));
    assert.equal(rig.run([]).code, 0);
    assert.equal(rig.read('logs/x.log'), 'read one\n');
    rig.write('src/v.txt', 'two\n');
    assert.equal(rig.run([]).code, 0);
    assert.equal(rig.read('logs/x.log'), 'read two\n');
    rig.write('src/v.txt', 'one\n');
    const back = rig.run([]);
    assert.match(back.stdout, /restored x/);
    assert.equal(rig.run(['audit']).code, 0);
  } finally {
    rig.cleanup();
  }
});

test('every build, a no-op too, recreates a deleted manifest and deleted or edited sidecars', () => {
  const rig = standardRig();
  try {
    assert.equal(rig.run([]).code, 0);
    const manifest = rig.read('reports/build/manifest.json');
    const side = 'reports/build/sha256/out/c.txt.sha256';
    const sideBody = rig.read(side);
    fs.rmSync(path.join(rig.dir, 'reports/build/manifest.json'));
    fs.rmSync(path.join(rig.dir, side));
    rig.write('reports/build/sha256/out/a.txt.sha256', `${'0'.repeat(64)}  out/a.txt\n`);
    const a = rig.run(['audit', '--json']);
    assert.equal(a.code, 1);
    const kinds = (JSON.parse(a.stdout).problems as { kind: string; path: string; disagrees?: string }[])
      .map((p) => `${p.kind} ${p.path} ${p.disagrees}`)
      .sort();
    assert.ok(kinds.includes('sidecar-mismatch reports/build/sha256/out/a.txt.sha256 sidecar'), kinds.join('\n'));
    assert.ok(kinds.includes('sidecar-mismatch reports/build/sha256/out/c.txt.sha256 sidecar'), kinds.join('\n'));
    assert.ok(kinds.includes('manifest-mismatch out/b.txt manifest'), kinds.join('\n'));
    rig.runs();
    const noop = rig.run([]);
    assert.equal(noop.code, 0);
    assert.deepEqual(rig.runs(), []);
    assert.equal(rig.read('reports/build/manifest.json'), manifest);
    assert.equal(rig.read(side), sideBody);
    assert.match(rig.read('reports/build/sha256/out/a.txt.sha256'), /^[0-9a-f]{64} {2}out\/a\.txt\n$/);
    assert.notEqual(rig.read('reports/build/sha256/out/a.txt.sha256').slice(0, 8), '00000000');
    assert.equal(rig.run(['audit']).code, 0);
    // With the manifest intact, a no-op still sees a deleted sidecar (no audit in between).
    fs.rmSync(path.join(rig.dir, side));
    assert.equal(rig.run([]).code, 0);
    assert.equal(rig.read(side), sideBody);
    assert.equal(rig.run(['audit']).code, 0);
  } finally {
    rig.cleanup();
  }
});

test("audit catches an output edited together with its manifest entry and sidecar: the engine's trace disagrees", () => {
  const rig = standardRig();
  try {
    assert.equal(rig.run([]).code, 0);
    rig.write('out/c.txt', 'forged\n');
    const forged = spawnSync('sha256sum', ['out/c.txt'], { cwd: rig.dir, encoding: 'utf8' }).stdout.split(' ')[0]!;
    const m = JSON.parse(rig.read('reports/build/manifest.json'));
    const entry = m.artifacts.find((x: { path: string }) => x.path === 'out/c.txt');
    const original = entry.sha256;
    entry.sha256 = forged;
    rig.write('reports/build/manifest.json', JSON.stringify(m, null, 2) + '\n');
    rig.write('reports/build/sha256/out/c.txt.sha256', `${forged}  out/c.txt\n`);
    const a = rig.run(['audit', '--json']);
    assert.equal(a.code, 1);
    const [p, ...rest] = JSON.parse(a.stdout).problems;
    assert.equal(rest.length, 0);
    assert.equal(p.kind, 'trace-mismatch');
    assert.equal(p.disagrees, 'trace');
    assert.deepEqual(p.records, { output: forged, manifest: forged, sidecar: forged, trace: original });
    assert.match(
      rig.run(['audit']).stdout,
      /trace-mismatch\s+out\/c\.txt \(from c\): output, manifest, sidecar say [0-9a-f]{12}, the engine's trace says [0-9a-f]{12}/,
    );
  } finally {
    rig.cleanup();
  }
});

test('a same-size edit that restores the mtime is seen (the stat cache keys on ctime too)', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'a', rule: 'rules/copy.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/a.txt'], params: ['copy.suffix'] })] });
`,
    'rules/copy.ts': COPY_RULE,
    'configs/default.yaml': 'copy:\n  suffix: "!"\n',
    'src/a.txt': 'hello\n',
  });
  try {
    const old = new Date('2024-01-02T03:04:05Z');
    fs.utimesSync(path.join(rig.dir, 'src/a.txt'), old, old); // far from "now": never racy
    assert.equal(rig.run([]).code, 0);
    assert.equal(rig.run([]).code, 0);
    rig.runs();
    const ref = path.join(rig.dir, '..', `${path.basename(rig.dir)}.ref`);
    assert.equal(spawnSync('cp', ['-p', path.join(rig.dir, 'src/a.txt'), ref]).status, 0);
    rig.write('src/a.txt', 'HELLO\n');
    assert.equal(spawnSync('touch', ['-r', ref, path.join(rig.dir, 'src/a.txt')]).status, 0);
    fs.rmSync(ref);
    const st = fs.statSync(path.join(rig.dir, 'src/a.txt'), { bigint: true });
    assert.equal(st.mtimeMs, BigInt(old.getTime()), 'size and mtime are as before the edit');
    const r = rig.run(['--explain']);
    assert.equal(r.code, 0);
    assert.deepEqual(rig.runs(), ['a']);
    assert.equal(rig.read('out/a.txt'), 'HELLO\n!');
  } finally {
    rig.cleanup();
  }
});
