// Console, --explain and status output, compared byte for byte with test/golden/*.txt after
// normalising durations and the temp dir (ninja's output_test). UPDATE_GOLDEN=1 rewrites them.
//   src/a.txt --> a --> b --> g (gate) --> after_gate
//   src/c.txt --> c
//   src/w.txt --> sq --> after_sq
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, standardRig, type TestRig } from '../helpers/rig.ts';

function normalise(rig: TestRig, s: string): string {
  return s.split(rig.dir).join('<ws>').replace(/\b\d+(\.\d+)?(ms|s)\b/g, '<t>');
}

function golden(name: string, actual: string): void {
  const file = path.join(REPO, 'test', 'golden', `${name}.txt`);
  if (process.env.UPDATE_GOLDEN === '1' || !fs.existsSync(file)) {
    if (process.env.CI === 'true' && !fs.existsSync(file)) assert.fail(`golden file ${file} is missing`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, actual);
  }
  assert.equal(actual, fs.readFileSync(file, 'utf8'));
}

test('console output of a first build, an incremental build with --explain, and status match the golden files', () => {
  const rig = standardRig();
  try {
    golden('first-build', normalise(rig, rig.run(['-j', '1']).stdout));
    rig.write('src/a.txt', 'hello again\n');
    rig.write('src/w.txt', 'some words  \n');
    golden('explain-build', normalise(rig, rig.run(['-j', '1', '--explain']).stdout));
    rig.write('src/c.txt', 'sea\n');
    rig.write('configs/default.yaml', 'copy:\n  suffix: "!"\ngate:\n  min: 50\nunrelated: 1\n');
    golden('status', normalise(rig, rig.run(['status']).stdout));
    golden('gate-failure', normalise(rig, rig.run(['-j', '1', '-k']).stdout));
    golden('status-after-gate-failure', normalise(rig, rig.run(['status']).stdout));
  } finally { rig.cleanup(); }
});
