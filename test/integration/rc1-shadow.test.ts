// The shipped RC1 pipeline's first target, end to end through the CLI, in a copy of the project:
//   data/raw/** --> shadow_set --> data/shadow_eval_245.jsonl, reports/rc1/sample_manifest.json
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, TestRig } from '../helpers/rig.ts';

function projectCopy(): TestRig {
  const rig = new TestRig();
  for (const p of ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'])
    fs.cpSync(path.join(REPO, p), path.join(rig.dir, p), { recursive: true });
  return rig;
}

test('shadow_set writes 245 scenarios stratified .45/.30/.25, 30 % needing clarification, every band present, and a manifest of the held-aside items', () => {
  const rig = projectCopy();
  try {
    const r = rig.run(['shadow_set']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const lines = rig
      .read('data/shadow_eval_245.jsonl')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 245);
    const count = (t: string): number => lines.filter((s) => s.task === t).length;
    assert.deepEqual([count('hotpotqa'), count('strategyqa'), count('gsm8k')], [110, 74, 61]);
    for (const s of lines) {
      for (const k of [
        'id',
        'task',
        'source_id',
        'role',
        'style',
        'template_id',
        'messages',
        'context',
        'tools',
        'gold_answer',
        'needs_clarification',
        'clarification',
        'reference',
        'difficulty',
      ])
        assert.ok(k in s, k);
    }
    assert.equal(lines.filter((s) => s.needs_clarification).length, 73);
    assert.deepEqual(
      ['easy', 'medium', 'hard'].map((b) => lines.filter((s) => s.difficulty === b).length),
      [61, 110, 74],
    );
    const m = JSON.parse(rig.read('reports/rc1/sample_manifest.json'));
    assert.equal(m.source_ids.length, 245);
    assert.deepEqual([...m.source_ids].sort(), m.source_ids);
    assert.deepEqual(new Set(m.source_ids), new Set(lines.map((s) => s.source_id)));
    assert.equal(m.seed, 20250820);
  } finally {
    rig.cleanup();
  }
});

test('shadow_set is byte-identical across workspaces, and a new seed rebuilds it with the reason shown', () => {
  const a = projectCopy();
  const b = projectCopy();
  try {
    assert.equal(a.run(['shadow_set']).code, 0);
    assert.equal(b.run(['shadow_set']).code, 0);
    assert.equal(a.read('data/shadow_eval_245.jsonl'), b.read('data/shadow_eval_245.jsonl'));
    assert.equal(a.read('reports/rc1/sample_manifest.json'), b.read('reports/rc1/sample_manifest.json'));
    a.write('configs/default.yaml', a.read('configs/default.yaml').replace('seed: 20250820', 'seed: 7'));
    const r = a.run(['shadow_set', '--explain']);
    assert.match(r.stdout, /rc1 explain: shadow_set: param shadow\.seed changed: 20250820 → 7/);
    assert.notEqual(a.read('data/shadow_eval_245.jsonl'), b.read('data/shadow_eval_245.jsonl'));
  } finally {
    a.cleanup();
    b.cleanup();
  }
});

test('a malformed raw record fails shadow_set with file, line and field, or is skipped and counted', () => {
  const rig = projectCopy();
  try {
    const file = 'data/raw/gsm8k/gsm8k_train_full.jsonl';
    const lines = rig.read(file).split('\n');
    lines[16] = JSON.stringify({ question: 'How many?', answer: 'no final line here' });
    rig.write(file, lines.join('\n'));
    const r = rig.run(['shadow_set']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /data\/raw\/gsm8k\/gsm8k_train_full\.jsonl:17: answer: expected .*####/);
    assert.doesNotMatch(r.stdout, /\n\s+at /, 'an expected data error prints no stack trace');
    assert.ok(!rig.exists('data/shadow_eval_245.jsonl'));
    rig.write('configs/default.yaml', rig.read('configs/default.yaml').replace('on_error: fail', 'on_error: skip'));
    const s = rig.run(['shadow_set']);
    assert.equal(s.code, 0, s.stdout);
    assert.equal(JSON.parse(rig.read('reports/rc1/sample_manifest.json')).skipped, 1);
  } finally {
    rig.cleanup();
  }
});
