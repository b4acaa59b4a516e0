// Console, --explain and status output, compared byte for byte with test/golden/*.txt after
// normalising durations and the temp dir (ninja's output_test). The test never writes them: a
// difference leaves the actual output in $TMPDIR/rc1-golden-actual/ to review and copy by hand.
//   src/a.txt --> a --> b --> g (gate) --> after_gate
//   src/c.txt --> c
//   src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO, standardRig, type TestRig } from '../helpers/rig.ts';

function normalise(rig: TestRig, s: string): string {
  return s
    .split(rig.dir)
    .join('<ws>')
    .replace(/\b\d+(\.\d+)?(ms|s)\b/g, '<t>');
}

/**
 * Compares with test/golden/<name>.txt; never writes it. On a difference the actual output is
 * written to $TMPDIR/rc1-golden-actual/<name>.txt, so it can be reviewed and copied over by hand.
 */
function golden(name: string, actual: string): void {
  const file = path.join(REPO, 'test', 'golden', `${name}.txt`);
  const expected = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  if (actual === expected) return;
  const out = path.join(os.tmpdir(), 'rc1-golden-actual', `${name}.txt`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, actual);
  assert.equal(
    actual,
    expected,
    `${expected === null ? 'missing' : 'different'} golden file test/golden/${name}.txt; the actual output is in ${out} (review it, then: cp ${out} ${file})`,
  );
}

test('console output of a first build, an incremental build with --explain, and status match the golden files', () => {
  const rig = standardRig();
  try {
    golden('first-build', normalise(rig, rig.run(['-j', '1']).stdout));
    rig.write('src/a.txt', 'hello again\n');
    rig.write('src/w.txt', 'some words  \n');
    golden('dry-run', normalise(rig, rig.run(['-j', '1', '-n']).stdout));
    golden('explain-build', normalise(rig, rig.run(['-j', '1', '--explain']).stdout));
    rig.write('src/c.txt', 'sea\n');
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 50\nunrelated: 1\n');
    golden('status', normalise(rig, rig.run(['status']).stdout));
    golden('gate-failure', normalise(rig, rig.run(['-j', '1', '-k']).stdout));
    golden('status-after-gate-failure', normalise(rig, rig.run(['status']).stdout));
  } finally {
    rig.cleanup();
  }
});
