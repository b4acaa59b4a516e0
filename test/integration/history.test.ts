// Run history, `log`, `diff` and `why` through the real CLI in temp workspaces.
//   src/a.txt --> a --> b --> g (gate, metrics reports/g.json) --> after_gate
//   src/c.txt --> c
//   src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PIPELINE, type TestRig, standardRig } from '../helpers/rig.ts';
import { RunHistory, type RunLine, type RunRecord } from '../../packages/engine/src/state/run-history.ts';

/** The standard rig with the gate's report declared as a metrics file. */
function metricsRig(): TestRig {
  const rig = standardRig();
  rig.write(
    'rc1.build.ts',
    PIPELINE.replace("report: 'reports/g.json',", "report: 'reports/g.json', metrics: ['reports/g.json'],"),
  );
  return rig;
}

function runs(rig: TestRig): RunRecord[] {
  return new RunHistory(path.join(rig.dir, '.rc1', 'runs.jsonl')).all();
}

function git(rig: TestRig, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd: rig.dir,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('every build records a run: outcomes with durations, params, gate checks, declared metrics, git commit and dirty state', () => {
  const rig = metricsRig();
  try {
    git(rig, 'init', '-q');
    git(rig, 'add', '-A');
    git(rig, 'commit', '-qm', 'first');
    const head = git(rig, 'rev-parse', 'HEAD');
    assert.equal(rig.run(['-j', '1']).code, 0);
    rig.write('src/a.txt', 'hello there\n'); // a tracked file edited: dirty
    assert.equal(rig.run(['-j', '1']).code, 0);
    assert.equal(rig.run([]).code, 0); // no-op: recorded too
    const [r1, r2, r3] = runs(rig);
    assert.deepEqual([r1!.id, r2!.id, r3!.id], [1, 2, 3]);
    assert.deepEqual(r1!.git, { commit: head, dirty: false });
    assert.deepEqual(r2!.git, { commit: head, dirty: true });
    assert.equal(r1!.outcomes.a!.outcome, 'ran');
    assert.equal(typeof r1!.outcomes.a!.ms, 'number');
    assert.equal(r2!.outcomes.c, undefined); // up to date
    assert.equal(r2!.outcomes.a!.outcome, 'ran');
    assert.deepEqual(r2!.counts, { ran: 4, restored: 0, upToDate: 3, failed: 0, gateFailed: 0, blocked: 0 });
    assert.deepEqual(r3!.outcomes, {});
    assert.deepEqual(r3!.state, r2!.state);
    assert.notDeepEqual(r2!.state.a, r1!.state.a);
    assert.deepEqual(r2!.state.c, r1!.state.c);
    // the no-op line stores no state: it is the line before it replayed
    const lines = rig
      .read('.rc1/runs.jsonl')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RunLine);
    assert.deepEqual([lines[0]!.full, lines[1]!.full, lines[2]!.full], [true, false, false]);
    assert.deepEqual(Object.keys(lines[1]!.state).sort(), ['a', 'after_gate', 'b', 'g']);
    assert.deepEqual([lines[2]!.state, lines[2]!.checks, lines[2]!.metrics, lines[2]!.params], [{}, {}, {}, undefined]);
    assert.ok(Buffer.byteLength(rig.read('.rc1/runs.jsonl').split('\n')[2]!) < 600);
    // a clean between builds changes the trace: the next run records the whole state
    assert.equal(rig.run(['clean', 'c']).code, 0);
    assert.equal(rig.run(['-j', '1']).code, 0);
    const fourth = JSON.parse(rig.read('.rc1/runs.jsonl').split('\n')[3]!) as RunLine;
    assert.equal(fourth.full, true);
    assert.equal(runs(rig)[3]!.outcomes.c!.outcome, 'restored');
    assert.deepEqual(r1!.params, { 'copy.suffix': '!', 'gate.min': 3 });
    assert.equal(r1!.checks.g![0]!.name, 'length');
    assert.equal(r1!.checks.g![0]!.value, 8);
    assert.deepEqual(r1!.metrics['reports/g.json'], { length: 8 });
    assert.deepEqual(r2!.metrics['reports/g.json'], { length: 14 });
    assert.deepEqual(r3!.metrics, r2!.metrics); // carried over by the no-op
    assert.equal(r1!.command, 'rc1-build -j 1');

    const log = JSON.parse(rig.run(['log', '--json']).stdout) as {
      runs: { id: number; ran: number; upToDate: number }[];
    };
    assert.deepEqual(
      log.runs.map((r) => [r.id, r.ran, r.upToDate]),
      [
        [4, 0, 6],
        [3, 0, 7],
        [2, 4, 3],
        [1, 7, 0],
      ],
    );
    const text = rig.run(['log']).stdout.split('\n');
    assert.match(text[0]!, /^run\s+started \(UTC\)\s+commit\s+profile\s+exit\s+ran/);
    assert.match(text[3]!, new RegExp(`^2\\s+\\S+ \\S+\\s+${head.slice(0, 9)}\\+dirty\\s+default\\s+0\\s+4\\s+0\\s+3`));
  } finally {
    rig.cleanup();
  }
});

test('the run history keeps the newest runs within its retention', () => {
  const rig = standardRig();
  try {
    for (let i = 0; i < 6; i++) {
      if (i === 3) rig.write('src/c.txt', 'changed\n');
      assert.equal(rig.run([], { RC1_HISTORY_KEEP: '2' }).code, 0);
    }
    const all = runs(rig);
    const ids = all.map((r) => r.id);
    // the first run kept was made whole: every target's state is there
    assert.deepEqual(Object.keys(all[0]!.state).sort(), ['a', 'after_gate', 'after_sq', 'b', 'c', 'g', 'sq']);
    assert.ok(ids.length <= 4, `kept ${ids.length} runs`);
    assert.equal(ids[ids.length - 1], 6);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );
  } finally {
    rig.cleanup();
  }
});

test('diff between two runs with one param changed lists the param, the outputs that changed and the check and metric with deltas', () => {
  const rig = metricsRig();
  try {
    assert.equal(rig.run(['-j', '1']).code, 0);
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!!!"\ngate:\n  min: 3\nunrelated: 1\n');
    assert.equal(rig.run(['-j', '1']).code, 0);
    const d = JSON.parse(rig.run(['diff', '--json']).stdout) as {
      a: { id: number };
      b: { id: number };
      params: { key: string; a: unknown; b: unknown }[];
      outputs: { target: string }[];
      checks: { gate: string; check: string; delta: number; changed: boolean }[];
      metrics: { file: string; key: string; a: number; b: number; delta: number }[];
    };
    assert.deepEqual([d.a.id, d.b.id], [1, 2]);
    assert.deepEqual(d.params, [{ key: 'copy.suffix', a: '!', b: '!!!' }]);
    // every copy target's output gets the longer suffix; sq (no params) is unchanged
    assert.deepEqual([...new Set(d.outputs.map((o) => o.target))].sort(), [
      'a',
      'after_gate',
      'after_sq',
      'b',
      'c',
      'g',
    ]);
    assert.deepEqual(
      d.checks.map((c) => [c.gate, c.check, c.delta, c.changed]),
      [['g', 'length', 4, true]],
    );
    assert.deepEqual(d.metrics, [{ file: 'reports/g.json', key: 'length', a: 8, b: 12, delta: 4, changed: true }]);
    const text = rig.run(['diff']).stdout;
    assert.match(text, /^rc1-build diff: run 1 \(.*\) → run 2 \(.*\)\n/);
    assert.match(text, /\nparam\s+copy\.suffix\s+"!"\s+"!!!"\s*\n/);
    assert.match(text, /\ncheck\s+g: length\s+8 >= 3 pass\s+12 >= 3 pass\s+\+4\n/);
    assert.match(text, /\nmetric\s+reports\/g\.json: length\s+8\s+12\s+\+4\n/);
    assert.doesNotMatch(text, /output\s+sq: /);
    // explicit ids, in either order
    const back = JSON.parse(rig.run(['diff', '2', '1', '--json']).stdout) as { params: { a: unknown; b: unknown }[] };
    assert.deepEqual(back.params, [{ key: 'copy.suffix', a: '!!!', b: '!' }]);
    const bad = rig.run(['diff', '7']);
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /"7" names no run \(ids 1\.\.2\) and no git revision/);
  } finally {
    rig.cleanup();
  }
});

test('diff names runs by git revision: the newest run built at that commit', () => {
  const rig = metricsRig();
  try {
    git(rig, 'init', '-q');
    git(rig, 'add', '-A');
    git(rig, 'commit', '-qm', 'one');
    assert.equal(rig.run(['-j', '1']).code, 0);
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 4\nunrelated: 1\n');
    git(rig, 'commit', '-qam', 'two');
    assert.equal(rig.run(['-j', '1']).code, 0);
    assert.equal(rig.run(['-j', '1']).code, 0);
    const d = JSON.parse(rig.run(['diff', 'HEAD~1', 'HEAD', '--json']).stdout) as {
      a: { id: number };
      b: { id: number };
      params: unknown[];
    };
    assert.deepEqual([d.a.id, d.b.id], [1, 3]);
    assert.deepEqual(d.params, [{ key: 'gate.min', a: 3, b: 4 }]);
  } finally {
    rig.cleanup();
  }
});

test('why on a three-level artifact shows each producer, its rule, params and input hashes, the run that built it, and the root cause once stale', () => {
  const rig = standardRig();
  try {
    assert.equal(rig.run(['-j', '1']).code, 0);
    const j = JSON.parse(rig.run(['why', 'out/after_gate.txt', '--json']).stdout) as {
      artifact: { path: string; sha256: string };
      lineage: {
        target: string;
        rule: { path: string; name: string; version: number };
        codeHash: string;
        params: Record<string, unknown>;
        built: { run: { id: number } };
        status: { upToDate: boolean };
        inputs: {
          path: string;
          sha256: string;
          producer: string | null;
          lineage?:
            | {
                target: string;
                inputs: {
                  path: string;
                  producer: string | null;
                  lineage?: { target: string; inputs: { path: string; producer: string | null; sha256: string }[] };
                }[];
              }
            | 'above';
        }[];
      };
    };
    const manifest = JSON.parse(rig.read('reports/build/manifest.json')) as {
      artifacts: { path: string; sha256: string }[];
    };
    const sha = (p: string): string => manifest.artifacts.find((a) => a.path === p)!.sha256;
    assert.deepEqual(j.artifact, {
      path: 'out/after_gate.txt',
      sha256: sha('out/after_gate.txt'),
      source: false,
      readBy: [],
    });
    const l1 = j.lineage;
    assert.equal(l1.target, 'after_gate');
    assert.deepEqual(l1.rule, { path: 'rules/copy.ts', name: 'copy', version: 1 });
    assert.match(l1.codeHash, /^[0-9a-f]{64}$/);
    assert.deepEqual(l1.params, { 'copy.suffix': '!' });
    assert.equal(l1.built.run.id, 1);
    assert.equal(l1.status.upToDate, true);
    const b = l1.inputs.find((i) => i.path === 'out/b.txt')!;
    assert.equal(b.producer, 'b');
    assert.equal(b.sha256, sha('out/b.txt'));
    assert.equal(l1.inputs.find((i) => i.path === 'reports/g.json')!.producer, 'g');
    const l2 = b.lineage as Exclude<typeof b.lineage, 'above' | undefined>;
    assert.equal(l2.target, 'b');
    const a = l2.inputs[0]!;
    assert.deepEqual([a.path, a.producer], ['out/a.txt', 'a']);
    const l3 = a.lineage!;
    assert.equal(l3.target, 'a');
    assert.deepEqual(
      l3.inputs.map((i) => [i.path, i.producer]),
      [['src/a.txt', null]],
    );
    // the source's hash as built
    const srcSha = JSON.parse(rig.run(['why', 'src/a.txt', '--json']).stdout) as {
      artifact: { sha256: string; source: boolean; readBy: string[] };
    };
    assert.equal(l3.inputs[0]!.sha256, srcSha.artifact.sha256);
    assert.deepEqual(srcSha.artifact.readBy, ['a']);
    // --depth 1: the producer's own inputs are not followed
    const shallow = JSON.parse(rig.run(['why', 'out/after_gate.txt', '--depth', '1', '--json']).stdout) as typeof j;
    const sb = shallow.lineage.inputs.find((i) => i.path === 'out/b.txt')!.lineage as Exclude<
      typeof b.lineage,
      'above' | undefined
    >;
    assert.equal(sb.inputs[0]!.lineage, undefined);

    rig.write('src/a.txt', 'edited\n');
    const text = rig.run(['why', 'out/after_gate.txt']).stdout;
    assert.match(text, /^out\/after_gate\.txt {2}[0-9a-f]{12} {2}output of after_gate\ntarget after_gate\n/);
    assert.match(text, /\n {2}rule {4}rules\/copy\.ts \(copy v1\), code [0-9a-f]{12} \(\d+ files\)\n/);
    assert.match(text, /\n {2}built {3}\S+, ran \d+ms, run 1 \(rc1-build -j 1\)\n/);
    assert.match(text, /\n {2}status {2}STALE: src\/a\.txt changed \(via a → b\)\n/);
    assert.match(text, /\n {2}params {2}copy\.suffix = "!"\n/);
    assert.match(text, /\n {2}inputs {2}src: out\/b\.txt {2}[0-9a-f]{12} {2}← b\n {6}target b\n/);
    assert.match(text, /\n {14}inputs {2}src: src\/a\.txt {2}[0-9a-f]{12} {2}\(source\)\n/);
    assert.match(text, /\n {10}src: reports\/g\.json {2}[0-9a-f]{12} {2}← g\n {6}gate g\n/);
    assert.match(text, /\n {8}inputs {2}src: out\/b\.txt {2}[0-9a-f]{12} {2}← b \(shown above\)\n/);

    const unknown = rig.run(['why', 'out/nope.txt']);
    assert.equal(unknown.code, 64);
    assert.match(unknown.stderr, /out\/nope\.txt is no target, no output and no input of this pipeline/);
    assert.ok(fs.existsSync(path.join(rig.dir, '.rc1', 'runs.jsonl')));
  } finally {
    rig.cleanup();
  }
});
